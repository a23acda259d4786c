import DisplayLinkCore
import DisplayLinkWaylandTesting
import ForeignSources
import Testing

/// A source fed with the presentations the program reports: the times are the program's, so the
/// values are exact.
@Suite("The link fed with the program's presentations")
@MainActor
struct FedFrameSourceTests {
    nonisolated static let period = Nanoseconds(16_666_667)

    /// A fed source with one link that records its callbacks and submits a frame in each, at the
    /// time `submitAt(frame)` gives (nil: now).
    @MainActor
    final class Client {
        let source: FedFrameSource
        var link: DisplayLink?
        var frames: [DisplayFrame] = []
        var actions: [FedFrameSource.SubmitAction] = []
        var feedback: [PresentationFeedback] = []
        var submitAt: (DisplayFrame) -> MonotonicInstant? = { _ in nil }
        var submits = true

        init(latency: LatencyPolicy = .throughput) throws {
            source = try FedFrameSource(refreshPeriod: FedFrameSourceTests.period, latency: latency)
            // Every presentation is reported here, however slowly the test runs.
            source.lostPresentationTimeout = Nanoseconds(3_600_000_000_000)
        }

        func start() {
            let link = DisplayLink(source: source, target: self) { client, link in
                client.frames.append(link.frame)
                guard client.submits else { return }
                client.actions.append(client.source.willSubmit(at: client.submitAt(link.frame)))
            }
            link.stallPolicy = .realGap
            link.presentationHandler = { [weak self] in self?.feedback.append($0) }
            self.link = link
        }
    }

    @Test("each reported flip brings the next callback at once, stamped with the flip's time and sequence; targets a period on")
    func flipsDriveCallbacks() async throws {
        let client = try Client()
        // Each frame submitted a millisecond after its vblank: decisions from the reported times
        // alone (the first frame's vblank is the start's estimate, now).
        client.submitAt = { frame in frame.timestamp + Nanoseconds(1_000_000) }
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        let first = try #require(client.frames.first)
        #expect(first.delta == .zero)
        #expect(first.provenance == .frameCallbackEstimate)
        #expect(client.actions == [.presentNow])
        var flip = MonotonicInstant.now() + Self.period
        for k in 0..<30 {
            client.source.presented(at: flip, sequence: 500 + UInt64(k))
            let frame = try #require(client.frames.last)
            #expect(client.frames.count == k + 2)
            #expect(frame.timestamp == flip)
            #expect(frame.sequence == 500 + UInt64(k))
            #expect(frame.provenance == .hardwareVBlank)
            #expect(frame.duration == Self.period)
            #expect(frame.targetTimestamp == flip + Self.period)
            if k > 0 { #expect(frame.delta == Self.period && frame.missedFrames == 0) }
            flip = flip + Self.period
        }
        // The frames presented are reported back, each at the time the program said.
        #expect(client.feedback.count == 30)
        #expect(client.actions.allSatisfy { $0 == .presentNow })
    }

    @Test("a skipped vblank is one missed frame; a sequence that goes back starts a new rhythm without a trap")
    func missedAndBackwards() async throws {
        let client = try Client()
        client.submitAt = { frame in frame.timestamp + Nanoseconds(1_000_000) }
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        let base = MonotonicInstant.now() + Self.period
        client.source.presented(at: base, sequence: 100)
        client.source.presented(at: base + Self.period * 2, sequence: 102)
        #expect(client.frames.last?.missedFrames == 1)
        #expect(client.frames.last?.delta == Self.period * 2)
        // Backwards sequence and time: never a trap, timestamps never decrease.
        client.source.presented(at: base + Self.period, sequence: 7)
        client.source.presented(at: base + Self.period * 4, sequence: 9)
        for (a, b) in zip(client.frames, client.frames.dropFirst()) {
            #expect(b.timestamp >= a.timestamp)
            #expect(b.targetTimestamp >= a.targetTimestamp)
        }
    }

    @Test("a frame submitted after its vblank passed: the next is drawn at once and presented after the pending one")
    func lateFrameHoldsTheNext() async throws {
        let client = try Client()
        // Virtual time for the source's own clock reads: the next vblank is read as it would be.
        let clock = VirtualClock()
        client.source.clock = { clock.now }
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        let base = clock.now + Self.period
        clock.now = base + Nanoseconds(1_000_000)
        client.source.presented(at: base, sequence: 10)  // the first frame shown; callback 2 runs now
        // Callback 3 (for the vblank at base + p) submits its frame after the next vblank passed.
        clock.now = base + Self.period + Nanoseconds(1_000_000)
        client.submitAt = { _ in base + FedFrameSourceTests.period * 2 + Nanoseconds(2_000_000) }
        client.source.presented(at: base + Self.period, sequence: 11)
        clock.now = base + Self.period * 2 + Nanoseconds(3_000_000)
        client.submitAt = { _ in nil }
        // The next callback starts from the main queue at once, for the vblank at base + 2p while
        // the late frame's flip is pending; its frame waits for that presentation.
        #expect(await eventually(within: .seconds(30)) { client.actions.count >= 4 })
        #expect(client.actions.count == 4)
        #expect(client.actions.last == .presentAfterPending)
        let last = try #require(client.frames.last)
        #expect(last.timestamp == base + Self.period * 2)
        #expect(last.targetTimestamp - last.timestamp == Self.period * 2)
    }

    @Test("a callback that submits nothing is followed by one at the next predicted vblank, marked an estimate")
    func idleTicks() async throws {
        let client = try Client()
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        // The first frame was submitted (the mode set); the ones after it are not.
        client.submits = false
        client.source.presented(at: .now(), sequence: 1)
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 6 })
        let ticks = client.frames[3...]
        #expect(ticks.allSatisfy { $0.provenance == .frameCallbackEstimate }, "\(ticks.map(\.provenance))")
        for (a, b) in zip(client.frames, client.frames.dropFirst()) {
            #expect(b.timestamp > a.timestamp && b.delta == b.timestamp - a.timestamp)
        }
        // Ticks fall on the reported rhythm: whole periods after the last presentation reported.
        let reported = client.frames[1].timestamp
        for frame in ticks { #expect((frame.timestamp - reported).value % Self.period.value == 0) }
        #expect(client.source.predictedTickCount >= 4)
        client.link?.invalidate()
    }

