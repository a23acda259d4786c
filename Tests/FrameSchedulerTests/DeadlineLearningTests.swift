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

@Suite("KMS: the low-latency policy")
@MainActor
struct KMSLowLatencyTests {
    static let ms: Int64 = 1_000_000

    @Test("callbacks start at the deadline less the render time and its margin, and the frames still make their targets")
    func startsLate() {
        let h = KMSHarness()
        h.scheduler.latency = .lowLatency
        h.start()
        h.run(callbacks: 40)
        #expect(h.violations.isEmpty)
        // From the second callback (the render time known): the driver's latch (1 ms) and the
        // budget (2 ms drawing + 1 ms margin) before the target.
        for k in 2..<h.frames.count - 1 {
            let frame = h.frames[k]
            #expect(frame.deadline?.provenance == .prior, "callback \(k)")
            #expect(h.callbackStarts[k] == frame.targetTimestamp - Nanoseconds(4 * Self.ms), "callback \(k)")
            #expect(h.presented[frame.refreshIndex]?.time == frame.targetTimestamp, "callback \(k)")
        }
    }

    @Test("a renderer whose budget does not fit before the deadline starts at once, as under throughput")
    func slowStartsAtOnce() {
        let h = KMSHarness()
        h.scheduler.latency = .lowLatency
        h.renderTime = { _ in Nanoseconds(15 * Self.ms) }
        h.start()
        h.run(callbacks: 30)
        #expect(h.violations.isEmpty)
        for k in 2..<h.frames.count { #expect(h.callbackStarts[k] == h.frames[k].timestamp, "callback \(k)") }
    }

    @Test("the learner with a prior: the prior until a frame misses at it, then the bracket; less when a frame made it with less")
    func priorThenBracket() {
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(Self.ms)
        #expect(learner.lead?.lead == Nanoseconds(Self.ms) && learner.lead?.provenance == .prior)
        let p = Nanoseconds(16_666_667)
        let target = MonotonicInstant(nanoseconds: 1_000 * Self.ms)
        // Made with 10 ms to spare: the prior still plans (nothing was tried at it).
        learner.record(submitted: target - Nanoseconds(10 * Self.ms), target: target, presented: target, period: p)
        #expect(learner.lead?.lead == Nanoseconds(Self.ms) && learner.lead?.provenance == .prior)
        // Missed with 2 ms to spare: the latch is later than assumed; the middle of 2 and 10 ms.
        learner.record(submitted: target - Nanoseconds(2 * Self.ms), target: target, presented: target + p, period: p)
        #expect(learner.lead?.lead == Nanoseconds(6 * Self.ms) && learner.lead?.provenance == .bracketed)
        // Another learner: made with half a millisecond to spare, under the prior: proven.
        var proven = SubmitDeadlineLearner()
        proven.prior = Nanoseconds(Self.ms)
        proven.record(submitted: target - Nanoseconds(Self.ms / 2), target: target, presented: target, period: p)
        #expect(proven.lead?.lead == Nanoseconds(Self.ms / 2) && proven.lead?.provenance == .sufficient)
    }
}
