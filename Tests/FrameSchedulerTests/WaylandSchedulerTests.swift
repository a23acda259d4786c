import DisplayLinkCore
import FrameSchedulers
import Testing

/// Scripted compositors on virtual time, with the exact refreshes expected.
@Suite("Wayland refresh scheduler on virtual time")
struct WaylandSchedulerTests {
    // MARK: weston headless: depth 2, ~25.4 ms cadence while 16.67 ms is advertised, seq 0

    static let westonPeriod: Int64 = 25_400_000
    static let advertised: Int64 = 16_666_667
    /// When weston presents frame k.
    static func westonQ(_ k: Int) -> Int64 { 20 * ms + Int64(k) * westonPeriod }

    /// weston: callback k arrives 8 ms before frame k−1 is presented; feedback for frame k−1 1 ms after.
    static func westonRun(frames: Int) -> SchedulerScript {
        var script = SchedulerScript()
        script.start(at: 0)
        for k in 1...frames {
            script.callback(at: westonQ(k - 1) - 8 * ms)
            script.presented(frame: UInt64(k - 1), at: westonQ(k - 1))
        }
        return script
    }

    @Test(
        """
        weston-like: the callback for k+1 before the feedback for k; learns period 25.4 ms and depth 2; targets exact from the third frame
        """)
    func westonLike() {
        let script = Self.westonRun(frames: 40)
        let q = Self.westonQ
        let p = Self.advertised
        // Start-up, before any presentation is known: estimates.
        #expect(Array(script.timestamps.prefix(5)) == [0, 12 * ms, q(0), q(1), q(2)])
        #expect(
            Array(script.provenances.prefix(5)) == [
                .frameCallbackEstimate, .frameCallbackEstimate,
                .presentationFeedback, .presentationFeedback, .presentationFeedback
            ])
        // Start-up convergence: frame 1 is drawn while frame 0 is pending (two periods ahead, on the
        // advertised period); frame 2 knows q(0), frame 1 is pending (depth 2) and the period is
        // the callback interval; from frame 3 on, the measured presentation intervals. Exact from
        // the third frame (index 2) on.
        #expect(Array(script.targets.prefix(5)) == [p, 12 * ms + 2 * p, q(2), q(3), q(4)])
        #expect(script.refreshes[2].event.refreshPeriod.value == Self.westonPeriod)
        #expect(script.refreshes[4].event.refreshPeriod.value == Self.westonPeriod)
        // Steady state: refresh k is stamped with frame k−2's presentation and targets frame k's exactly.
        for k in 5..<script.refreshes.count {
            let event = script.refreshes[k].event
            #expect(event.timestamp == t(q(k - 2)), "refresh \(k)")
            #expect(event.targetTimestamp == t(q(k)), "refresh \(k)")
            #expect(event.provenance == .presentationFeedback, "refresh \(k)")
            #expect(event.refreshPeriod.value == Self.westonPeriod, "refresh \(k)")
        }
        #expect(script.sequences == (1...41).map { UInt64($0) })
        #expect(script.scheduler.learnedDepth == 2)
        #expect(script.refreshes.allSatisfy { !$0.event.followsStall })
        // Every refresh asked for one callback and one feedback; every feedback was delivered.
        #expect(script.scheduler.frameRequestCount == 41)
        #expect(script.delivered.map(\.refreshIndex) == (0..<40).map { UInt64($0) })
        #expect(script.scheduler.outstandingFeedbackCount == 1)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("weston-like, through a real dispatcher and link: deltas are the presentation intervals, no missed frames")
    @MainActor
    func westonThroughTheCore() {
        let script = Self.westonRun(frames: 40)
        let core = runThroughCore(script)
        #expect(core.frames.count == 41)
        #expect(core.frames.dropFirst(6).allSatisfy { $0.delta.value == Self.westonPeriod && $0.missedFrames == 0 })
        #expect(core.frames.last?.duration.value == Self.westonPeriod)
    }

    // MARK: A DRM compositor: depth 1, seq counts

    static let period: Int64 = 16_666_667
    static func vblank(_ k: Int) -> Int64 { Int64(k) * period }