    @Test("pause and resume: the first callback after the resume has delta 0")
    func pauseResume() async throws {
        let client = try Client()
        client.submitAt = { frame in frame.timestamp + Nanoseconds(1_000_000) }
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        var flip = MonotonicInstant.now()
        for k in 0..<3 {
            client.source.presented(at: flip, sequence: UInt64(k + 1))
            flip = flip + Self.period
        }
        client.link?.isPaused = true
        client.source.presented(at: flip, sequence: 4)
        let paused = client.frames.count
        client.link?.isPaused = false
        flip = flip + Self.period * 10
        #expect(await eventually(within: .seconds(30)) { client.frames.count > paused })
        #expect(client.frames[paused].delta == .zero)
    }

    @Test("a presentation never reported is taken as lost after the timeout: the link goes on from predicted vblanks")
    func lostPresentation() async throws {
        let client = try Client()
        client.source.lostPresentationTimeout = Nanoseconds(50_000_000)
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        // The first frame's presentation is never reported (a legacy mode set): the link goes on.
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 3 })
        #expect(client.source.lostPresentationCount >= 1)
        #expect(client.frames[1].delta == client.frames[1].timestamp - client.frames[0].timestamp)
        for (a, b) in zip(client.frames, client.frames.dropFirst()) { #expect(b.timestamp >= a.timestamp) }
        client.link?.invalidate()
    }

    @Test("a period outside 100 µs to 10 s is refused with a typed error")
    func invalidPeriod() {
        #expect(throws: FedSourceError.invalidPeriod(.zero)) { try FedFrameSource(refreshPeriod: .zero) }
        for period: Int64 in [-5, 99_999, 10_000_000_001, .max, .max / 2 + 1] {
            #expect(throws: FedSourceError.self) { try FedFrameSource(refreshPeriod: Nanoseconds(period)) }
        }
    }

    @Test("reports made from inside a callback are taken after it returns: no recursion, none lost")
    func reportsFromCallbacks() async throws {
        let source = try FedFrameSource(refreshPeriod: Self.period)
        source.lostPresentationTimeout = Nanoseconds(3_600_000_000_000)
        var depth = 0, deepest = 0, frames = 0
        var flip = MonotonicInstant.now()
        let link = DisplayLink(source: source, target: source) { source, _ in
            depth += 1
            deepest = max(deepest, depth)
            frames += 1
            _ = source.willSubmit()
            if frames < 300 {
                // A present-wait loop that learns the presentation while drawing the next frame.
                flip = flip + FedFrameSourceTests.period
                source.presented(at: flip, sequence: UInt64(frames))
            }
            depth -= 1
        }
        #expect(await eventually(within: .seconds(30)) { frames >= 300 })
        #expect(deepest == 1)
        #expect(source.presentationCount == 299)
        link.invalidate()
    }

    @Test("a pause across an idle tick: the link starts again on resume")
    func pauseAcrossIdleTick() async throws {
        let client = try Client()
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        client.submits = false
        client.source.presented(at: .now(), sequence: 1)  // the next callback submits nothing: a tick is due
        client.link?.isPaused = true
        // The tick comes and goes while paused (a few periods).
        let until = MonotonicInstant.now() + Self.period * 4
        _ = await eventually(within: .seconds(30)) { MonotonicInstant.now() >= until }
        let paused = client.frames.count
        client.link?.isPaused = false
        #expect(await eventually(within: .seconds(30)) { client.frames.count > paused + 2 })
    }

    @Test("a held frame whose presentation is never reported is taken as lost too")
    func heldFrameLost() async throws {
        let client = try Client()
        let clock = VirtualClock()
        client.source.clock = { clock.now }
        client.source.lostPresentationTimeout = Nanoseconds(50_000_000)
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        let base = clock.now + Self.period
        clock.now = base + Nanoseconds(1_000_000)
        client.source.presented(at: base, sequence: 10)
        clock.now = base + Self.period + Nanoseconds(1_000_000)
        client.submitAt = { _ in base + FedFrameSourceTests.period * 2 + Nanoseconds(2_000_000) }
        client.source.presented(at: base + Self.period, sequence: 11)  // the late frame; the next is held
        clock.now = base + Self.period * 2 + Nanoseconds(3_000_000)
        client.submitAt = { _ in nil }
        #expect(await eventually(within: .seconds(30)) { client.actions.last == .presentAfterPending })
        // The late frame's completion is reported, the held frame's never is.
        client.source.presented(at: base + Self.period * 3, sequence: 13)
        let count = client.frames.count
        // Real time passes here for the timer; the virtual clock moves past the timeout with it.
        clock.now = clock.now + Nanoseconds(1_000_000_000)
        #expect(await eventually(within: .seconds(30)) { client.source.lostPresentationCount >= 1 && client.frames.count > count })
    }

    @Test("hostile reports: times at the clock's ends, sequences that wrap or are missing: no trap, timestamps never go back")
    func hostileReports() async throws {
        let client = try Client()
        client.submitAt = { frame in frame.timestamp }
        client.start()
        #expect(await eventually(within: .seconds(30)) { client.frames.count >= 1 })
        let times: [Int64] = [1, .max, .max - 1, 0, .min, 5, .max / 2, 1_000_000_000_000]
        let sequences: [UInt64?] = [nil, .max, 0, nil, 3, .max - 1, nil, 7]
        for (time, sequence) in zip(times, sequences) {
            client.source.presented(at: MonotonicInstant(nanoseconds: time), sequence: sequence)
        }
        for (a, b) in zip(client.frames, client.frames.dropFirst()) {
            #expect(b.timestamp >= a.timestamp)
            #expect(b.targetTimestamp >= a.targetTimestamp)
        }
    }
}

/// A clock the test sets.
@MainActor
final class VirtualClock {
    var now = MonotonicInstant.now()
}
