import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

/// A random compositor: each operation is a number whose last digit says what happens and whose
/// other digits are its parameter (0 … 999).
struct RandomCompositor {
    var script: SchedulerScript
    var now: Int64 = 0
    var seq: UInt64 = 1000
    var linkWanted = true

    init(usesPresentation: Bool, fallback: Bool, commitTiming: Bool = false, linkInterval: Int = 1) {
        script = SchedulerScript(
            usesPresentation: usesPresentation, stallTimeout: Nanoseconds(200 * ms),
            fallbackTickInterval: fallback ? Nanoseconds(50 * ms) : nil)
        if commitTiming {
            script.scheduler = WaylandRefreshScheduler(
                configuration: .init(
                    usesPresentation: usesPresentation, stallTimeout: Nanoseconds(200 * ms),
                    fallbackTickInterval: fallback ? Nanoseconds(50 * ms) : nil, timesCommits: true),
                advertisedPeriod: Nanoseconds(16_666_667))
        }
        script.scheduler.linkFrameInterval = linkInterval
        script.start(at: 0)
    }

    /// Outstanding feedback, oldest first.
    var outstanding: [UInt64] { script.slotOfFrame.keys.sorted() }

    mutating func apply(_ op: Int) {
        let kind = op % 10
        let param = Int64(op / 10)
        switch kind {
        case 0, 1, 2:
            // Time passes (0 … 100 ms); the compositor sends the frame callback if one was asked for.
            now += param * 100_000
            if script.scheduler.hasOutstandingFrameCallback { script.callback(at: now) }
        case 3, 4:
            // A frame is presented up to 50 ms ago (any outstanding frame: reordering), with a seq
            // that steps 0–2, goes back, wraps or is unknown.
            let frames = outstanding
            guard !frames.isEmpty else { return }
            let frame = frames[Int(param) % frames.count]
            switch param % 7 {
            case 0: seq = 0
            case 1: seq = seq &- UInt64(param)
            case 2: seq = UInt64.max &- UInt64(param % 3)
            default: seq = seq &+ UInt64(param % 3)
            }
            script.presented(
                frame: frame, at: now - (param % 50) * ms, received: now, sequence: seq,
                refresh: Nanoseconds(param % 4 == 0 ? 0 : 16_666_667),
                flags: param % 5 == 0 ? [] : [.vsync])
        case 5:
            let frames = outstanding
            guard !frames.isEmpty else { return }
            script.discarded(frame: frames[Int(param) % frames.count])
        case 6:
            // The compositor loses a feedback: never answered.
            let frames = outstanding
            guard !frames.isEmpty else { return }
            script.slotOfFrame[frames[Int(param) % frames.count]] = nil
        case 7:
            // The watchdog timer fires after 0 … 999 ms; or (odd) the held-commit timer fires
            // then (it may take the outstanding timed commit as held); or the surface moves to
            // one of three outputs (the commit-timing gate shuts until VSYNC feedback there).
            now += param * ms
            if param % 2 == 0 {
                script.watchdog(at: now)
            } else if param % 4 == 1 {
                _ = script.scheduler.heldCommitCheck(at: MonotonicInstant(nanoseconds: origin + now))
            } else {
                script.scheduler.outputChanged(to: UInt64(param % 3), advertisedPeriod: Nanoseconds(16_666_667))
            }
        case 8:
            // Demand changes; a scheduled start runs at once or after a while.
            if param % 2 == 0 {
                script.stop(at: now)
            } else {
                let scheduled = script.scheduler.demandChanged(true, at: MonotonicInstant(nanoseconds: origin + now))
                if scheduled {
                    now += (param % 5) * ms
                    if let refresh = script.scheduler.startDue(at: MonotonicInstant(nanoseconds: origin + now)) {
                        script.append(refresh)
                    }
                }
            }
        default:
            // A presentation with a wild time (far future, far past, extremes) and a wild seq.
            let frames = outstanding
            guard !frames.isEmpty else { return }
            let wild: [Int64] = [.max, .min, 0, -origin, now + 3_600_000 * ms, now + 50 * ms, now - 7_200_000 * ms, now]
            script.presented(
                frame: frames[Int(param) % frames.count], at: wild[Int(param) % wild.count],
                received: now, sequence: UInt64(truncatingIfNeeded: param) &* 0x9E37_79B9_7F4A_7C15,
                refresh: Nanoseconds(Int64(UInt32.max)), flags: PresentationFlags(rawValue: UInt32(truncatingIfNeeded: param)))
        }
    }
}

extension SchedulerScript {
    mutating func append(_ refresh: Refresh) {
        refreshes.append(refresh)
        if let slot = refresh.feedbackSlot {
            for (frame, old) in slotOfFrame where old == slot { slotOfFrame[frame] = nil }
            slotOfFrame[refresh.index] = slot
        }
    }
}

