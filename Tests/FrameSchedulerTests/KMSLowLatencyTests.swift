import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

@Suite("KMS: the low-latency policy")
@MainActor
struct KMSLowLatencyTests {
    static let ms: Int64 = 1_000_000

    /// A harness under low latency, run for `callbacks` callbacks with these render times and
    /// timer lateness (by callback).
    static func lowLatency(
        callbacks: Int, renderTime: @escaping (Int) -> Nanoseconds = { _ in Nanoseconds(2 * ms) },
        wakeDelay: @escaping (Int) -> Nanoseconds = { _ in .zero }
    ) -> KMSHarness {
        let h = KMSHarness()
        h.scheduler.latency = .lowLatency
        h.renderTime = renderTime
        h.wakeDelay = wakeDelay
        h.start()
        h.run(callbacks: callbacks)
        return h
    }

    @Test("callbacks start at the deadline less the render time and its margin, and the frames still make their targets")
    func startsLate() {
        let h = KMSHarness()
        h.scheduler.latency = .lowLatency
        h.start()
        h.run(callbacks: 40)
        #expect(h.violations.isEmpty)
        // From the second callback (the render time known): the driver's latch (1 ms) and the
        // budget (2 ms drawing + 1 ms margin) before the target.
        #expect(h.frames[0].renderEstimate == nil)
        for k in 2..<h.frames.count - 1 {
            let frame = h.frames[k]
            #expect(frame.deadline?.provenance == .prior, "callback \(k)")
            // The render time the frames carry, through the link: the 2 ms drawn.
            #expect(frame.renderEstimate == Nanoseconds(2 * Self.ms), "callback \(k)")
            #expect(h.callbackStarts[k] == frame.targetTimestamp - Nanoseconds(4 * Self.ms), "callback \(k)")
            #expect(h.presented[frame.refreshIndex]?.time == frame.targetTimestamp, "callback \(k)")
        }
    }

    @Test(
        """
        a program drawing for 10 ms (a budget of 11 ms, over half the 16.7 ms period) starts every callback at once, as under \
        throughput; one drawing for 6 ms is planned late
        """)
    func slowProgramStartsAtOnce() {
        for (render, planned) in [(10 * Self.ms, false), (6 * Self.ms, true)] {
            let h = KMSHarness()
            h.scheduler.latency = .lowLatency
            h.renderTime = { _ in Nanoseconds(render) }
            h.start()
            h.run(callbacks: 30)
            #expect(h.violations.isEmpty)
            #expect(h.plannedStarts.isEmpty != planned, "render \(render)")
            #expect(h.lateFrames(from: 2).isEmpty, "render \(render)")
        }
    }

    @Test(
        """
        a timer that wakes 0.5 ms late once (callback 10): that lateness is learned at once, and each on-time wake-up after it \
        (the vblank event read, the planned start) takes a sixteenth of it off: callback 11 starts 4.46875 ms before its target, \
        callback 12 4.411989 ms; every frame on time
        """)
    func lateWakeLearned() {
        let h = Self.lowLatency(callbacks: 30, wakeDelay: { $0 == 10 ? Nanoseconds(Self.ms / 2) : .zero })
        #expect(h.violations.isEmpty)
        #expect(h.callbackStarts[10] == h.frames[10].targetTimestamp - Nanoseconds(7 * Self.ms / 2))
        // 500,000 ns less 31,250 (the vblank event read at once before callback 11); then less
        // 29,296 (callback 11's start on time) and 27,465 (the event before callback 12).
        #expect(h.callbackStarts[11] == h.frames[11].targetTimestamp - Nanoseconds(4 * Self.ms + 468_750))
        #expect(h.callbackStarts[12] == h.frames[12].targetTimestamp - Nanoseconds(4 * Self.ms + 411_989))
        for k in 10..<h.frames.count - 1 {
            #expect(h.presented[h.frames[k].refreshIndex]?.time == h.frames[k].targetTimestamp, "callback \(k)")
        }
    }

