import DisplayLinkCore

/// Low latency on Wayland: a callback starts as late as its frame can still be committed for its
/// target, its deadline less the program's learned render time, instead of when the frame event
/// arrives (which on weston, mutter and kwin is just after the compositor latched its repaint, a
/// whole period before the next one it can show).
extension WaylandRefreshScheduler {
    /// The lead assumed before the compositor's latch is learned: weston's default repaint window
    /// is 7 ms before the presentation, and mutter and kwin latch later.
    public static let latchPrior = Nanoseconds(8_000_000)
    /// A start planned closer than this to now starts now (a timer costs more than it gains).
    public static let minimumDelay = Nanoseconds(500_000)
    /// The least time allowed for the timer to wake late (``wakeLateness`` when it is more): a
    /// wake-up 2–4 ms late comes about once in 600 frames on an idle machine (the main queue busy
    /// with the frame before's presentation), and one that misses the latch costs, with FIFO,
    /// two frames.
    public static let minimumWakeAllowance = Nanoseconds(2_000_000)

    /// Under `LatencyPolicy.lowLatency`, when the callback for `refresh` should start: its
    /// deadline less the render time learned (with its margin) and less how late the shell's
    /// timer may wake (``wakeLateness``, at least ``minimumWakeAllowance``). Nil: start now (throughput; a timer
    /// tick; the period or the render time not learned yet; or the start is not ``minimumDelay``
    /// away). The shell calls ``callbackStarted(at:plannedFor:)`` when it runs the callback.
    public func plannedStart(for refresh: Refresh, now: MonotonicInstant) -> MonotonicInstant? {
        guard latency == .lowLatency, refresh.event.provenance != .timerFallback, !isStalled, isPeriodMeasured,
            let deadline = refresh.event.deadline, let budget = renderTime.budget
        else { return nil }
        let allowance = max(wakeLateness.estimate?.value ?? 0, WaylandRefreshScheduler.minimumWakeAllowance.value)
        let start = deadline.time - budget - Nanoseconds(allowance)
        return start > now + WaylandRefreshScheduler.minimumDelay ? start : nil
    }

    /// A refresh's callback starts now (`time`), at a start planned for `planned` or at once
    /// (nil): the render time of its frame counts from here to ``frameCommitted(at:)``, and a
    /// planned start teaches how late the timer wakes.
    public mutating func callbackStarted(at time: MonotonicInstant, plannedFor planned: MonotonicInstant? = nil) {
        callbackBegan = time
        if let planned { wakeLateness.record(time - planned) }
    }
}