    /// Frame k is presented at vblank `presentedAt(k)` with seq 1000 + that vblank; its feedback
    /// and the next callback arrive together 1 ms later (feedback first).
    static func drmRun(
        frames: Int, presentedAt: (Int) -> Int = { $0 + 1 },
        sequence: (Int) -> UInt64 = { 1000 + UInt64($0) }
    ) -> SchedulerScript {
        var script = SchedulerScript()
        script.start(at: 2 * ms)
        for k in 0..<frames {
            let v = presentedAt(k)
            script.presented(frame: UInt64(k), at: vblank(v), sequence: sequence(v))
            script.callback(at: vblank(v) + ms)
        }
        return script
    }

    @Test("DRM-like: every refresh carries the newest vblank, targets the next, and counts the compositor's steps")
    @MainActor
    func drmLike() {
        let script = Self.drmRun(frames: 30)
        #expect(script.timestamps == [2 * ms] + (1...30).map { Self.vblank($0) })
        #expect(script.targets == [2 * ms + Self.period] + (2...31).map { Self.vblank($0) })
        #expect(script.provenances == [.frameCallbackEstimate] + Array(repeating: .presentationFeedback, count: 30))
        #expect(script.sequences == (1...31).map { UInt64($0) })
        #expect(script.scheduler.learnedDepth == 1)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
        let core = runThroughCore(script)
        #expect(core.frames.allSatisfy { $0.missedFrames == 0 })
    }

    @Test("DRM-like with a missed vblank: the compositor's seq step of 2 is one missed frame")
    @MainActor
    func drmMissedVBlank() {
        // Frame 6 misses its vblank: shown at vblank 8, and everything after one vblank later.
        let script = Self.drmRun(frames: 12, presentedAt: { $0 < 6 ? $0 + 1 : $0 + 2 })
        #expect(script.timestamps == [2 * ms] + (1...6).map { Self.vblank($0) } + (8...13).map { Self.vblank($0) })
        #expect(script.sequences == [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14])
        let core = runThroughCore(script)
        #expect(core.frames.map(\.missedFrames) == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])
    }

    static let oddSequenceCases: [[UInt64]] = {
        let max = UInt64.max
        var cases: [[UInt64]] = []
        cases.append([1001, 1002, 1003, 1004, 1005, 3, 4, 5, 6, 7, 8])  // backwards (counter reset)
        cases.append([0xFFFF_FFFD, 0xFFFF_FFFE, 0xFFFF_FFFF, 0, 1, 2, 3, 4, 5, 6, 7])  // 32-bit wrap through 0
        cases.append([max - 3, max - 2, max - 1, max, 0, 1, 2, 3, 4, 5, 6])  // 64-bit wrap
        cases.append([max - 3, max - 2, max - 1, max, 4, 5, 6, 7, 8, 9, 10])  // wrap, skipping
        cases.append([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])  // no seq
        cases.append([5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5])  // stuck
        cases.append([1, 1_000_000, 1_000_001, 1_000_002, 7, 8, 9, 10, 11, 12, 13])  // jumps
        return cases
    }()

    @Test(
        "a compositor seq that goes backwards, wraps or is 0: sequences keep counting one step per vblank",
        arguments: WaylandSchedulerTests.oddSequenceCases)
    @MainActor
    func oddSequences(_ seqs: [UInt64]) {
        let script = Self.drmRun(frames: seqs.count, sequence: { seqs[$0 - 1] })
        #expect(script.timestamps == [2 * ms] + (1...seqs.count).map { Self.vblank($0) })
        #expect(script.sequences == (1...(seqs.count + 1)).map { UInt64($0) })
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
        let core = runThroughCore(script)
        #expect(core.frames.allSatisfy { $0.missedFrames == 0 }, "\(core.frames.map(\.missedFrames))")
    }

    // MARK: Feedback late, reordered, lost, discarded

