import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

@Suite("learning the render time and the submit deadline")
struct DeadlineLearningTests {
    static let ms: Int64 = 1_000_000
    static let period = Nanoseconds(16_666_667)

    static func at(_ nanoseconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: nanoseconds) }

    @Test("render time: rises at once to a slower frame, decays by a sixteenth of the difference per faster frame, plus the margin")
    func renderTimeExact() {
        var estimator = RenderTimeEstimator(margin: Nanoseconds(Self.ms))
        #expect(estimator.estimate == nil && estimator.budget == nil)
        estimator.record(Nanoseconds(2 * Self.ms))
        #expect(estimator.estimate == Nanoseconds(2 * Self.ms))
        #expect(estimator.budget == Nanoseconds(3 * Self.ms))
        estimator.record(Nanoseconds(10 * Self.ms))  // a slow frame: at once
        #expect(estimator.estimate == Nanoseconds(10 * Self.ms))
        estimator.record(Nanoseconds(2 * Self.ms))  // 8 ms faster: down by 0.5 ms
        #expect(estimator.estimate == Nanoseconds(9_500_000))
        estimator.record(Nanoseconds(-5))  // clocks that disagree: zero
        #expect(estimator.estimate == Nanoseconds(9_500_000 - 9_500_000 / 16))
        var close = RenderTimeEstimator()
        close.record(Nanoseconds(100))
        close.record(Nanoseconds(99))  // less than 16 ns apart: still one step of 1 ns
        #expect(close.estimate == Nanoseconds(99))
    }

    @Test("render time, any samples: never below the newest, never above the largest, down by at most a sixteenth per frame")
    func renderTimeProperties() async {
        await propertyCheck(count: 500, input: Gen.int64(in: 0...(100 * Self.ms)).array(of: 1...200)) { samples in
            var estimator = RenderTimeEstimator()
            var largest: Int64 = 0
            var previous: Int64?
            for sample in samples {
                estimator.record(Nanoseconds(sample))
                largest = max(largest, sample)
                guard let estimate = estimator.estimate?.value else { Issue.record("no estimate"); return }
                #expect(estimate >= sample && estimate <= largest)
                if let previous, estimate < previous { #expect(previous - estimate <= max(1, (previous - sample) / 16)) }
                previous = estimate
            }
        }
    }

    @Test(
        """
        deadline: leads seen too late (no miss) raise the prior to their median, which one longer lead does not move; a lead at least \
        as long as one that made its target is not counted; they are forgotten after a window of outcomes without one; a bracket 1 ms or narrower is not \
        probed (its top); anything recorded counts as an outcome, and forgetting clears it
        """)
    func tooLateAndResolution() {
        let p = Self.period
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(8 * Self.ms)
        #expect(!learner.hasOutcomes && learner.lead?.lead == Nanoseconds(8 * Self.ms))
        for lead in [12, 12, 16] { learner.recordTooLate(lead: Nanoseconds(Int64(lead) * Self.ms)) }
        #expect(learner.hasOutcomes && learner.effectivePrior == Nanoseconds(12 * Self.ms))
        #expect(learner.lead?.lead == Nanoseconds(12 * Self.ms) && learner.lead?.provenance == .prior)
        // Made with 37 ms: the raised prior is still what is planned; leads seen too late at or
        // over 37 ms contradict it and are not counted.
        let target = Self.at(1_000 * Self.ms)
        learner.record(submitted: Self.at(963 * Self.ms), target: target, presented: target, period: p)
        #expect(learner.lead?.lead == Nanoseconds(12 * Self.ms) && learner.lead?.provenance == .prior)
        learner.recordTooLate(lead: Nanoseconds(40 * Self.ms))
        learner.recordTooLate(lead: Nanoseconds(40 * Self.ms))
        #expect(learner.effectivePrior == Nanoseconds(12 * Self.ms))
        // A window of outcomes with no lead seen too late: the prior is the prior again.
        for _ in 0..<SubmitDeadlineLearner.window {
            learner.record(submitted: Self.at(963 * Self.ms), target: target, presented: target, period: p)
        }
        #expect(learner.effectivePrior == Nanoseconds(8 * Self.ms))
        // Shorter than the prior's: no effect.
        var low = SubmitDeadlineLearner()
        low.prior = Nanoseconds(8 * Self.ms)
        low.recordTooLate(lead: Nanoseconds(7 * Self.ms))
        #expect(low.effectivePrior == Nanoseconds(8 * Self.ms))
        // Missed at 16 ms, made at 17 ms: the bracket is the resolution, planned at its top.
        var narrow = SubmitDeadlineLearner()
        narrow.record(submitted: Self.at(984 * Self.ms), target: target, presented: target + p, period: p)
        narrow.record(submitted: Self.at(983 * Self.ms), target: target, presented: target, period: p)
        #expect(narrow.lead?.lead == Nanoseconds(17 * Self.ms) && narrow.lead?.provenance == .bracketed)
        // Missed at 15 ms, made at 17 ms: wider than the resolution, the middle.
        var wider = SubmitDeadlineLearner()
        wider.record(submitted: Self.at(985 * Self.ms), target: target, presented: target + p, period: p)
        wider.record(submitted: Self.at(983 * Self.ms), target: target, presented: target, period: p)
        #expect(wider.lead?.lead == Nanoseconds(16 * Self.ms) && wider.lead?.provenance == .bracketed)
        low.forgetOutcomes()
        #expect(!low.hasOutcomes && low.effectivePrior == Nanoseconds(8 * Self.ms))
    }

    @Test("deadline: none before a frame made its target; the shortest lead that made it; bracketed by a miss, the middle")
    func deadlineExact() {
        var learner = SubmitDeadlineLearner()
        let target = Self.at(1_000 * Self.ms)
        #expect(learner.deadline(forTarget: target) == nil)
        // A frame that missed teaches nothing to plan with yet.
        learner.record(submitted: Self.at(997 * Self.ms), target: target, presented: target + Self.period, period: Self.period)
        #expect(learner.deadline(forTarget: target) == nil)
        #expect(learner.insufficientLead == Nanoseconds(3 * Self.ms))
        // Made it with 12 ms and 9 ms to spare: 9 ms is known to suffice, 3 ms is not: 6 ms.
        learner.record(submitted: Self.at(988 * Self.ms), target: target, presented: target, period: Self.period)
        learner.record(submitted: Self.at(991 * Self.ms), target: target, presented: target + Nanoseconds(200_000), period: Self.period)
        #expect(learner.sufficientLead == Nanoseconds(9 * Self.ms))
        let deadline = learner.deadline(forTarget: Self.at(2_000 * Self.ms))
        #expect(deadline == .init(time: Self.at(1_994 * Self.ms), lead: Nanoseconds(6 * Self.ms), provenance: .bracketed))
        // Without the miss: the shortest lead that made it.
        var onlyMade = SubmitDeadlineLearner()
        onlyMade.record(submitted: Self.at(988 * Self.ms), target: target, presented: target, period: Self.period)
        #expect(
            onlyMade.deadline(forTarget: target)
                == .init(
                    time: Self.at(988 * Self.ms), lead: Nanoseconds(12 * Self.ms),
                    provenance: .sufficient))
    }

    @Test("deadline: a latch that moves is followed once the old outcomes leave the window")
    func deadlineFollowsChange() {
        var learner = SubmitDeadlineLearner()
        let p = Self.period
        for k in 0..<Int64(SubmitDeadlineLearner.window) {
            let target = Self.at(k * p.value + 100 * Self.ms)
            learner.record(submitted: target - Nanoseconds(2 * Self.ms), target: target, presented: target, period: p)
        }
        #expect(learner.lead?.lead == Nanoseconds(2 * Self.ms))
        for k in 0..<Int64(SubmitDeadlineLearner.window) {
            let target = Self.at((k + 100) * p.value)
            learner.record(submitted: target - Nanoseconds(8 * Self.ms), target: target, presented: target, period: p)
        }
        #expect(learner.lead?.lead == Nanoseconds(8 * Self.ms))
    }

    @Test(
        """
        deadline: a miss with a lead longer than one that made it (a stall, not the latch) is not counted, under a prior too; a miss \
        that leaves the window still bounds the lead from below, until a frame makes its target with a lead at or below it
        """)
    func contradictingMissIgnored() {
        let p = Self.period
        let target = Self.at(1_000 * Self.ms)
        for prior in [nil, Nanoseconds(8 * Self.ms)] {
            var learner = SubmitDeadlineLearner()
            learner.prior = prior
            learner.record(submitted: target - Nanoseconds(9 * Self.ms), target: target, presented: target, period: p)
            // Submitted 23 ms ahead and shown a period late: the compositor stalled.
            learner.record(submitted: target - Nanoseconds(23 * Self.ms), target: target, presented: target + p, period: p)
            #expect(learner.insufficientLead == nil)
            #expect(learner.lead?.lead == Nanoseconds(prior == nil ? 9 * Self.ms : 8 * Self.ms))
        }
        // A real miss (5 ms) brackets, and still does after 64 more frames that made it with 9 ms.
        for prior in [nil, Nanoseconds(4 * Self.ms)] {
            var learner = SubmitDeadlineLearner()
            learner.prior = prior
            learner.record(submitted: target - Nanoseconds(5 * Self.ms), target: target, presented: target + p, period: p)
            learner.record(submitted: target - Nanoseconds(9 * Self.ms), target: target, presented: target, period: p)
            #expect(learner.lead?.lead == Nanoseconds(7 * Self.ms) && learner.lead?.provenance == .bracketed)
            for _ in 0..<SubmitDeadlineLearner.window {
                learner.record(submitted: target - Nanoseconds(9 * Self.ms), target: target, presented: target, period: p)
            }
            #expect(learner.lead?.lead == Nanoseconds(7 * Self.ms) && learner.lead?.provenance == .bracketed)
            #expect(learner.insufficientLead == Nanoseconds(5 * Self.ms))
            // Made with 5 ms: the latch moved; the miss no longer bounds anything.
            learner.record(submitted: target - Nanoseconds(5 * Self.ms), target: target, presented: target, period: p)
            #expect(learner.insufficientLead == nil)
            #expect(learner.lead?.lead == Nanoseconds((prior == nil ? 5 : 4) * Self.ms))
        }
    }

    @Test(
        """
        deadline: the kept lower bound is the longest miss: a shorter miss later does not lower it when the longer one leaves the \
        window; a change of display forgets it
        """)
    func keptMissIsTheLongest() {
        let p = Self.period
        let target = Self.at(1_000 * Self.ms)
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(8 * Self.ms)
        learner.record(submitted: target - Nanoseconds(10 * Self.ms), target: target, presented: target + p, period: p)
        learner.record(submitted: target - Nanoseconds(20 * Self.ms), target: target, presented: target, period: p)
        learner.record(submitted: target - Nanoseconds(3 * Self.ms), target: target, presented: target + p, period: p)
        for _ in 0..<SubmitDeadlineLearner.window {
            learner.record(submitted: target - Nanoseconds(16 * Self.ms), target: target, presented: target, period: p)
        }
        #expect(learner.insufficientLead == Nanoseconds(10 * Self.ms))
        #expect(learner.lead?.lead == Nanoseconds(13 * Self.ms) && learner.lead?.provenance == .bracketed)
        learner.forgetOutcomes()
        #expect(learner.insufficientLead == nil && learner.lead?.lead == Nanoseconds(8 * Self.ms))
        #expect(learner.lead?.provenance == .prior)
    }

    @Test(
        """
        deadline: a frame shown 13.8 ms late (under 7/8 of a period: the compositor's delay, not its latch, which costs whole \
        refreshes) teaches nothing; 15 ms or a period and 1 ms late is a miss, whatever its phase
        """)
    func offGridLatenessIgnored() {
        let p = Self.period
        let target = Self.at(1_000 * Self.ms)
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(8 * Self.ms)
        learner.record(submitted: target - Nanoseconds(12_300_000), target: target, presented: target, period: p)
        learner.record(submitted: target - Nanoseconds(12_170_000), target: target, presented: target + Nanoseconds(13_800_000), period: p)
        #expect(learner.insufficientLead == nil && learner.lead?.lead == Nanoseconds(8 * Self.ms))
        let fifteenLate = target + Nanoseconds(15 * Self.ms)
        learner.record(submitted: target - Nanoseconds(12_100_000), target: target, presented: fifteenLate, period: p)
        #expect(learner.insufficientLead == Nanoseconds(12_100_000))
        learner.record(submitted: target - Nanoseconds(12_170_000), target: target, presented: target + p + Nanoseconds(Self.ms), period: p)
        #expect(learner.insufficientLead == Nanoseconds(12_170_000))
    }

    @Test("deadline: a frame submitted after its target and shown at it (vkms's late vblank handler) gives the target, never later")
    func submittedAfterTarget() {
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(Self.ms)
        let target = Self.at(1_000 * Self.ms)
        learner.record(submitted: target + Nanoseconds(600_000), target: target, presented: target, period: Self.period)
        #expect(learner.deadline(forTarget: target) == .init(time: target, lead: .zero, provenance: .sufficient))
    }

    @Test("deadline, any outcomes of a latch L: the lead is never below a lead that missed, and once bracketed within the bracket")
    func deadlineProperties() async {
        await propertyCheck(
            count: 500, input: Gen.int64(in: 0...(16 * Self.ms)), Gen.int64(in: -(4 * Self.ms)...(20 * Self.ms)).array(of: 1...60)
        ) {
            latch, leads in
            var learner = SubmitDeadlineLearner()
            let p = Self.period
            var longestMissed: Int64?
            var shortestMade: Int64?
            for (k, lead) in leads.enumerated() {
                let target = Self.at(Int64(k + 10) * p.value)
                let madeIt = lead >= latch
                learner.record(submitted: target - Nanoseconds(lead), target: target, presented: madeIt ? target : target + p, period: p)
                if madeIt { shortestMade = min(shortestMade ?? lead, lead) } else { longestMissed = max(longestMissed ?? lead, lead) }
            }
            guard let planned = learner.lead else {
                #expect(shortestMade == nil)
                return
            }
            #expect(planned.lead.value <= shortestMade ?? .max)
            if let longestMissed { #expect(planned.lead.value > longestMissed) }
            // A plan at the planned lead would have made it, whatever L was.
            #expect(planned.lead.value >= latch || planned.provenance == .bracketed)
        }
    }
}

