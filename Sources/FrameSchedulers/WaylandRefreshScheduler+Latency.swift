import DisplayLinkCore

/// Low latency on Wayland: a callback starts as late as its frame can still be committed for its
/// target, its deadline less the program's learned render time, instead of when the frame event
/// arrives (on weston and kwin just after the compositor latched its repaint, on mutter after the
/// presentation: in each case about a period before the next repaint it can show).
extension WaylandRefreshScheduler {
    /// The lead assumed before the compositor's latch is learned: weston's default repaint window
    /// is 7 ms before the presentation, and mutter and kwin latch later.
    public static let latchPrior = Nanoseconds(8_000_000)
    /// A start planned closer than this to now starts now (a timer costs more than it gains).
    public static let minimumDelay = Nanoseconds(500_000)
    /// A frame callback this soon after its commit says nothing about the compositor's latch.
    public static let callbackAfterCommitMinimum = Nanoseconds(1_000_000)
    /// The least time allowed for the timer to wake late (``wakeLateness`` when it is more): a
    /// wake-up 2–4 ms late comes about once in 600 frames on an idle machine (the main queue busy
    /// with the frame before's presentation), and one that misses the latch costs, with FIFO,
    /// two frames.
    public static let minimumWakeAllowance = Nanoseconds(2_000_000)

    /// Under `LatencyPolicy.lowLatency`, when the callback for `refresh` should start: its
    /// deadline less the render time learned (with its margin) and less how late the shell's
    /// timer may wake (``wakeLateness``, at least ``minimumWakeAllowance``). Nil: start now (throughput; a timer
    /// tick; the period, the render time or any outcome of a frame not learned yet, so the
    /// first frames start at their frame events and the first feedback can say the prior is too
    /// short before it is planned with; or the start is not
    /// ``minimumDelay`` away). The shell calls ``callbackStarted(at:plannedFor:)`` when it runs the callback.
    public func plannedStart(for refresh: Refresh, now: MonotonicInstant) -> MonotonicInstant? {
        guard latency == .lowLatency, refresh.event.provenance != .timerFallback, !isStalled, isPeriodMeasured,
            deadlines.hasOutcomes, let deadline = refresh.event.deadline, let budget = renderTime.budget
        else { return nil }
        let start = deadline.time - budget - wakeAllowance
        return start > now + WaylandRefreshScheduler.minimumDelay ? start : nil
    }

    /// How long before a planned start the timer is allowed to wake late: the learned
    /// ``wakeLateness``, at least ``minimumWakeAllowance`` and at most half a period (see
    /// ``RenderTimeEstimator/allowance(atLeast:atMost:)``).
    var wakeAllowance: Nanoseconds {
        wakeLateness.allowance(atLeast: WaylandRefreshScheduler.minimumWakeAllowance, atMost: Nanoseconds(period.value / 2))
    }

    /// A refresh's callback starts now (`time`), at a start planned for `planned` or at once
    /// (nil): the render time of its frame counts from here to ``frameCommitted(at:)``, and a
    /// planned start teaches how late the timer wakes.
    public mutating func callbackStarted(at time: MonotonicInstant, plannedFor planned: MonotonicInstant? = nil) {
        callbackBegan = time
        if let planned { wakeLateness.record(time - planned) }
    }

