import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

@Suite("Wayland: the low-latency policy")
struct WaylandLowLatencyTests {
    static let period: Int64 = 16_666_667

    /// A weston-like compositor: it latches what was committed `latch` before each vblank
    /// (vblanks every ``period``), sends the frame callback of the commit it latched then, and
    /// its presentation feedback at the vblank, in time order (with a latch longer than a period,
    /// the next frame callback comes before the vblank). The program draws for 2 ms.
    static func run(
        latency: LatencyPolicy, latch: Int64 = 7 * ms, frames: Int = 40, wakeDelay: @escaping (Int) -> Int64 = { _ in 0 },
        slowFrames: [Int: Int64] = [:]
    ) -> SchedulerScript {
        var script = SchedulerScript()
        script.wakeDelay = wakeDelay
        script.slowFrames = slowFrames
        script.scheduler.latency = latency
        script.commitAfter = 2 * ms
        script.start(at: 0)
        var shown: [(frame: UInt64, at: Int64)] = []
        for k in 0..<frames {
            guard let committed = script.commits.last else { break }
            // The first vblank whose latch comes at or after the commit.
            let vblank = (committed + latch + period - 1) / period * period
            while let first = shown.first, first.at <= vblank - latch {
                script.presented(frame: first.frame, at: first.at)
                shown.removeFirst()
            }
            script.callback(at: vblank - latch)
            shown.append((UInt64(k), vblank))
        }
        for presentation in shown { script.presented(frame: presentation.frame, at: presentation.at) }
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
        #expect(Self.lateRefreshes(script) == [0, 1], "\(Self.lateRefreshes(script))")
        #expect(Self.lateRefreshes(throughput) == [0, 1], "\(Self.lateRefreshes(throughput))")
        let last = script.refreshes[script.refreshes.count - 2].event.deadline
        #expect(last?.provenance == .prior && last?.lead == Nanoseconds(19 * ms))
    }
}