@Suite("KMS: the submit deadline on every frame")
@MainActor
struct KMSDeadlineTests {
    @Test("none until a frame was shown; then each target less the shortest lead that made it, through a real link")
    func learnedFromFlips() {
        let h = KMSHarness()
        let p = h.period.value
        // Render times of 2, 10 and 6 ms, all within the period: every frame makes the next vblank.
        let times: [Int64] = [2_000_000, 10_000_000, 6_000_000]
        h.renderTime = { n in Nanoseconds(times[n % times.count]) }
        h.start()
        h.run(callbacks: 40)
        #expect(h.frames.first?.deadline == nil)
        for frame in h.frames.dropFirst(8) {
            guard let deadline = frame.deadline else {
                Issue.record("no deadline at refresh \(frame.refreshIndex)")
                continue
            }
            // Submitted 10 ms after its vblank, a period before its target, it made it: the lead
            // is the period less 10 ms (the callbacks begin at their vblanks here).
            #expect(deadline.provenance == .sufficient)
            #expect(deadline.time == frame.targetTimestamp - deadline.lead)
            #expect(deadline.lead.value == p - 10_000_000)
            #expect(deadline.time <= frame.targetTimestamp)
        }
        #expect(h.violations.isEmpty)
    }
}

@Suite("Wayland: the commit deadline on every frame")
struct WaylandDeadlineTests {
    @Test(
        """
        weston-like, each frame committed 1 ms after its callback: none until frame 0's feedback; then each target less the shortest lead \
        that made it
        """
    )
    func learnedFromFeedback() {
        var script = SchedulerScript()
        script.commitAfter = ms
        script.start(at: 0)
        for k in 1...30 {
            script.callback(at: WaylandSchedulerTests.westonQ(k - 1) - 8 * ms)
            script.presented(frame: UInt64(k - 1), at: WaylandSchedulerTests.westonQ(k - 1))
        }
        #expect(script.refreshes[0].event.deadline == nil && script.refreshes[1].event.deadline == nil)
        // Frame 0: committed at 1 ms for a target of one advertised period, presented 3.3 ms after
        // it (under half a period: made). The frames after it had longer leads.
        let lead = Nanoseconds(16_666_667 - ms)
        for refresh in script.refreshes.dropFirst(2) {
            guard let target = refresh.event.targetTimestamp else { continue }
            #expect(
                refresh.event.deadline == FrameDeadline(time: target - lead, lead: lead, provenance: .sufficient),
                "refresh \(refresh.index)")
        }
        // Without commit times nothing is learned.
        let plain = WaylandSchedulerTests.westonRun(frames: 30)
        #expect(plain.refreshes.allSatisfy { $0.event.deadline == nil })
    }
}

