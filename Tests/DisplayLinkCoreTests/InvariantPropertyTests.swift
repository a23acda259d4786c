import DisplayLinkCore
import PropertyBased
import Testing

/// A source that dispatches whatever a test scripts: the core must keep its promises to links
/// whatever a compositor or a kernel says.
@MainActor
final class ScriptedSource: FrameSource {
    let dispatcher = RefreshDispatcher()
}

/// One scripted step: what the source says, or what a program does with its links.
private struct Step: Sendable, CustomStringConvertible {
    var kind: Int  // 0…5 a refresh, 6 pause/resume link 0, 7 rate of link 1, 8 stall policy, 9 a new link
    var time: Int64  // the timestamp's step (negative: backwards)
    var seq: UInt64  // how the sequence moves
    var mode: Int  // sequence mode, target mode, period choice

    var description: String { "(\(kind), \(time), \(seq), \(mode))" }
}

private let stepGen = zip(
    Gen.int(in: 0...9), Gen.int64(in: -40_000_000...90_000_000), Gen.uint64(in: 0...40),
    Gen.int(in: 0...11)
)
.map { Step(kind: $0, time: $1, seq: $2, mode: $3) }

/// Runs a script through a real dispatcher and real links, checking every callback.
@MainActor
private final class InvariantChecker {
    let source = ScriptedSource()
    var links: [DisplayLink] = []
    var previous: [ObjectIdentifier: DisplayFrame] = [:]
    var resumed: Set<ObjectIdentifier> = []
    var now = MonotonicInstant(nanoseconds: 1_000_000_000)
    var given: UInt64 = 100
    var current: RefreshEvent?
    var violations: [String] = []
    var callbacks = 0

    init() { addLink() }

    func addLink() {
        let link = DisplayLink(source: source, target: self) { checker, link in checker.check(link) }
        links.append(link)
    }

    func check(_ link: DisplayLink) {
        callbacks += 1
        let frame = link.frame
        let id = ObjectIdentifier(link)
        guard let event = current else { violations.append("callback outside a dispatch"); return }
        if frame.targetTimestamp <= frame.timestamp { violations.append("target \(frame.targetTimestamp) ≤ timestamp \(frame.timestamp)") }
        if frame.missedFrames < 0 { violations.append("missed \(frame.missedFrames)") }
        if frame.provenance != event.provenance { violations.append("provenance changed") }
        if let last = previous[id] {
            if frame.timestamp < last.timestamp { violations.append("timestamp went back: \(last.timestamp) → \(frame.timestamp)") }
            if frame.targetTimestamp < last.targetTimestamp {
                violations.append("target went back: \(last.targetTimestamp) → \(frame.targetTimestamp)")
            }
            if frame.sequence <= last.sequence { violations.append("sequence did not advance: \(last.sequence) → \(frame.sequence)") }
            let zeroAllowed = resumed.contains(id) || (event.followsStall && link.stallPolicy == .zeroDelta)
            if !(frame.delta == frame.timestamp - last.timestamp || (zeroAllowed && frame.delta == .zero)) {
                violations.append("delta \(frame.delta) ≠ \(frame.timestamp - last.timestamp)")
            }
            if resumed.contains(id) && frame.delta != .zero { violations.append("first delta after resume \(frame.delta)") }
            // Refreshes between two callbacks: the link's interval, plus what it missed.
            let steps = frame.sequence - last.sequence
            let expected = frame.frameInterval.addingReportingOverflow(frame.missedFrames)
            if !event.followsStall && !resumed.contains(id) && (expected.overflow || Int(clamping: steps) != expected.partialValue) {
                violations.append("sequence step \(steps) ≠ interval \(frame.frameInterval) + missed \(frame.missedFrames)")
            }
        } else if frame.delta != .zero {
            violations.append("first delta \(frame.delta)")
        }
        resumed.remove(id)
        previous[id] = frame
    }

    func run(_ steps: [Step]) {
        for step in steps {
            switch step.kind {
            case 0...5: refresh(step)
            case 6:
                let link = links[0]
                link.isPaused.toggle()
                if !link.isPaused { resumed.insert(ObjectIdentifier(link)) }
            case 7: links[links.count - 1].preferredFramesPerSecond = [0, 30, 20, 60, 144][step.mode % 5]
            case 8: links[step.mode % links.count].stallPolicy = step.mode % 2 == 0 ? .zeroDelta : .realGap
            default: if links.count < 4 { addLink() }
            }
        }
    }

    func refresh(_ step: Step) {
        now = now + Nanoseconds(step.time)
        let sequence: UInt64?
        switch step.mode % 6 {
        case 0: sequence = nil  // counted from timestamps
        case 1: given &-= step.seq; sequence = given  // backwards (or repeated)
        case 2: given = UInt64.max &- step.seq; sequence = given  // near the wrap
        default: given &+= step.seq; sequence = given  // forward, by 0…40
        }
        let periods: [Int64] = [16_666_667, 6_944_444, 25_400_000, 0, -5, 33_333_333]
        let period = Nanoseconds(periods[(step.mode / 2) % periods.count])
        let target: MonotonicInstant? =
            switch step.mode % 4 {
            case 0: nil
            case 1: now - Nanoseconds(1_000_000)  // nonsense: before the timestamp
            default: now + Nanoseconds(16_666_667)
            }
        let provenances = TimestampProvenance.allCases
        let event = RefreshEvent(
            timestamp: now, sequence: sequence, refreshPeriod: period, targetTimestamp: target,
            provenance: provenances[Int(step.seq) % provenances.count], followsStall: step.kind == 5)
        current = event
        source.dispatcher.dispatch(event)
        current = nil
    }
}

