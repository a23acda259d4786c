import DisplayLinkCore
import Testing
import DisplayLinkWaylandTesting
import WaylandBackend

/// Behaviour under a real weston, asserted so that it holds at any machine speed: no rates, no
/// shares of frames, no wall-clock bounds, no sleeps as assertion windows. Waits are event-driven
/// (a condition, a compositor round trip); their limits only guard against hangs. Rates and
/// timing decisions are tested on virtual time in FrameSchedulerTests.
@MainActor
@Suite("Wayland frame source under a real weston", .serialized)
struct WaylandPacingTests {
    @Test("callbacks before the first frame that draw nothing: the callbacks go on, and the frames after them are presented")
    func nothingDrawnFirst() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston)
        client.drawsNothingFirst = 3
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 10 }, "\(client.frames.count) callbacks")
        #expect(await eventually(within: .seconds(60)) { !client.presentedTimes.isEmpty }, "nothing presented")
        let frames = client.frames
        #expect(frames.prefix(4).allSatisfy { $0.provenance == .frameCallbackEstimate })
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.timestamp >= a.timestamp && b.delta == b.timestamp - a.timestamp && b.sequence > a.sequence)
        }
        print(
            """
            [wayland] nothing drawn in the first 3 callbacks: \(client.frames.count) callbacks, provenance \
            \(client.frames.map(\.provenance.rawValue).suffix(3))
            """)
    }

    @Test("callbacks carry the compositor's exact presentation times; timestamps only move forward")
    func pacedWithPresentationTimestamps() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston)
        #expect(client.connection.presentationClock == .monotonicRaw)
        #expect(client.connection.compositorName == "weston")
        var arrivals: [UInt64: MonotonicInstant] = [:]
        client.start()
        client.link?.presentationHandler = { feedback in
            client.feedback.append(feedback)
            arrivals[feedback.refreshIndex] = MonotonicInstant.now()
        }
        let done = await eventually(within: .seconds(60)) { client.frames.count >= 90 }
        #expect(done, "90 callbacks did not arrive; weston log:\n\(weston.readLog())")
        client.link?.invalidate()
        #expect(client.swapError == nil)

        let frames = client.frames
        let presentedSet = Set(client.presentedTimes)
        #expect(!presentedSet.isEmpty)
        client.expectStampedByPresentations()
        let estimated = frames.filter { $0.provenance != .presentationFeedback }.map(\.refreshIndex)
        print("[wayland] frames stamped by estimate (no new presentation yet): \(estimated)")
        client.expectTimelineInOrder(consecutive: true)
        // Presentation times are on CLOCK_MONOTONIC: none is reported before it happened.
        for feedback in client.feedback {
            if case .presented(let at, _) = feedback.outcome, let arrival = arrivals[feedback.refreshIndex] {
                #expect(at <= arrival)
            }
        }
        // The prediction error, reported (not asserted: it depends on the machine).
        var errors: [Int64] = []
        for feedback in client.feedback {
            guard case .presented(let at, _) = feedback.outcome,
                let frame = frames.first(where: { $0.refreshIndex == feedback.refreshIndex })
            else { continue }
            errors.append(abs((frame.targetTimestamp - at).value))
        }
        errors.sort()
        if !errors.isEmpty {
            print(
                "[wayland] \(frames.count) callbacks, \(presentedSet.count) presented; duration \(frames.last!.duration); "
                    + "median |target − presented| \(Double(errors[errors.count / 2]) / 1e6) ms; "
                    + "learned depth \(client.source.scheduler.learnedDepth.map(String.init) ?? "-")")
        }
    }

    @Test("every frame drawn gets exactly one presentation outcome, tied to its callback")
    func everyFrameGetsItsFeedback() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston)
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 30 })
        client.link?.isPaused = true
        await client.drain()
        let drawn = client.frames.map(\.refreshIndex)
        let outcomes = client.feedback.map(\.refreshIndex)
        #expect(outcomes.sorted() == drawn, "frames \(drawn.count), outcomes \(outcomes.count)")
        #expect(client.source.feedbackCount == drawn.count)
        let discarded = client.feedback.filter { $0.outcome == .discarded }.count
        print("[wayland] \(drawn.count) frames: \(drawn.count - discarded) presented, \(discarded) discarded")
        client.link?.invalidate()
    }

    @Test("without wp_presentation the link runs on frame-callback arrival times, and says so")
    func fallbackWithoutPresentationTime() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston, presentation: false)
        #expect(!client.connection.hasPresentationTime)
        let done = await client.run(within: .seconds(60)) { client.frames.count >= 30 }
        #expect(done)
        client.link?.invalidate()
        #expect(client.feedback.isEmpty)
        #expect(client.source.outstandingFeedbackCount == 0)
        #expect(client.frames.allSatisfy { $0.provenance == .frameCallbackEstimate })
        for i in 1..<client.frames.count {
            #expect(client.frames[i].delta == client.frames[i].timestamp - client.frames[i - 1].timestamp)
            #expect(client.frames[i].delta.value > 0)
        }
        // The period is measured from callback arrivals, not taken from the advertised refresh.
        #expect(client.source.scheduler.isPeriodMeasured)
    }

    @Test("a link whose target draws nothing keeps ticking on empty commits, one per refresh")
    func ticksWithoutDrawing() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston)
        client.draws = false  // draws only its first frame (to map the window)
        let done = await client.run(within: .seconds(60)) { client.frames.count >= 30 }
        #expect(done, "ticking stopped after \(client.frames.count) callbacks")
        client.link?.invalidate()
        #expect(client.source.emptyCommitCount == client.frames.count - 1)
        for i in 1..<client.frames.count {
            #expect(client.frames[i].timestamp > client.frames[i - 1].timestamp)
        }
    }

    @Test("a paused link sends no requests and gets no callbacks; resuming starts with delta 0")
    func pausedLinkIsQuiet() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston)
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 10 })
        client.link?.isPaused = true
        #expect(!client.source.isWatchdogArmed, "a paused source runs no timer")
        // What was in flight completes; then nothing is outstanding.
        await client.drain()
        let frames = client.frames.count
        let requests = client.source.frameRequestCount
        let commits = client.source.emptyCommitCount
        let feedbacks = client.source.feedbackCount
        let wakeups = client.connection.wakeupCount
        // Round trips: the compositor has handled everything we sent, and sends us nothing else.
        let trips = 3
        for _ in 0..<trips { #expect(await roundtrip(client.connection)) }
        #expect(client.frames.count == frames)
        #expect(client.source.frameRequestCount == requests)
        #expect(client.source.emptyCommitCount == commits)
        #expect(client.source.feedbackCount == feedbacks)
        #expect(!client.source.hasOutstandingFrameRequest && !client.source.isWatchdogArmed)
        // Each round trip's answer wakes the loop at most twice (done, delete_id); nothing else does.
        #expect(
            client.connection.wakeupCount - wakeups <= 2 * trips,
            "\(client.connection.wakeupCount - wakeups) wakeups for \(trips) round trips")
        client.link?.isPaused = false
        #expect(client.source.isWatchdogArmed)
        #expect(await eventually(within: .seconds(60)) { client.frames.count >= frames + 5 })
        #expect(client.frames[frames].delta == .zero)
        #expect(client.frames[frames + 1].delta == client.frames[frames + 1].timestamp - client.frames[frames].timestamp)
        #expect(client.source.frameRequestCount > requests)
        client.link?.invalidate()
    }

    @Test("killing the compositor gives a typed error and invalidates the link, without any timer")
    func compositorKilled() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        // A stall timeout far beyond any wait: only the socket can report the failure.
        let client = try PacedClient(on: weston, configuration: .init(stallTimeout: Nanoseconds(3_600_000_000_000)))
        var failure: WaylandError?
        var failedAt = MonotonicInstant.zero
        client.connection.onError = { error in
            failure = error
            failedAt = MonotonicInstant.now()
        }
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 10 })
        let killedAt = MonotonicInstant.now()
        weston.kill()
        #expect(await eventually(within: .seconds(60)) { failure != nil })
        guard let failure else { return }
        if case .connectionLost = failure {} else { Issue.record("unexpected error \(failure)") }
        #expect(client.source.error == failure)
        #expect(client.link?.isValid == false)
        #expect(failure.description.contains("went away"))
        print("[wayland] compositor killed: error after \(Double((failedAt - killedAt).value) / 1e6) ms: \(failure)")
        // Nothing can deliver any more: no link wants refreshes, no timer, nothing outstanding.
        #expect(!client.source.dispatcher.wantsRefreshes)
        #expect(!client.source.isWatchdogArmed)
        #expect(!client.source.hasOutstandingFrameRequest)
        #expect(client.source.outstandingFeedbackCount == 0)
        let frames = client.frames.count
        client.link?.isPaused = false
        #expect(client.frames.count == frames)
    }

    @Test("a minimised window stalls; a fallback timer then ticks, marked as such, with the frame request kept")
    func stallOnMinimize() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(
            on: weston,
            configuration: .init(
                stallTimeout: Nanoseconds(200_000_000),
                fallbackTickInterval: Nanoseconds(100_000_000)))
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 10 })
        client.window.minimize()
        // Once weston has handled the minimise, it paces us no more (weston 10 headless stops frame
        // callbacks for a minimised window): every later refresh is a fallback tick.
        #expect(await roundtrip(client.connection))
        let minimised = client.frames.count
        let stalled = await eventually(within: .seconds(60)) { client.source.isStalled }
        #expect(stalled, "weston kept pacing the minimised window; weston log:\n\(weston.readLog())")
        let ticked = await eventually(within: .seconds(60)) {
            client.frames[minimised...].filter { $0.provenance == .timerFallback }.count >= 2
        }
        #expect(ticked)
        let after = client.frames[minimised...]
        #expect(after.allSatisfy { $0.provenance == .timerFallback }, "\(after.map(\.provenance))")
        #expect(client.source.isStalled)
        #expect(client.source.hasOutstandingFrameRequest, "the request stays, so the compositor can resume pacing us")
        for i in after.indices.dropFirst() {
            #expect(client.frames[i].timestamp > client.frames[i - 1].timestamp)
            #expect(client.frames[i].targetTimestamp > client.frames[i].timestamp)
        }
        client.link?.invalidate()
        #expect(!client.source.isWatchdogArmed)
    }

    @Test("a minimised window without fallback ticks: stalled and silent")
    func stallWithoutFallbackIsSilent() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let client = try PacedClient(on: weston, configuration: .init(stallTimeout: Nanoseconds(200_000_000)))
        #expect(await client.run(within: .seconds(60)) { client.frames.count >= 10 })
        client.window.minimize()
        #expect(await roundtrip(client.connection))
        let minimised = client.frames.count
        #expect(await eventually(within: .seconds(60)) { client.source.isStalled })
        let requests = client.source.frameRequestCount
        for _ in 0..<3 { #expect(await roundtrip(client.connection)) }
        #expect(client.frames.count == minimised)
        #expect(client.source.frameRequestCount == requests)
        #expect(client.source.hasOutstandingFrameRequest)
        #expect(client.source.isStalled)
        client.link?.invalidate()
    }
}

@MainActor
@Suite("Wayland errors")
struct WaylandErrorTests {
    @Test("no compositor at the socket: a typed error that names the socket")
    func cannotConnect() {
        do {
            _ = try WaylandConnection(socket: "/nonexistent/wayland-socket")
            Issue.record("connected to nothing")
        } catch {
            guard case .cannotConnect(let socket, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(socket == "/nonexistent/wayland-socket")
            #expect(error.description.contains("Is a compositor running?"))
        }
    }
}