@Suite("Wayland: the low-latency policy")
struct WaylandLowLatencyTests {
    static let period: Int64 = 16_666_667

    /// A weston-like compositor: it latches what was committed `latch` before each vblank
    /// (vblanks every ``period``), sends the frame callback of the commit it latched then, and
    /// its presentation feedback at the vblank. The program draws for 2 ms.
    static func run(
        latency: LatencyPolicy, latch: Int64 = 7 * ms, frames: Int = 40, wakeDelay: @escaping (Int) -> Int64 = { _ in 0 }
    ) -> SchedulerScript {
        var script = SchedulerScript()
        script.wakeDelay = wakeDelay
        script.scheduler.latency = latency
        script.commitAfter = 2 * ms
        script.start(at: 0)
        for k in 0..<frames {
            guard let committed = script.commits.last else { break }
            // The first vblank whose latch comes at or after the commit.
            let vblank = (committed + latch + period - 1) / period * period
            script.callback(at: vblank - latch)
            script.presented(frame: UInt64(k), at: vblank)
        }
        return script
    }

    static func target(_ refresh: WaylandRefreshScheduler.Refresh) -> Int64 {
        (refresh.event.targetTimestamp?.nanoseconds ?? 0) - origin
    }

    /// The refreshes (all but the last) whose frames were presented after their targets.
    static func lateRefreshes(_ script: SchedulerScript) -> [Int] {
        (0..<script.refreshes.count - 1).filter { k in
            script.presentedTimes[UInt64(k)].map { $0 > target(script.refreshes[k]) } ?? false
        }
    }