@MainActor
@Suite("The core's promises hold whatever a source says (property-based)")
struct InvariantPropertyTests {
    @Test(
        "timestamps never decrease, deltas are differences or an allowed zero, sequences advance by interval + missed, targets lie ahead and never go back"
    )
    func invariantsOverRandomScripts() async {
        await propertyCheck(count: 300, input: stepGen.array(of: 1...120)) { steps in
            let checker = InvariantChecker()
            checker.run(steps)
            #expect(checker.violations.isEmpty, "\(checker.violations.prefix(3)) for \(steps)")
        }
    }

    @Test("a sequence that goes backwards is continued from the timestamps: no huge miss counts")
    func sequenceBackwards() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let p = Nanoseconds(16_666_667)
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0, sequence: 1000, refreshPeriod: p, provenance: .presentationFeedback))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p, sequence: 1001, refreshPeriod: p, provenance: .presentationFeedback))
        // The compositor's counter restarts (a new output, say), two refreshes later.
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 3, sequence: 7, refreshPeriod: p, provenance: .presentationFeedback))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 4, sequence: 8, refreshPeriod: p, provenance: .presentationFeedback))
        #expect(frames.map(\.sequence) == [1000, 1001, 1003, 1004])
        #expect(frames.map(\.missedFrames) == [0, 0, 1, 0])
        #expect(frames.map(\.delta) == [.zero, p, p * 2, p])
        _ = link
    }

    @Test("a timestamp earlier than the last is held: delta 0, never negative")
    func timestampBackwards() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let p = Nanoseconds(10_000_000)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0, refreshPeriod: p, provenance: .frameCallbackEstimate))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 2, refreshPeriod: p, provenance: .frameCallbackEstimate))
        // Feedback that arrives late says the real presentation was earlier than the estimate.
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p + Nanoseconds(500), refreshPeriod: p, provenance: .presentationFeedback))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 3, refreshPeriod: p, provenance: .presentationFeedback))
        #expect(frames.map(\.timestamp) == [t0, t0 + p * 2, t0 + p * 2, t0 + p * 3])
        #expect(frames.map(\.delta) == [.zero, p * 2, .zero, p])
        #expect(frames.map(\.sequence) == [1, 3, 4, 5])
        #expect(frames.map(\.missedFrames) == [0, 1, 0, 0])
        #expect(frames.allSatisfy { $0.targetTimestamp > $0.timestamp })
        _ = link
    }

    @Test("a 64-bit sequence about to wrap, and a jump no timestamp allows, are rebased")
    func wrapAndImplausibleJump() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let p = Nanoseconds(16_666_667)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0, sequence: 40, refreshPeriod: p, provenance: .hardwareVBlank))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p, sequence: UInt64.max - 1, refreshPeriod: p, provenance: .hardwareVBlank))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 2, sequence: UInt64.max, refreshPeriod: p, provenance: .hardwareVBlank))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 3, sequence: 0, refreshPeriod: p, provenance: .hardwareVBlank))
        #expect(frames.map(\.sequence) == [40, 41, 42, 43])
        #expect(frames.map(\.missedFrames) == [0, 0, 0, 0])
        _ = link
    }

    @Test("a period of zero or less from a source never traps and still moves targets ahead")
    func nonsensePeriods() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        link.preferredFramesPerSecond = 30
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        for (i, period) in [Int64(0), -16_666_667, 0].enumerated() {
            source.dispatcher.dispatch(
                RefreshEvent(
                    timestamp: t0 + Nanoseconds(Int64(i) * 16_666_667), refreshPeriod: Nanoseconds(period),
                    provenance: .timerFallback))
        }
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0.targetTimestamp > $0.timestamp && $0.missedFrames >= 0 })
        #expect(frames.allSatisfy { $0.duration.value > 0 })
        _ = link
    }

    @Test("a period of zero or less is the last positive one: duration stays the real period")
    func badPeriodKeepsLastGood() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000), p = Nanoseconds(16_666_667)
        for (i, period) in [p.value, 0, -5, p.value / 2].enumerated() {
            source.dispatcher.dispatch(
                RefreshEvent(
                    timestamp: t0 + p * i, refreshPeriod: Nanoseconds(period),
                    provenance: .timerFallback))
        }
        #expect(frames.map(\.duration) == [p, p, p, Nanoseconds(p.value / 2)])
        #expect(frames.map { $0.targetTimestamp - $0.timestamp } == [p, p, p, Nanoseconds(p.value / 2)])
        _ = link
    }

    @Test("at the clock's end a target is the end, not a wrapped negative time")
    func targetAtClockEnd() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let p = Nanoseconds(16_666_667)
        for t in [Int64.max - 2 * p.value, Int64.max - 5] {
            source.dispatcher.dispatch(
                RefreshEvent(
                    timestamp: MonotonicInstant(nanoseconds: t), refreshPeriod: p,
                    provenance: .timerFallback))
        }
        #expect(
            frames.map(\.targetTimestamp) == [MonotonicInstant(nanoseconds: Int64.max - p.value), MonotonicInstant(nanoseconds: Int64.max)])
        #expect(frames.allSatisfy { $0.targetTimestamp >= $0.timestamp && $0.delta.value >= 0 })
        _ = link
    }
}

