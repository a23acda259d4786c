import DisplayLinkCore
import FrameSchedulers
import Testing

/// Start-up convergence, commit timing, suspension, output changes and variable refresh, on
/// virtual time with exact values.
@Suite("Wayland scheduler: start-up, commit timing, suspension, outputs")
struct WaylandTimingProtocolTests {
    static let p: Int64 = 16_666_667

    /// mutter-like: the callback for frame k arrives 0.3 ms after frame k−1 is presented, with its
    /// feedback in the same batch (depth 1). Its first presentations come off the grid (mutter
    /// presents at once when idle): 7 ms and 11 ms apart, then every period.
    static func mutterRun(frames: Int, commitTiming: Bool = false) -> SchedulerScript {
        var script = SchedulerScript()
        if commitTiming {
            script.scheduler = WaylandRefreshScheduler(
                configuration: .init(timesCommits: true),
                advertisedPeriod: Nanoseconds(p))
        }
        script.start(at: 0)
        for k in 1...frames {
            let presented = mutterQ(k - 1)
            script.presented(frame: UInt64(k - 1), at: presented, received: presented + 300_000)
            script.callback(at: presented + 300_000)
        }
        return script
    }

    static func mutterQ(_ k: Int) -> Int64 {
        switch k {
        case 0: 28 * ms
        case 1: 35 * ms
        case 2: 46 * ms
        default: 46 * ms + Int64(k - 2) * p
        }
    }