    @Test(
        """
        vblank events read 3 ms after their vblank (a host that wakes late; 2 ms frames): the lateness is learned from the events \
        alone, before any start is planned, and every planned start allows for it: no frame misses
        """)
    func lateEventsLearnedBeforePlanning() {
        let h = KMSHarness()
        h.scheduler.latency = .lowLatency
        h.kernelLag = Nanoseconds(3 * Self.ms)
        h.start()
        h.run(callbacks: 40)
        #expect(h.violations.isEmpty)
        #expect(h.lateFrames(from: 2).isEmpty, "\(h.lateFrames(from: 2))")
        #expect(!h.plannedStarts.isEmpty)
        for (k, with) in h.plannedWith { #expect(with.allowance == Nanoseconds(3 * Self.ms), "callback \(k)") }
    }

    @Test(
        """
        a planned start that wakes 6 ms late (callback 10; 2 ms frames) misses its target and nothing else: one frame in flight \
        stays (the frame was drawn in 2 ms; a second in flight would cost every later frame a period), and the starts after it \
        are planned again
        """)
    func lateStartKeepsOneFrameInFlight() {
        let h = Self.lowLatency(callbacks: 40, wakeDelay: { $0 == 10 ? Nanoseconds(6 * Self.ms) : .zero })
        #expect(h.violations.isEmpty)
        #expect(h.lateFrames(from: 2) == [10])
        #expect(h.depths.allSatisfy { $0 == 1 })
        #expect(h.plannedStarts.keys.contains(12))
    }

    @Test(
        """
        a timer that wakes 12 ms late every time (more than the half-period cap on its allowance; 2 ms frames): a late start keeps \
        one frame in flight at most once in 31 refreshes, so the planned frames do not miss one after another: at most 2 misses in \
        any 31 callbacks, and the learned lateness stays 0
        """)
    func alwaysLateTimerDoesNotMissEveryFrame() {
        let h = Self.lowLatency(callbacks: 300, wakeDelay: { _ in Nanoseconds(12 * Self.ms) })
        #expect(h.violations.isEmpty)
        let late = h.lateFrames(from: 2)
        for start in stride(from: 0, to: 300, by: 31) {
            #expect(late.filter { $0 >= start && $0 < start + 31 }.count <= 2, "\(late)")
        }
        #expect(h.scheduler.lateness.median == 0)
    }

    @Test(
        """
        render times that scatter (2 ms, and 8 ms every 20th frame): once an 8 ms frame is among the last 225–256, starts are \
        planned with 14 ms (8 ms and its 6 ms over the median), over half the period, so the callbacks start at once and only \
        the first 8 ms frame (planned before it) misses; before it they are planned late. One 8 ms frame (callback 7) stops \
        planning until it leaves the window (callback 256's render time replaces its block)
        """)
    func scatteredRenderTimesStartAtOnce() {
        let h = Self.lowLatency(callbacks: 200, renderTime: { $0 % 20 == 7 ? Nanoseconds(8 * Self.ms) : Nanoseconds(2 * Self.ms) })
        #expect(h.violations.isEmpty)
        #expect(h.lateFrames(from: 2) == [7], "\(h.lateFrames(from: 2))")
        #expect(!h.plannedStarts.isEmpty && h.plannedStarts.keys.allSatisfy { $0 <= 7 }, "\(h.plannedStarts.keys.sorted())")
        let once = Self.lowLatency(callbacks: 300, renderTime: { $0 == 7 ? Nanoseconds(8 * Self.ms) : Nanoseconds(2 * Self.ms) })
        #expect(once.violations.isEmpty)
        #expect(once.lateFrames(from: 2) == [7], "\(once.lateFrames(from: 2))")
        let blocks = RecentPeak.blockSize * RecentPeak.blocks
        #expect(!once.plannedStarts.keys.contains { $0 > 7 && $0 <= blocks })
        #expect(once.plannedStarts.keys.contains(blocks + 1))
    }

    @Test(
        """
        misses do not compound: one frame that takes 20 ms (callback 10) misses its target, and every other frame is shown at its \
        target: two frames in flight after the miss, then one again and starts planned late again
        """)
    func missesDoNotCompound() {
        let h = Self.lowLatency(callbacks: 200, renderTime: { $0 == 10 ? Nanoseconds(20 * Self.ms) : Nanoseconds(2 * Self.ms) })
        #expect(h.violations.isEmpty)
        #expect(h.lateFrames(from: 2) == [10])
        #expect(h.frames[11].renderEstimate == Nanoseconds(20 * Self.ms))
        #expect(h.depths[9] == 1 && h.depths[10] == 2 && h.depths.last == 1)
        // Two frames in flight after the miss (``FlipPipeline``), back to one and to planned starts
        // after 120 fast frames.
        #expect(h.plannedStarts.keys.contains { $0 > 10 + FlipPipeline.fastFramesToReturn })
    }

    @Test(
        """
        low latency, any render times (0.2–30 ms) and timer lateness (0–20 ms): the link's frames keep the harness's rules, every \
        deadline is at or before its target, and a planned start is its deadline less the planning budget (the longer of the \
        render estimate with the margin and the longest recent render time under a period with its spread) and the learned wake \
        lateness, the two at most half a period together
        """)
    func lowLatencyProperties() async {
        await propertyCheck(
            count: 150, input: Gen.int64(in: 200_000...(30 * Self.ms)).array(of: 1...40),
            Gen.int64(in: 0...(20 * Self.ms)).array(of: 1...40)
        ) { renders, wakes in
            let h = KMSHarness()
            h.scheduler.latency = .lowLatency
            h.renderTime = { Nanoseconds(renders[$0 % renders.count]) }
            h.wakeDelay = { Nanoseconds(wakes[$0 % wakes.count]) }
            h.start()
            h.run(callbacks: 80)
            #expect(h.violations.isEmpty, "\(h.violations.prefix(3))")
            for (k, frame) in h.frames.enumerated() {
                guard let deadline = frame.deadline else { continue }
                #expect(deadline.time <= frame.targetTimestamp, "callback \(k)")
            }
            for (k, event) in h.events.enumerated() {
                guard let start = h.plannedStarts[k], let with = h.plannedWith[k] else { continue }
                guard let deadline = event.deadline, let estimate = event.renderEstimate else {
                    Issue.record("callback \(k): planned without a deadline or a render estimate")
                    continue
                }
                // Exactly the deadline less the planning budget and the wake-up allowance, which is
                // at most half a period.
                // The longer of the estimate with the margin and the longest render time under a
                // period so far (80 callbacks are within the peak's window) plus its spread over
                // the median of the last 31 (at least the margin).
                var window = RecentMedian()
                for j in max(0, k - RecentMedian.capacity)..<k { window.append(renders[j % renders.count]) }
                let peak = (0..<k).map { renders[$0 % renders.count] }.filter { $0 < h.period.value }.max()
                let longest = peak.map { $0 + max(Self.ms, $0 - window.median) } ?? 0
                #expect(with.budget == Nanoseconds(max(estimate.value + Self.ms, longest)), "callback \(k)")
                #expect(with.allowance.value <= h.period.value / 2, "callback \(k)")
                #expect(
                    with.budget.value + with.allowance.value <= h.period.value / 2,
                    "callback \(k): planned with a budget and allowance over half a period")
                #expect(start == deadline.time - with.budget - with.allowance, "callback \(k)")
            }
        }
    }

    @Test(
        """
        a timer that wakes 14 ms late once (callback 10, a stall): that frame misses; the vblank events read on time after it take \
        the learned lateness down until the budget and the allowance fit half a period, and starts are planned again; it decays \
        under 1 ms; no other frame is late
        """)
    func stalledWakeDecays() {
        let h = Self.lowLatency(callbacks: 240, wakeDelay: { $0 == 10 ? Nanoseconds(14 * Self.ms) : .zero })
        #expect(h.violations.isEmpty)
        let resumed = h.plannedStarts.keys.filter { $0 > 10 }.sorted()
        #expect(resumed.count > 200)
        if let first = resumed.first, let with = h.plannedWith[first] {
            #expect(with.budget.value + with.allowance.value <= h.period.value / 2)
            #expect(with.allowance > Nanoseconds(4 * Self.ms))
        }
        #expect(h.scheduler.wakeAllowance < Nanoseconds(Self.ms))
        #expect(h.lateFrames(from: 2) == [10])
    }

    @Test("a renderer whose budget does not fit before the deadline starts at once, as under throughput")
    func slowStartsAtOnce() {
        let h = Self.lowLatency(callbacks: 30, renderTime: { _ in Nanoseconds(15 * Self.ms) })
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
