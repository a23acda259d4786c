import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

/// Commit timing made safe (held timed commits end it, and the held frame is released), timed
/// commits a link interval ahead for a preferred rate below the refresh, and the FIFO barrier
/// rule, on virtual time: exact values on scripted runs, and properties on
/// ``TimedCompositorModel``.
@Suite("Wayland scheduler: held timed commits, strides, FIFO")
struct WaylandCommitTimingTests {
    static let p = TimedCompositorModel.p

    /// mutter-like presentations every period with commit timing; the compositor then holds frame
    /// `heldFrame`'s commit (no callback, no feedback).
    static func heldRun(fallsBack: Bool = true) -> (script: SchedulerScript, heldTarget: Int64, lastCallback: Int64) {
        var script = SchedulerScript()
        script.scheduler = WaylandRefreshScheduler(
            configuration: .init(timesCommits: true, fallsBackFromHeldCommits: fallsBack),
            advertisedPeriod: Nanoseconds(p))
        script.start(at: 0)
        var last: Int64 = 0
        for k in 1...10 {
            let presented = 5 * ms + Int64(k) * p
            script.presented(frame: UInt64(k - 1), at: presented, received: presented + 300_000, sequence: UInt64(k))
            last = presented + 300_000
            script.callback(at: last)
        }
        let held = script.refreshes.last!.commitTarget!.nanoseconds - origin
        return (script, held, last)
    }

