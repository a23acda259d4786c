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