extension WaylandLowLatencyTests {
    /// A compositor that latches what was committed `latch` before each vblank and sends that
    /// commit's frame callback then, its feedback at the vblank; except that the callback of the
    /// commit shown at a vblank in `lateAt` (counted in periods) comes `lateBy` after that vblank,
    /// after its feedback (kwin's, when its compositing ran late). The program draws for
    /// `render`. With `firstFeedbackEarly`, frame 0's feedback comes with its frame callback, at the
    /// latch, before the vblank it reports (kwin's, for a first frame). Vblanks are `phase` plus
    /// whole periods. Returns the script and the vblank each frame was shown at.
    static func lateCallbacks(
        latency: LatencyPolicy, latch: Int64 = 2 * ms, render: Int64 = ms, lateAt: Set<Int64> = [], lateBy: Int64 = ms,
        frames: Int = 40, firstFeedbackEarly: Bool = false, phase: Int64 = 0, feedbackAfterCallback: Bool = false,
        slowFrames: [Int: Int64] = [:]
    ) -> (SchedulerScript, [Int64]) {
        var script = SchedulerScript()
        script.scheduler.latency = latency
        script.commitAfter = render
        script.slowFrames = slowFrames
        script.start(at: 0)
        var vblanks: [Int64] = []
        for k in 0..<frames {
            guard let committed = script.commits.last else { break }
            let vblank = phase + max(0, (committed + latch - phase + period - 1) / period) * period
            vblanks.append(vblank)
            if k == 0 && firstFeedbackEarly {
                script.presented(frame: 0, at: vblank, received: vblank - latch)
                script.callback(at: vblank - latch)
            } else if feedbackAfterCallback {
                script.callback(at: vblank + lateBy)
                script.presented(frame: UInt64(k), at: vblank, received: vblank + lateBy + ms / 2)
            } else if lateAt.contains(vblank / period) {
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

extension WaylandLowLatencyTests {
    @Test(
        """
        kwin's start-up (latch 1.75 ms before the vblank, 0.4 ms to draw): frame 0's feedback comes with the next frame callback, \
        before the vblank it reports. Under either policy every frame from frame 1 on is presented at its target, whatever the \
        vblank's phase: the depth counts from the vblank before one reported ahead (counted from the reported one, frame 1's \
        depth would be one less than every later frame's)
        """,
        arguments: [0, 3 * ms, 4_930_000, 8 * ms, 12 * ms, 16 * ms])
    func firstFeedbackBeforeItsVblank(phase: Int64) {
        for latency in [LatencyPolicy.lowLatency, .throughput] {
            let (script, shown) = Self.lateCallbacks(
                latency: latency, latch: 1_750_000, render: 400_000, frames: 60, firstFeedbackEarly: true, phase: phase)
            #expect(invariantViolations(script).isEmpty)
            for k in 1..<shown.count - 1 {
                #expect(Self.target(script.refreshes[k]) == shown[k], "\(latency) refresh \(k)")
                #expect(shown[k + 1] == shown[k] + Self.period, "\(latency) frame \(k + 1)")
            }
        }
    }
}

extension WaylandLowLatencyTests {
    @Test(
        """
        a compositor that calls back 1 ms after each presentation for the first 2–4 vblanks, then 1.75 ms before it (its latch; \
        0.4 ms to draw): the depth learned before the change is one short after it, and under low latency a miss teaches no depth \
        (nor, before the period is measured, does a waiting frame move the target; a later change is caught by that). At most the \
        frame at the change misses; every later frame is presented at its target, one a vblank: a target a frame started at its \
        callback is sure to miss (by the lead the misses showed too short) moves a period later
        """, arguments: 2...4)
    func callbacksMoveBeforeThePresentation(switchAt: Int64) {
        let (script, shown) = Self.lateCallbacks(
            latency: .lowLatency, latch: 1_750_000, render: 400_000, lateAt: Set(0..<switchAt), lateBy: ms, frames: 60)
        #expect(invariantViolations(script).isEmpty)
        #expect(Self.lateRefreshes(script).allSatisfy { $0 == Int(switchAt) }, "\(Self.lateRefreshes(script))")
        for k in Int(switchAt) + 1..<shown.count - 1 {
            #expect(Self.target(script.refreshes[k]) == shown[k], "refresh \(k)")
            #expect(shown[k + 1] == shown[k] + Self.period, "frame \(k + 1)")
        }
    }

    @Test(
        """
        mutter-like (calls back 1 ms after each presentation, latches 2 ms before the vblank) with 8 ms frames: under low latency \
        every frame from refresh 1 on targets, and is shown at, the first vblank after its callback; the 8 ms latch prior is no \
        reason to aim a period later (more than 8 ms + the budget is left only with under 6.7 ms frames)
        """)
    func slowFramesOnMutterKeepTheNextVblank() {
        let (script, shown) = Self.lateCallbacks(
            latency: .lowLatency, latch: 2 * ms, render: 8 * ms, lateAt: Set(0..<100), lateBy: ms, frames: 60)
        #expect(invariantViolations(script).isEmpty)
        for k in 1..<shown.count - 1 {
            #expect(Self.target(script.refreshes[k]) == shown[k], "refresh \(k)")
            #expect(shown[k] - script.arrivals[k] < Self.period, "refresh \(k)")
        }
    }

    @Test(
        """
        weston-like, one frame drawn for longer than the time left to its latch (refresh 20: 12, 16, 17, 20 or 40 ms; the others \
        2 ms): in either mode it alone misses, and every other frame is shown at its target; for a period or more, the next \
        callback comes while the slow frame still waits for its vblank, and aims past it
        """,
        arguments: [LatencyPolicy.lowLatency, .throughput], [12, 16, 17, 20, 40] as [Int64])
    func renderSpikeMissesOnce(latency: LatencyPolicy, slowMilliseconds: Int64) {
        let script = Self.run(latency: latency, frames: 60, slowFrames: [20: slowMilliseconds * ms])
        #expect(invariantViolations(script).isEmpty)
        #expect(Self.lateRefreshes(script) == (latency == .throughput && slowMilliseconds < 17 ? [] : [20]))
        for k in 5..<script.refreshes.count - 1 where k != 20 {
            #expect(script.presentedTimes[UInt64(k)] == Self.target(script.refreshes[k]), "refresh \(k)")
        }
    }

    @Test(
        """
        mutter-like (latches 2 ms before the vblank, calls back 1 ms after each presentation, its feedback read after the \
        callback), one frame drawn for 12, 16, 17 or 20 ms (refresh 20): in either mode it alone misses, and every other frame \
        is shown at its target: the slow frame counts as shown at the vblank its commit made, not at the one after the callback
        """,
        arguments: [LatencyPolicy.lowLatency, .throughput], [12, 16, 17, 20] as [Int64])
    func renderSpikeOnMutterMissesOnce(latency: LatencyPolicy, slowMilliseconds: Int64) {
        let (script, shown) = Self.lateCallbacks(
            latency: latency, latch: 2 * ms, render: 2 * ms, lateBy: ms, frames: 60, feedbackAfterCallback: true,
            slowFrames: [20: slowMilliseconds * ms])
        #expect(invariantViolations(script).isEmpty)
        for k in 5..<shown.count - 1 where k != 20 {
            #expect(Self.target(script.refreshes[k]) == shown[k], "refresh \(k)")
        }
    }
}