    @Test(
        """
        weston-like (latch 7 ms before the vblank, 2 ms to draw): once the period is measured, each callback starts at its deadline \
        (the 8 ms prior) less the budget (2 ms + 1 ms margin) and the 2 ms allowed for a late wake-up, 13 ms before its target, and \
        every frame is presented at its target; under throughput each starts a period and the latch before it
        """)
    func startsLate() {
        let low = Self.run(latency: .lowLatency)
        #expect(invariantViolations(low).isEmpty)
        // Refreshes 0 to 4 start at once: the period rests on three measured intervals from refresh 5.
        for k in 0..<5 { #expect(low.starts[k] == low.arrivals[k], "refresh \(k)") }
        // The render time the events carry: none before the first commit, then the 2 ms drawn.
        #expect(low.refreshes[0].event.renderEstimate == nil)
        for k in 5..<low.refreshes.count - 1 {
            let refresh = low.refreshes[k]
            #expect(refresh.event.deadline?.provenance == .prior, "refresh \(k)")
            #expect(refresh.event.renderEstimate == Nanoseconds(2 * ms), "refresh \(k)")
            #expect(low.starts[k] == Self.target(refresh) - 13 * ms, "refresh \(k)")
            #expect(low.presentedTimes[UInt64(k)] == Self.target(refresh), "refresh \(k)")
        }
        let throughput = Self.run(latency: .throughput)
        for k in 2..<throughput.refreshes.count - 1 {
            let refresh = throughput.refreshes[k]
            #expect(throughput.starts[k] == Self.target(refresh) - Self.period - 7 * ms, "refresh \(k)")
            #expect(throughput.presentedTimes[UInt64(k)] == Self.target(refresh), "refresh \(k)")
        }
    }

    @Test(
        """
        a timer that wakes 3 ms late once (refresh 10, more than the 2 ms allowed): that lateness is learned at once, and the next \
        callback starts 14 ms before its target (then later as the lateness decays by a sixteenth per on-time wake-up), every frame on time
        """)
    func lateWakeLearned() {
        let script = Self.run(latency: .lowLatency, latch: 7 * ms, frames: 30) { $0 == 10 ? 3 * ms : 0 }
        #expect(invariantViolations(script).isEmpty)
        #expect(script.starts[10] == Self.target(script.refreshes[10]) - 10 * ms)
        #expect(script.presentedTimes[10] == Self.target(script.refreshes[10]))
        #expect(script.starts[11] == Self.target(script.refreshes[11]) - 14 * ms)
        // Refresh 12: refresh 11's on-time wake-up lowered the lateness by 3 ms / 16.
        #expect(script.starts[12] == Self.target(script.refreshes[12]) - 14 * ms + 187_500)
        for k in 10..<script.refreshes.count - 1 {
            #expect(script.presentedTimes[UInt64(k)] == Self.target(script.refreshes[k]), "refresh \(k)")
        }
    }

    @Test(
        """
        a compositor that latches earlier than the prior and the allowances (12 ms) and calls back when it latches: the first frames start \
        at once, the callbacks show 12 ms too late without a miss, that becomes the prior, and no frame misses
        """)
    func earlyLatchBecomesThePrior() {
        let script = Self.run(latency: .lowLatency, latch: 12 * ms, frames: 60)
        #expect(invariantViolations(script).isEmpty)
        #expect(Self.lateRefreshes(script).isEmpty)
        // Nothing known before frame 0's feedback: refreshes 0 and 1 start when called back.
        #expect(script.starts[0] == script.arrivals[0] && script.starts[1] == script.arrivals[1])
        #expect(script.refreshes[1].event.deadline?.provenance == .prior)
        for refresh in script.refreshes.dropFirst(2).dropLast() {
            #expect(refresh.event.deadline?.lead == Nanoseconds(12 * ms) && refresh.event.deadline?.provenance == .prior)
        }
    }
}

extension WaylandLowLatencyTests {
    @Test(
        """
        a compositor that latches 19 ms before the vblank (weston 10's repaint), 200 frames: only the two start-up frames miss, as under \
        throughput (the rhythm's first prediction is a vblank too early); no planned frame misses: the 19 ms the callbacks show too late \
        is the prior
        """)
    func westonTenLatchNoMisses() {
        let script = Self.run(latency: .lowLatency, latch: 19 * ms, frames: 200)
        let throughput = Self.run(latency: .throughput, latch: 19 * ms, frames: 200)
        #expect(invariantViolations(script).isEmpty)
        #expect(Self.lateRefreshes(script) == [0, 1] && Self.lateRefreshes(throughput) == [0, 1])
        let last = script.refreshes[script.refreshes.count - 2].event.deadline
        #expect(last?.provenance == .prior && last?.lead == Nanoseconds(19 * ms))
    }
}

extension WaylandLowLatencyTests {
    /// A compositor that latches what was committed `latch` before each vblank and sends that
    /// commit's frame callback then, its feedback at the vblank; except that the callback of the
    /// commit shown at a vblank in `lateAt` (counted in periods) comes `lateBy` after that vblank,
    /// after its feedback (kwin's, when its compositing ran late). The program draws for
    /// `render`. Returns the script and the vblank each frame was shown at.
    static func lateCallbacks(
        latency: LatencyPolicy, latch: Int64 = 2 * ms, render: Int64 = ms, lateAt: Set<Int64>, lateBy: Int64 = ms, frames: Int = 40
    ) -> (SchedulerScript, [Int64]) {
        var script = SchedulerScript()
        script.scheduler.latency = latency
        script.commitAfter = render
        script.start(at: 0)
        var vblanks: [Int64] = []
        for k in 0..<frames {
            guard let committed = script.commits.last else { break }
            let vblank = (committed + latch + period - 1) / period * period
            vblanks.append(vblank)
            if lateAt.contains(vblank / period) {
                script.presented(frame: UInt64(k), at: vblank)
                script.callback(at: vblank + lateBy)
            } else {
                script.callback(at: vblank - latch)
                script.presented(frame: UInt64(k), at: vblank)
            }
        }
        return (script, vblanks)
    }