    @Test(
        """
        held timed commit: nothing before its target plus 3 periods; at that time the gate stops on the output, one release a period \
        ahead, untimed commits, and the return follows a stall
        """
    )
    func heldCommitFallsBack() {
        var (script, held, last) = Self.heldRun()
        let p = Self.p
        let limit = WaylandRefreshScheduler.heldCommitPeriods * p
        #expect(limit == 3 * p)
        #expect(script.scheduler.hasOutstandingFrameCallback)
        #expect(held > last)
        #expect(script.scheduler.commitTimingGate.state == .open)
        #expect(script.scheduler.heldCommitCheckTime == t(held + limit))
        // 1 ns early: nothing.
        #expect(script.scheduler.heldCommitCheck(at: t(held + limit - 1)) == .nothing)
        #expect(!script.scheduler.isCommitTimingFallenBack)
        // At the limit: held. Released a period ahead.
        let due = held + limit
        #expect(script.scheduler.heldCommitCheck(at: t(due)) == .fallBack(release: t(due + p)))
        #expect(script.scheduler.isCommitTimingFallenBack)
        #expect(script.scheduler.commitTimingGate.state == .stopped)
        #expect(!script.scheduler.isTimingCommits)
        #expect(script.scheduler.isStalled)
        #expect(script.scheduler.commitTimingFallbackReason?.contains("\(limit / ms) ms after its target") == true)
        // The release is watched until a callback asked for after it comes, twice as long (each
        // release without a callback doubles the wait, up to 32 times).
        #expect(script.scheduler.heldCommitCheckTime == t(due + p + 2 * limit))
        // The release lets the held frame and its callback through: the next refresh follows a
        // stall and carries no commit target, nor does any after it, VSYNC feedback or not.
        let released = due + p
        script.presented(frame: 10, at: released, received: released + 300_000, sequence: 60)
        let next = script.callback(at: released + 300_000)!
        #expect(next.event.followsStall)
        #expect(next.commitTarget == nil)
        for k in 1...5 {
            let presented = released + Int64(k) * p
            script.presented(frame: next.index + UInt64(k - 1), at: presented, sequence: 60 + UInt64(k))
            #expect(script.callback(at: presented + 300_000)?.commitTarget == nil)
        }
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test(
        """
        a compositor that sends no callback at all after a hold (stuck, blanked): each release without a callback doubles the wait for \
        the next, up to 32 times the limit (about 1.6 s at 60 Hz), never a release every few periods; a callback resets it
        """
    )
    func releasesBackOff() {
        var (script, held, _) = Self.heldRun()
        let p = Self.p
        let limit = WaylandRefreshScheduler.heldCommitPeriods * p
        var now = held + limit
        var gaps: [Int64] = []
        for _ in 0..<8 {
            guard case .fallBack(let release) = script.scheduler.heldCommitCheck(at: t(now)) else {
                Issue.record("no release at \(now)")
                return
            }
            let next = script.scheduler.heldCommitCheckTime!.nanoseconds - origin
            gaps.append(next - now)
            #expect(next - (release.nanoseconds - origin) == gaps.last! - p)
            now = next
        }
        #expect(gaps == [2, 4, 8, 16, 32, 32, 32, 32].map { p + Int64($0) * limit }, "\(gaps)")
        #expect(script.scheduler.releaseCount == 8)
        // The held frame's callback at last: the next release is a plain limit away again.
        let arrival = now + ms
        script.presented(frame: 10, at: arrival - 300_000, sequence: 90)
        let next = script.callback(at: arrival)!
        #expect(next.commitTarget == nil)
        #expect(script.scheduler.heldCommitCheckTime.map { $0.nanoseconds - origin } == arrival + limit)
    }

    @Test(
        """
        a late compositor that calls back and presents before the limit keeps commit timing, and the watchdog starts afresh with the \
        next timed commit
        """
    )
    func lateCompositorKeepsCommitTiming() {
        var (script, held, _) = Self.heldRun()
        let p = Self.p
        let limit = WaylandRefreshScheduler.heldCommitPeriods * p
        // Presented two periods late, called back with it, before the limit.
        let presented = held + 2 * p
        script.presented(frame: 10, at: presented, sequence: 13)
        let arrival = presented + 300_000
        let next = script.callback(at: arrival)!
        #expect(script.scheduler.heldCommitCheck(at: t(held + limit)) == .nothing)
        #expect(!script.scheduler.isCommitTimingFallenBack)
        #expect(next.commitTarget != nil)
        // The watchdog now watches the new timed commit from its own target.
        let newTarget = next.commitTarget!.nanoseconds - origin
        #expect(script.scheduler.heldCommitCheckTime == t(max(newTarget, arrival) + limit))
    }

    @Test(
        """
        no fallback while the surface is on no output (minimised on weston 16 or mutter 50), nor once the held commit's frame has \
        feedback (applied, discarded); back on an output, the watchdog applies again, counting from the return (the target passed \
        while hidden)
        """
    )
    func hiddenOrAppliedIsNotHeld() {
        var (script, held, _) = Self.heldRun()
        let limit = WaylandRefreshScheduler.heldCommitPeriods * Self.p
        script.scheduler.surfaceLeftAllOutputs(true, at: t(held))
        #expect(script.scheduler.heldCommitCheckTime == nil)
        #expect(script.scheduler.heldCommitCheck(at: t(held + 10 * limit)) == .nothing)
        script.scheduler.surfaceLeftAllOutputs(false, at: t(held + 10 * limit))
        #expect(script.scheduler.heldCommitCheckTime == t(held + 11 * limit))
        #expect(script.scheduler.heldCommitCheck(at: t(held + 11 * limit - 1)) == .nothing)
        // The outstanding frame's feedback comes (discarded: replaced unseen): it was applied.
        script.discarded(frame: script.refreshes.last!.index)
        #expect(script.scheduler.heldCommitCheckTime == nil)
        #expect(script.scheduler.heldCommitCheck(at: t(held + 10 * limit)) == .nothing)
        #expect(!script.scheduler.isCommitTimingFallenBack)
    }

    @Test("3 periods of silence are not enough: the target must have passed by 3 periods too")
    func heldRuleNeedsTargetPassed() {
        var (script, held, last) = Self.heldRun()
        let limit = WaylandRefreshScheduler.heldCommitPeriods * Self.p
        // Silent for the limit, but the target (after the last callback) has not passed by it.
        #expect(held > last)
        #expect(script.scheduler.heldCommitCheck(at: t(last + limit)) == .nothing)
        #expect(script.scheduler.heldCommitCheckTime == t(held + limit))
    }

    @Test("fallsBackFromHeldCommits false: no watchdog; a held timed commit is an ordinary stall; commit targets go on")
    func noFallbackWhenForced() {
        var (script, held, _) = Self.heldRun(fallsBack: false)
        #expect(script.scheduler.heldCommitCheckTime == nil)
        #expect(script.scheduler.heldCommitCheck(at: t(held + 400 * ms)) == .nothing)
        #expect(script.watchdog(at: held + 400 * ms) == .nothing)
        #expect(script.watchdog(at: held + 600 * ms) == .stalled)
        #expect(!script.scheduler.isCommitTimingFallenBack)
        #expect(script.scheduler.isTimingCommits)
    }

    @Test("without commit timing a stall is a stall: no fallback, no release")
    func noCommitTimingNoRelease() {
        var script = SchedulerScript()
        script.start(at: 0)
        script.presented(frame: 0, at: 5 * ms + Self.p)
        script.callback(at: 5 * ms + Self.p + 300_000)
        #expect(script.watchdog(at: 600 * ms) == .stalled)
        #expect(!script.scheduler.isCommitTimingFallenBack)
    }

    @Test(
        """
        holding compositors like mutter 48 and mutter 50, exact: the map animation lets 8 timed frames through; the fallback 3 periods \
        past the held target; frames flow again every period
        """,
        arguments: [TimedCompositorModel.Holding.mutter48, .mutter50])
    func holdingModelExact(flavour: TimedCompositorModel.Holding) {
        var model = TimedCompositorModel(holds: true, honouredBeforeHolding: 8, watchdogInterval: 500 * ms)
        model.holding = flavour
        model.run(until: 3_000 * ms)
        let held = model.firstHeldTarget!
        let fallback = held + WaylandRefreshScheduler.heldCommitPeriods * Self.p
        #expect(model.fallbackAt == fallback)
        #expect(model.releases == [fallback])
        #expect(model.script.scheduler.isCommitTimingFallenBack)
        // The held frame comes at the release's vblank: a period ahead, at most two after the fallback.
        let after = model.callbackTimes.filter { $0 > fallback }
        #expect(after.first.map { $0 - fallback <= 2 * Self.p + ms } == true, "\(after.prefix(3))")
        #expect(after.count >= Int((3_000 * ms - fallback) / Self.p) - 3)
        for (a, b) in zip(after, after.dropFirst()) { #expect(b - a <= Self.p + 3 * ms) }
        #expect(invariantViolations(model.script).isEmpty, "\(invariantViolations(model.script).prefix(3))")
    }

    @Test(
        "the release of c0c6cd3 (one commit due at once) frees mutter 48's held frame but not mutter 50's: the model reproduces the freeze")
    func dueReleaseFreezesMutter50() {
        for flavour in [TimedCompositorModel.Holding.mutter48, .mutter50] {
            var model = TimedCompositorModel(holds: true, honouredBeforeHolding: 8, watchdogInterval: 500 * ms)
            model.holding = flavour
            model.releasesDueNow = true
            model.run(until: 3_000 * ms)
            let fallback = model.fallbackAt!
            let after = model.callbackTimes.filter { $0 > fallback }
            if flavour == .mutter48 { #expect(after.count > 100) } else { #expect(after.isEmpty) }
        }
    }

    @Test(
        """
        on a compositor that honours targets (late by up to 2 periods, any callback latency, any watchdog phase and interval, any link \
        interval), the fallback never triggers; on one that holds timed commits (mutter 48 or 50) it triggers exactly 3 periods past \
        the held target, and frames flow again
        """
    )
    func fallbackProperty() async {
        await propertyCheck(
            count: 150, input: Gen.int(in: 0...2).array(of: 1...12), Gen.int(in: 0...3_000).array(of: 1...12),
            Gen.int(in: 0...20), Gen.int(in: 1...3), Gen.int(in: 50...700), Gen.int(in: 0...700),
            Gen.bool(), Gen.int(in: 0...2)
        ) { lateness, latencies, honoured, interval, watchdogMs, phaseMs, mutter50, heldReleases in
            let watchdog = Int64(watchdogMs) * ms
            // The watchdog starts with the link, at 0 here, and fires every interval from `phase` on.
            let phase = Int64(phaseMs % watchdogMs) * ms
            var honouring = TimedCompositorModel(holds: false, watchdogInterval: watchdog, watchdogPhase: phase)
            honouring.lateness = lateness.map(Int64.init)
            honouring.latencies = latencies.map { Int64($0) * 1_000 }
            honouring.linkInterval = interval
            honouring.run(until: 2_000 * ms)
            #expect(honouring.fallbackAt == nil, "lateness \(lateness) latencies \(latencies)")
            #expect(honouring.releases.isEmpty)
            #expect(!honouring.script.scheduler.isCommitTimingFallenBack)
            #expect(honouring.script.refreshes.count > 5)
            #expect(invariantViolations(honouring.script).isEmpty, "\(invariantViolations(honouring.script).prefix(3))")

            var holding = TimedCompositorModel(
                holds: true, honouredBeforeHolding: honoured, watchdogInterval: watchdog,
                watchdogPhase: phase)
            holding.holding = mutter50 ? .mutter50 : .mutter48
            holding.releasesToHold = mutter50 ? heldReleases : 0
            holding.latencies = latencies.map { Int64($0) * 1_000 }
            holding.linkInterval = interval
            holding.run(until: 3_000 * ms)
            guard let held = holding.firstHeldTarget else {
                Issue.record("the holding model never held a commit")
                return
            }
            let limit = WaylandRefreshScheduler.heldCommitPeriods * Self.p
            guard let fallback = holding.fallbackAt else {
                Issue.record("no fallback; held target \(held)")
                return
            }
            #expect(
                fallback == held + limit,
                """
                honoured \(honoured) interval \(interval) latencies \(latencies) callbacks \
                \(holding.callbackTimes.filter { $0 > held - 100 * ms && $0 < fallback + 50 * ms })
                """
            )
            // One release, and one more for each release held.
            #expect(holding.releases.count == holding.script.scheduler.releaseCount)
            #expect(holding.script.scheduler.releaseCount == 1 + (mutter50 ? heldReleases : 0))
            // Frames flow again: the first callback within two periods of the release, then at
            // least every two periods, but for held releases: each doubles the watchdog's wait
            // (3 periods, then 6, 12) before the next release.
            let after = [fallback] + holding.callbackTimes.filter { $0 > fallback }
            #expect(after.count > 10, "only \(after.count - 1) callbacks after the fallback at \(fallback)")
            let gaps = zip(after, after.dropFirst()).map { $1 - $0 }
            #expect(
                gaps.filter { $0 > 2 * Self.p + 3 * ms }.count <= (mutter50 ? heldReleases : 0), "gaps \(gaps.filter { $0 > 2 * Self.p })")
            let longest = (3 * Int64(1 << (mutter50 ? heldReleases : 0)) + 2) * Self.p + 3 * ms
            #expect(gaps.allSatisfy { $0 <= longest }, "gaps \(gaps.filter { $0 > 2 * Self.p })")
            #expect(
                holding.script.refreshes.filter { $0.index > 0 && $0.event.timestamp.nanoseconds - origin > fallback }
                    .allSatisfy { $0.commitTarget == nil })
            #expect(invariantViolations(holding.script).isEmpty, "\(invariantViolations(holding.script).prefix(3))")
        }
    }