    /// Under low latency, the refresh a frame whose callback arrived at `now` can really make,
    /// from the rhythm's prediction `predicted`.
    ///
    /// The prediction counts the presentation depth from the newest presentation known, which
    /// holds while frame callbacks come at their usual phase. A planned start aims at the target,
    /// so where the prediction is off the start turns the error into a lost refresh:
    /// - a callback that comes late, after the presentation it usually precedes (kwin's, when its
    ///   compositing ran late), is predicted a refresh too far, and a start planned for that
    ///   refresh leaves the one before it empty although it was still reachable;
    /// - the callback after that comes just after the latch of a frame still waiting to be
    ///   shown, and is predicted that frame's refresh, which FIFO gives to the frame before: it
    ///   is shown a refresh after its target.
    ///
    /// So, once the period is measured, the target moves earlier by whole periods while the refresh
    /// before it is after `now`, `timestamp` and the last refresh's target (a refresh that drew
    /// nothing still commits for its target, with a FIFO barrier), after every committed frame
    /// still waiting, and its deadline leaves the render budget and ``minimumWakeAllowance`` from
    /// now; then later by whole periods until it is after every committed frame still waiting
    /// (``pastWaitingFrames(_:)``).
    ///
    /// And a target that a frame started now is sure to miss moves one period later: when the
    /// frame, ready after a typical render time (the median of the recent ones, at most the
    /// estimate), is submitted after the target less the longest lead
    /// known to be too short (``SubmitDeadlineLearner/tooShortLead``; none known: 0). The depth
    /// is learned from what frames made, and under low latency not from a miss (its lead is the
    /// deadline's to learn), so a depth one short is otherwise never corrected: every frame then
    /// misses, and the waiting frame, whose target is one short too, moves nothing. A compositor
    /// whose frame callbacks move from after the presentation to just before it teaches one
    /// before the period is measured. Only leads known to be too short count, not the 8 ms prior
    /// (an assumption: mutter, which calls back just after a presentation, latches about 2 ms
    /// before the next, so a frame drawn in 8 ms still makes it); and only one period (a
    /// render-time spike, which the estimate keeps for a while, is no depth). Not for a render
    /// estimate of a period or more, nor before one frame's render time is known.
    func reachableTarget(from predicted: MonotonicInstant, now: MonotonicInstant, timestamp: MonotonicInstant) -> MonotonicInstant {
        let p = period
        var target = predicted
        if let estimate = renderTime.estimate, estimate < p {
            // The typical frame (the recent median, at most the estimate): after one slow frame
            // the estimate stays high for a while, and the next frames, as fast as before, would
            // be aimed a period past the refresh they make.
            let typical = Nanoseconds(min(estimate.value, recentRenderTimes.median))
            let tooShort = deadlines.tooShortLead ?? .zero
            if target < now + typical + tooShort { target = target + p }
        }
        guard isPeriodMeasured, let budget = renderTime.budget, let lead = deadlines.lead?.lead else { return target }
        let half = Nanoseconds(p.value / 2)
        let waiting = waitingVblank()
        // The earliest target whose deadline (target − lead) a frame started now still makes.
        let earliestPlanned = now + budget + WaylandRefreshScheduler.minimumWakeAllowance + lead
        while true {
            let earlier = target - p
            guard earlier > now, earlier > timestamp, lastTarget.map({ earlier > $0 + half }) ?? true,
                waiting.map({ earlier > $0 + half }) ?? true, earlier >= earliestPlanned
            else { break }
            target = earlier
        }
        return Self.past(target, waiting: waiting, period: p)
    }

    /// The latest vblank a committed frame still waiting is shown at: its target, or, when it was
    /// committed later than its target less the longest lead known to be too short
    /// (``SubmitDeadlineLearner/tooShortLead``; none known: 0), the first vblank of its rhythm its
    /// commit still makes (it was drawn for longer than the time left, perhaps a period or more).
    /// From the commit, not from now: a compositor that calls back just after the presentation
    /// (mutter) may send the frame callback before that presentation's feedback. Nil: none waiting.
    func waitingVblank() -> MonotonicInstant? {
        let p = period.value
        let tooShort = deadlines.tooShortLead ?? .zero
        var waiting: MonotonicInstant?
        for slot in slots where slot.inUse {
            // From the rhythm's prediction, not the target it was given: a target moved past a
            // waiting frame would otherwise move the next one as far, and so on for good.
            guard let committed = slot.committed, var shown = slot.predicted ?? slot.target else { continue }
            let earliest = committed + tooShort
            if earliest > shown { shown = shown + Nanoseconds(((earliest - shown).value + p - 1) / p * p) }
            waiting = max(waiting ?? shown, shown)
        }
        return waiting
    }

    /// `target`, or whole periods later when it is not past every committed frame still waiting
    /// (``waitingVblank()``; on the same rhythm, to within half a period): with FIFO a frame is
    /// shown for a refresh at least, and without, a frame the compositor took is shown before a
    /// later commit.
    func pastWaitingFrames(_ target: MonotonicInstant) -> MonotonicInstant {
        Self.past(target, waiting: waitingVblank(), period: period)
    }

    /// `target`, or whole periods of `period` later when it is not past `waiting` (to within half
    /// a period).
    private static func past(_ target: MonotonicInstant, waiting: MonotonicInstant?, period p: Nanoseconds) -> MonotonicInstant {
        let half = Nanoseconds(p.value / 2)
        guard let waiting, target < waiting + half else { return target }
        return target + p * Int(((waiting + half) - target).value / p.value + 1)
    }
}