@Suite("Wayland refresh scheduler properties")
struct WaylandSchedulerProperties {
    static let operations = Gen.int(in: 0...9999).array(of: 0...300)

    @Test(
        """
        under any order of callbacks, feedback (late, reordered, lost, discarded, odd seq), timer firings and demand changes, with or \
        without commit timing (strides, held-commit fallback), refreshes keep the invariants
        """
    )
    func invariantsHold() async {
        await propertyCheck(count: 1000, input: Self.operations, Gen.bool, Gen.bool, Gen.bool, Gen.int(in: 1...4)) {
            ops, usesPresentation, fallback, timed, interval in
            var compositor = RandomCompositor(
                usesPresentation: usesPresentation, fallback: fallback,
                commitTiming: timed, linkInterval: interval)
            for op in ops { compositor.apply(op) }
            let problems = invariantViolations(compositor.script)
            #expect(problems.isEmpty, "\(problems.prefix(5))")
        }
    }

    @Test("the same runs through a real RefreshDispatcher and DisplayLink: frames keep the invariants")
    @MainActor
    func framesKeepInvariants() async {
        await propertyCheck(count: 500, input: Self.operations, Gen.bool, Gen.bool, Gen.bool) { ops, usesPresentation, fallback, timed in
            var compositor = RandomCompositor(
                usesPresentation: usesPresentation, fallback: fallback,
                commitTiming: timed, linkInterval: timed ? 2 : 1)
            for op in ops { compositor.apply(op) }
            for policy in [DisplayLink.StallPolicy.zeroDelta, .realGap] {
                let core = CoreRun(stallPolicy: policy)
                core.run(compositor.script.events)
                #expect(core.frames.count == compositor.script.refreshes.count)
                #expect(core.violations.isEmpty, "\(policy): \(core.violations.prefix(5))")
            }
        }
    }

    @Test("every delivered feedback names a refresh that asked for it, once; each slot is reused only when free or given up")
    func feedbackBookkeeping() async {
        await propertyCheck(count: 500, input: Self.operations) { ops in
            var compositor = RandomCompositor(usesPresentation: true, fallback: true)
            for op in ops { compositor.apply(op) }
            let script = compositor.script
            let asked = Set(script.refreshes.filter { $0.feedbackSlot != nil }.map(\.index))
            let answered = script.delivered.map(\.refreshIndex)
            #expect(Set(answered).isSubset(of: asked))
            #expect(Set(answered).count == answered.count, "a refresh got two outcomes")
            #expect(script.scheduler.outstandingFeedbackCount <= WaylandRefreshScheduler.feedbackCapacity)
            #expect(script.scheduler.feedbackCount == answered.count)
        }
    }

    @Test("presentation feedback with any time, seq and refresh never traps and never stamps an implausible time")
    func wildFeedback() async {
        await propertyCheck(
            count: 1000, input: Gen.int64(in: .min ... .max).array(of: 1...40),
            Gen.uint64(in: .min ... .max).array(of: 1...40)
        ) { times, seqs in
            var script = SchedulerScript()
            script.start(at: 0)
            var now: Int64 = 0
            for (i, time) in times.enumerated() {
                now += 16 * ms
                script.presented(
                    frame: UInt64(i), at: time, received: now, sequence: seqs[i % seqs.count],
                    refresh: Nanoseconds(Int64(UInt32(truncatingIfNeeded: time))))
                script.callback(at: now)
            }
            let problems = invariantViolations(script)
            #expect(problems.isEmpty, "\(problems.prefix(5))")
            for event in script.events where event.provenance == .presentationFeedback {
                let ahead = event.timestamp.nanoseconds.subtractingReportingOverflow(origin + now)
                #expect(!ahead.overflow && ahead.partialValue <= WaylandRefreshScheduler.futureTolerance.value)
            }
        }
    }

    @Test("fallback ticks on virtual time: while stalled, exactly one tick per timer firing, never more often than the interval")
    func fallbackRate() async {
        await propertyCheck(count: 100, input: Gen.int(in: 1...500), Gen.int(in: 1...200), Gen.int(in: 1...100)) {
            stallMs, tickMs, firings in
            var script = SchedulerScript(
                stallTimeout: Nanoseconds(Int64(stallMs) * ms),
                fallbackTickInterval: Nanoseconds(Int64(tickMs) * ms))
            script.start(at: 0)
            let interval = script.scheduler.watchdogInterval.value
            for k in 1...firings { script.watchdog(at: Int64(k) * interval) }
            let ticks = script.refreshes.dropFirst()
            let expected = (1...firings).filter { Int64($0) * interval >= Int64(stallMs) * ms }.count
            #expect(ticks.count == expected)
            #expect(ticks.allSatisfy { $0.event.provenance == .timerFallback })
            let gaps = zip(ticks.dropFirst(), ticks).map { ($0.event.timestamp - $1.event.timestamp).value }
            #expect(gaps.allSatisfy { $0 == interval })
        }
    }
}