    // MARK: Strides

    @Test(
        """
        link interval 2 with commit timing on a honouring 60 Hz compositor, exact: once the period is measured each target is two periods \
        on, its commit 0.5 ms before; a wake-up every two periods; depth and period stay learned per refresh
        """
    )
    func strideExact() {
        var model = TimedCompositorModel(holds: false, watchdogInterval: 500 * ms)
        model.linkInterval = 2
        model.run(until: 1_000 * ms)
        let script = model.script
        let strided = script.refreshes.filter { $0.stride == 2 }
        #expect(strided.count > 20)
        for r in strided {
            let target = r.event.targetTimestamp!.nanoseconds
            #expect(target == r.event.timestamp.nanoseconds + 2 * Self.p, "refresh \(r.index)")
            #expect(r.commitTarget!.nanoseconds == target - WaylandRefreshScheduler.commitTargetMargin.value)
            #expect(r.event.refreshPeriod.value == Self.p)
            // Presented exactly at its target.
            if let v = model.presentedAt[r.index] { #expect(v + origin == target, "refresh \(r.index)") }
        }
        #expect(script.scheduler.learnedDepth == 1)
        #expect(script.scheduler.period.value == Self.p)
        // Wake-ups two periods apart once strided.
        let firstStrided = strided.first!.event.timestamp.nanoseconds - origin
        let wakes = model.callbackTimes.filter { $0 > firstStrided }
        for (a, b) in zip(wakes, wakes.dropFirst()) { #expect(b - a == 2 * Self.p) }
        // Sequences step by 2: a link at interval 2 fires on every refresh, missing none.
        for (a, b) in zip(strided, strided.dropFirst()) { #expect(b.event.sequence! - a.event.sequence! == 2) }
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script).prefix(3))")
    }

    @Test("link interval 10 strides by 5 (the largest divisor up to 8), not 8: the link still fires every 10 periods, missing none")
    func strideDividesInterval() {
        #expect(WaylandRefreshScheduler.largestDivisor(of: 10, atMost: 8) == 5)
        #expect(WaylandRefreshScheduler.largestDivisor(of: 9, atMost: 8) == 3)
        #expect(WaylandRefreshScheduler.largestDivisor(of: 16, atMost: 8) == 8)
        #expect(WaylandRefreshScheduler.largestDivisor(of: 7, atMost: 8) == 7)
        #expect(WaylandRefreshScheduler.largestDivisor(of: 11, atMost: 8) == 1)
        #expect(WaylandRefreshScheduler.largestDivisor(of: 0, atMost: 8) == 1)
        var model = TimedCompositorModel(holds: false, watchdogInterval: 500 * ms)
        model.linkInterval = 10
        model.run(until: 2_000 * ms)
        let strided = model.script.refreshes.filter { $0.stride > 1 }
        #expect(strided.count > 10)
        #expect(strided.allSatisfy { $0.stride == 5 })
        for (a, b) in zip(strided, strided.dropFirst()) { #expect(b.event.sequence! - a.event.sequence! == 5) }
        #expect(invariantViolations(model.script).isEmpty, "\(invariantViolations(model.script).prefix(3))")
    }

    @Test(
        """
        the stride decision: only with commit timing in use, a link interval ≥ 2, the period measured and a depth learned; striding halves \
        the wake-ups at 30 Hz on 60 Hz and saves none at 60 Hz
        """,
        arguments: [1, 2, 3])
    func strideSavesWakeups(interval: Int) {
        func wakes(commitTiming: Bool, seq: Bool) -> Int {
            var model = TimedCompositorModel(holds: false, commitTiming: commitTiming, watchdogInterval: 500 * ms)
            model.linkInterval = interval
            model.countsSequence = seq
            model.run(until: 2_000 * ms)
            return model.callbackTimes.filter { $0 >= 1_000 * ms && $0 < 2_000 * ms }.count
        }
        let perSecond = Int((1_000 * ms) / Self.p)  // 60
        for seq in [true, false] {
            let plain = wakes(commitTiming: false, seq: seq)
            let timed = wakes(commitTiming: true, seq: seq)
            #expect(abs(plain - perSecond) <= 1)
            #expect(abs(timed - perSecond / interval) <= 1, "interval \(interval), seq \(seq): \(timed) wakes")
        }
        var plainScheduler = WaylandRefreshScheduler(configuration: .init(timesCommits: false))
        plainScheduler.linkFrameInterval = interval
        #expect(plainScheduler.stride == 1)
    }

    @Test(
        """
        before content, a refresh that drew nothing asks for the next one a period on: an estimate, no second frame request; none once \
        content was committed, or once another refresh came
        """
    )
    func preContentTicks() {
        let p = Nanoseconds(Self.p)
        var s = WaylandRefreshScheduler(advertisedPeriod: p)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        let scheduled = s.demandChanged(true, at: t0)
        #expect(scheduled)
        let first = s.startDue(at: t0)!
        #expect(first.requestsFrameCallback)
        let due = s.refreshEndedWithoutContent()
        #expect(due == t0 + p)
        let tick = s.preContentTickDue(at: t0 + p, index: s.nextRefreshIndex)!
        #expect(tick.event.timestamp == t0 + p && tick.event.targetTimestamp == t0 + p * 2)
        #expect(tick.event.provenance == .frameCallbackEstimate && !tick.event.followsStall)
        #expect(!tick.requestsFrameCallback, "the first request is still outstanding")
        #expect(tick.event.sequence! == first.event.sequence! + 1)
        // Asked for, then a refresh came first: the tick is not due any more.
        let stale = s.nextRefreshIndex
        _ = s.preContentTickDue(at: t0 + p * 2, index: stale)!
        let late = s.preContentTickDue(at: t0 + p * 3, index: stale)
        #expect(late == nil)
        // Content committed: the compositor paces from here.
        s.contentCommitted()
        #expect(s.refreshEndedWithoutContent() == nil)
        let afterContent = s.preContentTickDue(at: t0 + p * 4, index: s.nextRefreshIndex)
        #expect(afterContent == nil)
        // Nobody wants refreshes: none either. Wanted again (still no content, the first request
        // unanswered): a start refresh, not a wait for that request.
        var idle = WaylandRefreshScheduler(advertisedPeriod: p)
        _ = idle.demandChanged(true, at: t0)
        _ = idle.startDue(at: t0)
        _ = idle.demandChanged(false, at: t0)
        #expect(idle.refreshEndedWithoutContent() == nil)
        let again = idle.demandChanged(true, at: t0 + p * 10)
        #expect(again)
        let restart = idle.startDue(at: t0 + p * 10)
        #expect(restart != nil && restart?.requestsFrameCallback == false)
        // Once the compositor answered a request it paces: no ticks, and demand waits for its callback.
        var answered = WaylandRefreshScheduler(advertisedPeriod: p)
        _ = answered.demandChanged(true, at: t0)
        _ = answered.startDue(at: t0)
        answered.frameCallbackDone(at: t0 + p)
        _ = answered.eventsDispatched()
        #expect(answered.refreshEndedWithoutContent() == nil)
    }

    @Test("a compositor that calls back before a strided commit's target: striding saves nothing and is dropped")
    func strideUseless() {
        var (script, _, last) = Self.heldRun()
        // Measured and learned by now.
        script.scheduler.linkFrameInterval = 2
        #expect(script.scheduler.stride == 2)
        // The outstanding commit (made before the interval changed) is not strided; the next is.
        let presented = last - 300_000 + Self.p
        script.presented(frame: 10, at: presented, sequence: 11)
        let strided = script.callback(at: presented + 300_000)!
        #expect(strided.stride == 2)
        // Called back one period later, before the commit target (1.5 periods on).
        script.presented(frame: strided.index, at: presented + Self.p, sequence: 12)
        let next = script.callback(at: presented + Self.p + 300_000)!
        #expect(script.scheduler.isStridingUseless)
        #expect(next.stride == 1)
        #expect(script.scheduler.stride == 1)
    }

    // MARK: FIFO

    @Test(
        """
        FIFO barrier: not on the start refresh (unmapped), on every compositor-paced refresh after the first presentation, never on a \
        timer fallback tick; back on the first paced refresh after a stall
        """
    )
    func fifoRule() {
        var script = SchedulerScript(stallTimeout: Nanoseconds(200 * ms), fallbackTickInterval: Nanoseconds(50 * ms))
        script.start(at: 0)
        #expect(script.refreshes[0].setsFifoBarrier == false)
        for k in 1...5 {
            let presented = 5 * ms + Int64(k) * Self.p
            script.presented(frame: UInt64(k - 1), at: presented, sequence: UInt64(k))
            #expect(script.callback(at: presented + 300_000)?.setsFifoBarrier == true)
        }
        // Hidden: callbacks stop; the watchdog ticks.
        let last = 5 * ms + 5 * Self.p + 300_000
        var ticks = 0
        for n in 1...10 {
            if case .fallbackTick(let tick) = script.watchdog(at: last + Int64(n) * 50 * ms) {
                #expect(tick.setsFifoBarrier == false)
                #expect(!tick.requestsFrameCallback)
                ticks += 1
            }
        }
        #expect(ticks == 7)
        // Shown again: the outstanding callback comes; its refresh waits on the barrier again.
        let back = last + 600 * ms
        let resumed = script.callback(at: back)!
        #expect(resumed.event.followsStall)
        #expect(resumed.setsFifoBarrier)
    }
}