    @Test("late feedback: the refresh without news is extrapolated on the rhythm, the next one is stamped again")
    func lateFeedback() {
        var script = Self.drmRun(frames: 6)  // refreshes 0…6, refresh 6 at vblank 6
        script.callback(at: Self.vblank(7) + ms)  // frame 6's feedback is late
        script.presented(frame: 6, at: Self.vblank(7), sequence: 1007)
        script.presented(frame: 7, at: Self.vblank(8), sequence: 1008)
        script.callback(at: Self.vblank(8) + ms)
        #expect(Array(script.timestamps.suffix(3)) == [Self.vblank(6), Self.vblank(7), Self.vblank(8)])
        #expect(Array(script.provenances.suffix(3)) == [.presentationFeedback, .frameCallbackEstimate, .presentationFeedback])
        #expect(Array(script.sequences.suffix(3)) == [7, 8, 9])
        #expect(Array(script.targets.suffix(3)) == [Self.vblank(7), Self.vblank(8), Self.vblank(9)])
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("reordered feedback: the newest presentation stamps the refresh; both outcomes are delivered")
    func reorderedFeedback() {
        var script = Self.drmRun(frames: 6)
        script.callback(at: Self.vblank(7) + ms)  // frame 6's feedback is late …
        script.presented(frame: 7, at: Self.vblank(8), sequence: 1008)
        script.presented(frame: 6, at: Self.vblank(7), sequence: 1007)  // … and comes after frame 7's
        script.callback(at: Self.vblank(8) + ms)
        #expect(Array(script.timestamps.suffix(2)) == [Self.vblank(7), Self.vblank(8)])
        #expect(script.provenances.last == .presentationFeedback)
        #expect(Array(script.sequences.suffix(2)) == [8, 9])
        #expect(Array(script.delivered.map(\.refreshIndex).suffix(2)) == [7, 6])
        #expect(script.scheduler.learnedDepth == 1)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("lost feedback: estimates while it is missing; a compositor that never answers cannot use up the slots")
    func lostFeedback() {
        var script = Self.drmRun(frames: 5)
        // From now on no feedback at all (sway stops sending it after two frames).
        for k in 6...40 { script.callback(at: Self.vblank(k) + ms) }
        let tail = script.refreshes.suffix(35)
        #expect(tail.map { $0.event.timestamp } == (6...40).map { t(Self.vblank($0)) })
        #expect(tail.allSatisfy { $0.event.provenance == .frameCallbackEstimate })
        #expect(tail.allSatisfy { $0.feedbackSlot != nil }, "feedback is still requested")
        #expect(script.scheduler.outstandingFeedbackCount == WaylandRefreshScheduler.feedbackCapacity)
        #expect(Array(script.sequences.suffix(35)) == (7...41).map { UInt64($0) })
        // When feedback comes back, the next refresh is stamped with it.
        script.presented(frame: 40, at: Self.vblank(41), sequence: 1041)
        script.callback(at: Self.vblank(41) + ms)
        #expect(script.timestamps.last == Self.vblank(41))
        #expect(script.provenances.last == .presentationFeedback)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("discarded feedback is delivered as discarded; the refresh without a presentation is an estimate")
    func discardedFeedback() {
        var script = Self.drmRun(frames: 6)
        script.discarded(frame: 6)
        script.callback(at: Self.vblank(7) + ms)
        #expect(script.delivered.last == PresentationFeedback(refreshIndex: 6, outcome: .discarded))
        #expect(script.timestamps.last == Self.vblank(7))
        #expect(script.provenances.last == .frameCallbackEstimate)
        #expect(script.scheduler.feedbackCount == 7)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("feedback that arrives after an extrapolated frame, earlier than its timestamp: timestamps still increase")
    @MainActor
    func feedbackAfterExtrapolation() {
        // weston, steady; then frame 6 is presented 0.3 ms early and its feedback comes late (after
        // callback 8, with callback 9 before frame 7's feedback, which comes after frame 8's).
        let q = Self.westonQ
        var script = SchedulerScript()
        script.start(at: 0)
        for k in 1...7 {
            script.callback(at: q(k - 1) - 8 * ms)
            if k - 1 < 6 { script.presented(frame: UInt64(k - 1), at: q(k - 1)) }
        }
        script.callback(at: q(7) - 8 * ms)  // refresh 8: frame 6's feedback is late
        let q6 = q(6) - 300_000
        script.presented(frame: 6, at: q6, received: q(7) - 7 * ms)
        script.callback(at: q(8) - 8 * ms)  // refresh 9: only the late one is new
        script.presented(frame: 8, at: q(8))
        script.presented(frame: 7, at: q(7), received: q(8) + 2 * ms)
        script.callback(at: q(9) - 8 * ms)  // refresh 10
        script.presented(frame: 9, at: q(9))
        script.callback(at: q(10) - 8 * ms)  // refresh 11
        let p = Self.westonPeriod
        #expect(Array(script.timestamps[7...11]) == [q(5), q(6), q(6) + p / 2, q(8), q(9)])
        #expect(
            Array(script.provenances[7...11]) == [
                .presentationFeedback, .frameCallbackEstimate,
                .frameCallbackEstimate, .presentationFeedback, .presentationFeedback
            ])
        #expect(Array(script.sequences[7...11]) == [8, 9, 10, 11, 12])
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
        let core = runThroughCore(script)
        #expect(core.frames.allSatisfy { $0.missedFrames == 0 })
    }

    @Test("a presentation time implausibly far from its arrival is delivered marked implausible, and not learned from")
    func implausiblePresentation() {
        var script = Self.drmRun(frames: 6)
        script.presented(frame: 6, at: Self.vblank(7) + 3_600_000 * ms, received: Self.vblank(7) + ms, sequence: 1007)
        script.callback(at: Self.vblank(7) + ms)
        #expect(script.timestamps.last == Self.vblank(7))
        #expect(script.provenances.last == .frameCallbackEstimate)
        #expect(script.scheduler.timeline.latest == t(Self.vblank(6)))
        #expect(script.delivered.last?.isTimePlausible == false)
        #expect(script.delivered.dropLast().allSatisfy { $0.isTimePlausible })
        if case .presented(let at, _) = script.delivered.last?.outcome {
            #expect(at == t(Self.vblank(7) + 3_600_000 * ms))
        } else {
            Issue.record("not delivered")
        }
    }

    // MARK: Without wp_presentation

    @Test("without wp_presentation: callback arrivals are the timestamps, the period is measured from them")
    func withoutPresentation() {
        var script = SchedulerScript(usesPresentation: false)
        let p = Self.period
        let arrivals: [Int64] = (1...5).map { 3 * ms + Int64($0) * p } + [3 * ms + 7 * p, 3 * ms + 8 * p]
        script.start(at: 0)
        for arrival in arrivals { script.callback(at: arrival) }
        #expect(script.timestamps == [0] + arrivals)
        #expect(script.provenances.allSatisfy { $0 == .frameCallbackEstimate })
        #expect(script.sequences == [1, 2, 3, 4, 5, 6, 8, 9])
        #expect(script.targets == [p] + arrivals.map { $0 + p })
        #expect(script.refreshes.allSatisfy { $0.feedbackSlot == nil && $0.requestsFrameCallback })
        #expect(script.scheduler.isPeriodMeasured)
        #expect(script.scheduler.period.value == p)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    // MARK: Stalls, fallback ticks, demand

    @Test(
        """
        a lost frame callback: its frame was presented and no callback came within the timeout, so the watchdog's refresh asks \
        again (counted, following the stall); a hidden window's frame, never presented, is a stall and asks for nothing
        """)
    @MainActor
    func lostFrameCallback() throws {
        var script = Self.drmRun(frames: 5)  // refresh 5 at vblank 5 + 1 ms asked for a callback
        let last = Self.vblank(5) + ms
        script.presented(frame: 5, at: Self.vblank(6), sequence: 1006)
        #expect(script.watchdog(at: last + 499 * ms) == .nothing)
        let action = script.watchdog(at: last + 500 * ms)
        guard case .fallbackTick(let tick) = action else {
            Issue.record("no tick: \(action)")
            return
        }
        #expect(script.scheduler.lostFrameCallbackCount == 1)
        #expect(tick.requestsFrameCallback)
        #expect(tick.feedbackSlot != nil)
        #expect(tick.event.followsStall)
        #expect(tick.event.timestamp.nanoseconds - origin == Self.vblank(6))
        #expect(tick.event.provenance == .presentationFeedback)
        #expect(script.scheduler.hasOutstandingFrameCallback)
        #expect(!script.scheduler.isStalled)
        // The callback the tick asked for comes: back on the compositor's rhythm.
        script.presented(frame: 6, at: Self.vblank(37), sequence: 1037)
        script.callback(at: Self.vblank(37) + ms)
        #expect(script.timestamps.last == Self.vblank(37))
        #expect(script.scheduler.lostFrameCallbackCount == 1)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")

        // Hidden: the frame is never presented (or discarded), so no callback is presumed lost.
        var hidden = Self.drmRun(frames: 5)
        hidden.discarded(frame: 5)
        #expect(hidden.watchdog(at: last + 500 * ms) == .stalled)
        #expect(hidden.watchdog(at: last + 1000 * ms) == .nothing)
        #expect(hidden.scheduler.lostFrameCallbackCount == 0)
        #expect(hidden.refreshes.count == 6)
    }

    @Test("stall: noticed after the timeout, once; the first refresh when callbacks return follows the stall")
    @MainActor
    func stallAndRestart() {
        var script = Self.drmRun(frames: 5)  // last refresh at vblank 5 + 1 ms
        let last = Self.vblank(5) + ms
        #expect(script.scheduler.watchdogInterval.value == 500 * ms)
        let r1 = script.watchdog(at: last + 499 * ms)
        #expect(r1 == .nothing)
        #expect(!script.scheduler.isStalled)
        let r2 = script.watchdog(at: last + 500 * ms)
        #expect(r2 == .stalled)
        #expect(script.scheduler.isStalled)
        let r3 = script.watchdog(at: last + 1000 * ms)
        #expect(r3 == .nothing)
        #expect(script.scheduler.hasOutstandingFrameCallback)
        // The surface comes back: its frame is presented at vblank 80 and the callback follows.
        script.presented(frame: 5, at: Self.vblank(80), sequence: 1080)
        script.callback(at: Self.vblank(80) + ms)
        script.presented(frame: 6, at: Self.vblank(81), sequence: 1081)
        script.callback(at: Self.vblank(81) + ms)
        #expect(!script.scheduler.isStalled)
        #expect(Array(script.timestamps.suffix(2)) == [Self.vblank(80), Self.vblank(81)])
        #expect(Array(script.refreshes.suffix(3).map(\.event.followsStall)) == [false, true, false])
        #expect(Array(script.sequences.suffix(2)) == [81, 82])  // 75 vblanks hidden, then one
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
        let core = runThroughCore(script)
        #expect(core.frames[6].delta == .zero && core.frames[6].missedFrames == 0)
        let gap = CoreRun(stallPolicy: .realGap)
        gap.run(script.events)
        #expect(gap.frames[6].delta.value == Self.vblank(80) - Self.vblank(5))
        #expect(gap.frames[6].missedFrames == 0)
    }

    @Test("fallback ticks while stalled: one per watchdog firing after the timeout, on the timer's times")
    func fallbackTicks() {
        var script = Self.drmRun(frames: 5)
        script.scheduler = WaylandRefreshScheduler(
            configuration: .init(stallTimeout: Nanoseconds(200 * ms), fallbackTickInterval: Nanoseconds(100 * ms)),
            advertisedPeriod: Nanoseconds(Self.period))
        script.refreshes = []
        script.slotOfFrame = [:]
        script.start(at: 0)
        #expect(script.scheduler.watchdogInterval.value == 100 * ms)
        // No callback ever comes. The timer fires every 100 ms for 1 s of virtual time.
        for k in 1...10 { script.watchdog(at: Int64(k) * 100 * ms) }
        let ticks = script.refreshes.dropFirst()
        #expect(ticks.count == 9)
        #expect(ticks.map { $0.event.timestamp } == (2...10).map { t(Int64($0) * 100 * ms) })
        #expect(ticks.allSatisfy { $0.event.provenance == .timerFallback && !$0.event.followsStall })
        #expect(ticks.allSatisfy { $0.event.targetTimestamp == $0.event.timestamp + Nanoseconds(Self.period) })
        #expect(ticks.allSatisfy { !$0.requestsFrameCallback }, "the start's request is still outstanding")
        #expect(script.scheduler.frameRequestCount == 1)
        // Sequences counted from the timer's times on the advertised period: 100 ms ≈ 6 refreshes.
        #expect(script.sequences == [1, 13, 19, 25, 31, 37, 43, 49, 55, 61])
        #expect(script.scheduler.isStalled)
        // Callbacks return.
        script.callback(at: 1010 * ms)
        #expect(script.refreshes.last?.event.followsStall == true)
        #expect(script.refreshes.last?.event.provenance == .frameCallbackEstimate)
        #expect(!script.scheduler.isStalled)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("demand off: no refresh, no request, no watchdog; demand on: one start, not following a stall")
    func demandOffAndOn() {
        var script = Self.drmRun(frames: 5)
        script.stop(at: Self.vblank(5) + 2 * ms)
        #expect(!script.scheduler.wantsWatchdog)
        // The callback already requested still comes, and its feedback: no refresh for it.
        script.presented(frame: 5, at: Self.vblank(6), sequence: 1006)
        let r4 = script.callback(at: Self.vblank(6) + ms)
        #expect(r4 == nil)
        #expect(!script.scheduler.hasOutstandingFrameCallback)
        #expect(script.scheduler.outstandingFeedbackCount == 0)
        let r5 = script.watchdog(at: Self.vblank(6) + 5000 * ms)
        #expect(r5 == .nothing)
        let requests = script.scheduler.frameRequestCount
        #expect(script.refreshes.count == 6)
        // On again, twice in a row: one start.
        let r6 = script.start(at: Self.vblank(30))
        #expect(r6)
        let r7 = !script.start(at: Self.vblank(30) + ms)
        #expect(r7)
        #expect(script.scheduler.frameRequestCount == requests + 1)
        #expect(script.refreshes.count == 7)
        let restart = script.refreshes[6].event
        #expect(!restart.followsStall)
        #expect(restart.timestamp == t(Self.vblank(30)))
        #expect(restart.provenance == .frameCallbackEstimate)
        // A start that is no longer due (demand went off before the main queue ran it) does nothing.
        var other = Self.drmRun(frames: 2)
        other.stop(at: Self.vblank(2) + 2 * ms)
        other.callback(at: Self.vblank(3) + ms)
        let scheduled = other.scheduler.demandChanged(true, at: t(Self.vblank(4)))
        #expect(scheduled)
        _ = other.scheduler.demandChanged(false, at: t(Self.vblank(4) + 1))
        let due = other.scheduler.startDue(at: t(Self.vblank(4) + 2))
        #expect(due == nil)
        #expect(!other.scheduler.isStartPending)
        // Demand on while a callback is outstanding: no start; the callback's refresh continues.
        var third = Self.drmRun(frames: 2)
        third.stop(at: Self.vblank(2) + 2 * ms)
        let r8 = !third.start(at: Self.vblank(2) + 3 * ms)
        #expect(r8)
        third.presented(frame: 2, at: Self.vblank(3), sequence: 1003)
        let r9 = third.callback(at: Self.vblank(3) + ms)
        #expect(r9 != nil)
        #expect(invariantViolations(script).isEmpty && invariantViolations(third).isEmpty)
    }

    @Test("a failed connection: nothing outstanding, nothing more dispatched")
    func connectionFailed() {
        var script = Self.drmRun(frames: 3)
        script.scheduler.connectionFailed()
        #expect(!script.scheduler.hasOutstandingFrameCallback)
        #expect(script.scheduler.outstandingFeedbackCount == 0)
        #expect(!script.scheduler.wantsWatchdog)
        let r10 = script.callback(at: Self.vblank(4) + ms)
        #expect(r10 == nil)
        let r11 = script.watchdog(at: Self.vblank(4) + 10_000 * ms)
        #expect(r11 == .nothing)
        let r12 = !script.start(at: Self.vblank(5))
        #expect(r12)
        let feedback = script.scheduler.presented(
            slot: 0, at: t(Self.vblank(4)), receivedAt: t(Self.vblank(4)),
            sequence: 1, advertisedRefresh: .zero)
        #expect(feedback == nil)
    }
}