    @Test(
        """
        kwin-like (latch 2 ms before the vblank), one frame callback late, after its feedback: low latency still shows a frame at \
        every vblank, each at its target; the refresh after the late callback targets the next vblank, and the one after it the \
        vblank after that (the depth alone predicted one vblank too far, then the waiting frame's)
        """)
    func lateCallbackKeepsEveryRefresh() {
        let (script, vblanks) = Self.lateCallbacks(latency: .lowLatency, lateAt: [20])
        #expect(invariantViolations(script).isEmpty)
        for k in 8..<vblanks.count - 1 {
            #expect(vblanks[k + 1] == vblanks[k] + Self.period, "frame \(k + 1) at \(vblanks[k + 1])")
            #expect(Self.target(script.refreshes[k]) == vblanks[k], "refresh \(k)")
        }
        // Under throughput the same late callback costs no refresh either (each frame starts at once).
        let (throughput, shown) = Self.lateCallbacks(latency: .throughput, lateAt: [20])
        for k in 8..<shown.count - 1 { #expect(shown[k + 1] == shown[k] + Self.period, "frame \(k + 1)") }
        #expect(invariantViolations(throughput).isEmpty)
    }

    @Test(
        """
        low latency, any latch (0.5–10 ms), render time (0.2–6 ms) and late callbacks: targets keep the invariants; once the \
        period is measured (from refresh 8) each is a later refresh than the frame before's (FIFO); every deadline is at or before \
        its target, and a planned start leaves the render estimate before the deadline
        """)
    func lateCallbackProperties() async {
        await propertyCheck(
            count: 300, input: Gen.int64(in: (ms / 2)...(10 * ms)), Gen.int64(in: (ms / 5)...(6 * ms)),
            Gen.int64(in: 8...50).array(of: 0...8), Gen.int64(in: (ms / 10)...(8 * ms))
        ) { latch, render, late, lateBy in
            let (script, _) = Self.lateCallbacks(
                latency: .lowLatency, latch: latch, render: render, lateAt: Set(late), lateBy: lateBy, frames: 60)
            let problems = invariantViolations(script)
            #expect(problems.isEmpty, "\(problems.prefix(3))")
            for k in 9..<script.refreshes.count {
                #expect(Self.target(script.refreshes[k]) >= Self.target(script.refreshes[k - 1]) + Self.period / 2, "refresh \(k)")
            }
            for (k, refresh) in script.refreshes.enumerated() {
                guard let deadline = refresh.event.deadline else { continue }
                #expect(deadline.time.nanoseconds - origin <= Self.target(refresh), "refresh \(k)")
                if script.starts[k] != script.arrivals[k], let estimate = refresh.event.renderEstimate {
                    #expect(script.starts[k] <= deadline.time.nanoseconds - origin - estimate.value, "refresh \(k)")
                }
            }
        }
    }
}