@Suite("PresentationTimeline on whatever a compositor reports (property-based)")
struct TimelinePropertyTests {
    @Test("wild times, sequences and refreshes never trap; the newest presentation never goes back; every one is counted")
    func wildInputs() async {
        let sample = zip(
            Gen.int64(in: Int64.min...Int64.max), Gen.uint64(in: 0...UInt64.max), Gen.int64(in: -1...50_000_000),
            Gen.int(in: 0...3))
        await propertyCheck(count: 500, input: sample.array(of: 1...60)) { samples in
            var timeline = PresentationTimeline(advertisedPeriod: Nanoseconds(16_666_667))
            for (n, (time, sequence, refresh, mode)) in samples.enumerated() {
                // Mostly plausible (a rhythm with jitter), sometimes anything at all.
                let at =
                    mode == 0
                    ? MonotonicInstant(nanoseconds: time)
                    : (timeline.latest ?? MonotonicInstant(nanoseconds: 1_000_000_000)) + Nanoseconds(abs(time % 40_000_000))
                let before = timeline.latest
                timeline.recordPresentation(
                    at: at, sequence: mode == 1 ? nil : sequence % (mode == 2 ? 1 << 20 : UInt64.max),
                    advertisedRefresh: Nanoseconds(refresh))
                #expect(timeline.presentationCount == n + 1)
                if let before { #expect(timeline.latest! >= before) }
                #expect(timeline.latest! >= at || timeline.latest == before)
                #expect(timeline.advertisedPeriod.value > 0)
            }
        }
    }

    @Test("the running median equals the median of the last 31 values, sorted afresh, after every append")
    func medianMatchesSortedWindow() async {
        // Small ranges make repeated values (the leaving value must be found among equals) and
        // wide ones make overflowing sums of the middle two.
        let sample = zip(Gen.int(in: 0...1), Gen.int64(in: Int64.min...Int64.max))
        await propertyCheck(count: 300, input: sample.array(of: 0...100)) { values in
            var median = RecentMedian()
            var held: [Int64] = []
            for (narrow, wide) in values {
                let value = narrow == 0 ? wide % 4 : wide
                median.append(value)
                held.append(value)
                if held.count > RecentMedian.capacity { held.removeFirst() }
                let sorted = held.sorted(), n = sorted.count
                let expected: Int64
                if n % 2 == 1 {
                    expected = sorted[n / 2]
                } else {
                    let x = sorted[n / 2 - 1], y = sorted[n / 2]
                    let (sum, overflow) = x.addingReportingOverflow(y)
                    expected = overflow ? x / 2 + y / 2 + (x % 2 + y % 2) / 2 : sum / 2
                }
                #expect(median.median == expected)
                #expect(median.count == n)
            }
        }
    }

    @Test("the median of two extreme values does not overflow")
    func medianExtremes() {
        var median = RecentMedian()
        median.append(Int64.max)
        median.append(Int64.max - 2)
        #expect(median.median == Int64.max - 1)
        median.append(Int64.min)
        median.append(Int64.min)
        #expect(median.median == -1)  // the middle two are Int64.min and Int64.max - 2
    }
}

@MainActor
@Suite("Sequence spaces across a restart")
struct RestartSequenceTests {
    @Test("counted refreshes, then a restart with the kernel's counter: the counter is taken up, no misses")
    func restartAdoptsTheSourceCounter() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        let link = DisplayLink(source: source, target: source) { _, link in frames.append(link.frame) }
        let p = Nanoseconds(16_666_667)
        let t0 = MonotonicInstant(nanoseconds: 2_000_000_000)
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0, refreshPeriod: p, provenance: .frameCallbackEstimate))
        source.dispatcher.dispatch(
            RefreshEvent(
                timestamp: t0 + p * 3, sequence: 426, refreshPeriod: p,
                provenance: .hardwareVBlank, followsStall: true))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 4, sequence: 427, refreshPeriod: p, provenance: .hardwareVBlank))
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0 + p * 6, sequence: 429, refreshPeriod: p, provenance: .hardwareVBlank))
        #expect(frames.map(\.sequence) == [1, 426, 427, 429])
        #expect(frames.map(\.missedFrames) == [0, 0, 0, 1])
        #expect(frames.map(\.delta) == [.zero, .zero, p, p * 2])
        _ = link
    }
}