    @Test("mutter-like start-up: off-grid first presentations are no period; targets exact from the third frame")
    func mutterStartup() {
        let script = Self.mutterRun(frames: 30)
        let q = Self.mutterQ
        // Frame 0: no rhythm yet. Frames 1 and 2 are presented off the grid (mutter idle), so
        // their targets, one advertised period after the newest presentation, are that far off.
        #expect(script.targets[0] == Self.p)
        #expect(script.targets[1] == q(0) + Self.p)
        for k in 3..<script.refreshes.count {
            #expect(script.targets[k] == q(k), "frame \(k)")
        }
        // 7 and 11 ms are below 0.75 periods: not learned as periods.
        #expect(script.refreshes[4].event.refreshPeriod.value == Self.p)
        #expect(script.scheduler.learnedDepth == 1)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("a start-up stall (one interval of 10 periods) is not taken for the period")
    func startupStall() {
        var script = SchedulerScript()
        let p = Self.p
        let times: [Int64] = [5 * ms, 5 * ms + p, 5 * ms + 11 * p, 5 * ms + 12 * p, 5 * ms + 13 * p]
        script.start(at: 0)
        for (k, time) in times.enumerated() {
            script.presented(frame: UInt64(k), at: time)
            script.callback(at: time + ms)
        }
        #expect(script.refreshes.last?.event.refreshPeriod.value == p)
        #expect(script.targets.last == times.last! + p)
    }

    @Test("commit timing: each refresh's commit target is 0.5 ms before its target, and comes back with its feedback")
    func commitTargets() {
        let script = Self.mutterRun(frames: 20, commitTiming: true)
        // Before any presentation (the surface may not be mapped yet): no commit target.
        #expect(script.refreshes[0].commitTarget == nil)
        for refresh in script.refreshes.dropFirst() {
            let target = refresh.event.targetTimestamp!
            #expect(refresh.commitTarget == MonotonicInstant(nanoseconds: target.nanoseconds - 500_000))
        }
        for feedback in script.delivered {
            let refresh = script.refreshes[Int(feedback.refreshIndex)]
            #expect(feedback.commitTarget == refresh.commitTarget)
        }
        // Without commit timing: none.
        let plain = Self.mutterRun(frames: 5)
        #expect(plain.refreshes.allSatisfy { $0.commitTarget == nil })
        #expect(plain.delivered.allSatisfy { $0.commitTarget == nil })
    }

    @Test("presentation flags are kept with each presented frame")
    func flagsKept() {
        var script = SchedulerScript()
        script.start(at: 0)
        let slot = script.refreshes[0].feedbackSlot!
        let feedback = script.scheduler.presented(
            slot: slot, at: t(10 * ms), receivedAt: t(11 * ms), sequence: 0,
            advertisedRefresh: Nanoseconds(Self.p),
            flags: [.vsync, .hardwareCompletion])
        #expect(feedback?.flags == [.vsync, .hardwareCompletion])
        #expect(feedback?.flags?.names == ["vsync", "hw_completion"])
    }

    @Test("refresh 0 (variable refresh): the advertised period is no reference, the period comes from measurement")
    func variableRefresh() {
        var script = SchedulerScript()
        // Presented every 40 ms (25 Hz, far from the advertised 60 Hz), refresh 0 in the feedback.
        script.start(at: 0)
        for k in 0..<6 {
            let time = 10 * ms + Int64(k) * 40 * ms
            script.presented(frame: UInt64(k), at: time, refresh: .zero)
            script.callback(at: time + ms)
        }
        #expect(script.scheduler.isAdvertisedPeriodUnreliable)
        #expect(script.refreshes.last?.event.refreshPeriod.value == 40 * ms)
        #expect(script.targets.last == 10 * ms + 5 * 40 * ms + 40 * ms)
    }

    @Test("an output or mode change forgets the rhythm: the new period is learned from the next presentations")
    func outputChange() {
        var script = Self.mutterRun(frames: 10)
        #expect(script.refreshes.last?.event.refreshPeriod.value == Self.p)
        // The surface moves to a 100 Hz output.
        script.scheduler.outputChanged(to: 2, advertisedPeriod: Nanoseconds(10 * ms))
        #expect(script.scheduler.measuredIntervalCount == 0)
        #expect(script.scheduler.period.value == 10 * ms)
        var time = Self.mutterQ(9) + 10 * ms
        for k in 10..<16 {
            script.presented(frame: UInt64(k), at: time, received: time + 300_000, refresh: Nanoseconds(10 * ms))
            script.callback(at: time + 300_000)
            time += 10 * ms
        }
        #expect(script.refreshes.last?.event.refreshPeriod.value == 10 * ms)
        #expect(script.targets.last == time)
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("suspended: at once no refresh, request or watchdog; resumed: one start following a stall")
    func suspension() {
        var script = Self.mutterRun(frames: 5)
        let requests = script.scheduler.frameRequestCount
        let count = script.refreshes.count
        let now = Self.mutterQ(5)
        // The compositor suspends the window; the outstanding callback is answered anyway.
        let suspendStarts = script.scheduler.suspendedChanged(true, at: t(now))
        #expect(!suspendStarts)
        #expect(script.scheduler.isSuspended)
        #expect(!script.scheduler.wantsWatchdog)
        script.presented(frame: 5, at: now, received: now + 300_000)
        script.callback(at: now + 300_000)
        #expect(script.refreshes.count == count)
        let due = script.scheduler.startDue(at: t(now + ms))
        #expect(due == nil)
        let action = script.watchdog(at: now + 10_000 * ms)
        #expect(action == .nothing)
        #expect(script.scheduler.frameRequestCount == requests)
        // Demand changes while suspended schedule nothing.
        script.stop(at: now + 20_000 * ms)
        let started = script.start(at: now + 20_001 * ms)
        #expect(!started)
        // Resumed: one start refresh, following a stall.
        let back = now + 30_000 * ms
        let resumed = script.scheduler.suspendedChanged(false, at: t(back))
        let again = script.scheduler.suspendedChanged(false, at: t(back))
        #expect(resumed && !again)
        let start = script.scheduler.startDue(at: t(back))
        #expect(start?.event.followsStall == true)
        #expect(start?.requestsFrameCallback == true)
        #expect(script.scheduler.frameRequestCount == requests + 1)
    }

    @Test(
        """
        suspended before the first frame: the start refresh still goes (it maps the surface); once content is committed, suspension holds \
        starts back
        """
    )
    func suspensionBeforeFirstFrame() {
        var script = SchedulerScript()
        #expect(!script.scheduler.hasCommittedContent)
        // mutter 48 suspends a window left without a buffer: before the link starts…
        let early = script.scheduler.suspendedChanged(true, at: t(0))
        #expect(!early)
        #expect(script.scheduler.isSuspended && !script.scheduler.wantsWatchdog)
        let started = script.start(at: 5 * ms)
        #expect(started)
        #expect(script.refreshes.count == 1)
        #expect(script.refreshes.first?.requestsFrameCallback == true)
        #expect(script.refreshes.first?.event.followsStall == false)
        #expect(script.scheduler.hasCommittedContent)
        // The window is shown and resumed; the outstanding callback paces on, after the stall.
        let resumed = script.scheduler.suspendedChanged(false, at: t(20 * ms))
        #expect(!resumed)
        script.presented(frame: 0, at: 28 * ms, received: 28 * ms + 300_000)
        let next = script.callback(at: 28 * ms + 300_000)
        #expect(next?.event.followsStall == true)
        #expect(next?.requestsFrameCallback == true)

        // …or between the link's start and its start refresh.
        var pending = SchedulerScript()
        let scheduled = pending.scheduler.demandChanged(true, at: t(0))
        _ = pending.scheduler.suspendedChanged(true, at: t(1 * ms))
        let first = pending.scheduler.startDue(at: t(2 * ms))
        #expect(scheduled && first?.requestsFrameCallback == true)

        // A start refresh whose target drew nothing leaves the surface without content: the next
        // start still goes while suspended. With content, suspension holds starts back.
        var empty = SchedulerScript()
        empty.draws = false
        _ = empty.scheduler.suspendedChanged(true, at: t(0))
        empty.start(at: 1 * ms)
        empty.stop(at: 2 * ms)
        empty.scheduler.frameCallbackDone(at: t(3 * ms))
        let again = empty.start(at: 4 * ms)
        #expect(again)
        #expect(empty.refreshes.count == 2 && !empty.scheduler.hasCommittedContent)
        empty.scheduler.contentCommitted()
        empty.stop(at: 5 * ms)
        empty.scheduler.frameCallbackDone(at: t(6 * ms))
        let held = empty.start(at: 7 * ms)
        #expect(!held)
        #expect(empty.scheduler.startDue(at: t(7 * ms)) == nil)
        #expect(empty.refreshes.count == 2)
    }

    @Test("suspended while a callback is outstanding: the resume waits for it, and it follows the stall")
    func suspensionWithOutstandingCallback() {
        var script = Self.mutterRun(frames: 5)
        let now = Self.mutterQ(5)
        _ = script.scheduler.suspendedChanged(true, at: t(now))
        let resumed = script.scheduler.suspendedChanged(false, at: t(now + 1000 * ms))
        #expect(!resumed)
        script.presented(frame: 5, at: now + 1001 * ms, received: now + 1001 * ms)
        let refresh = script.callback(at: now + 1001 * ms)
        #expect(refresh?.event.followsStall == true)
    }
}
