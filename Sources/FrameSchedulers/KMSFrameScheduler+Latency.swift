import DisplayLinkCore

/// Low latency on DRM/KMS: when a callback starts, planned from its deadline, the program's
/// render times and how late the shell's timer wakes.
extension KMSFrameScheduler {
    /// Under `LatencyPolicy.lowLatency`, when the callback for `event` (just made by
    /// ``beginCallback(refreshIndex:now:)``) should start: its deadline less the
    /// ``planningBudget`` and less how late the process has been waking (``wakeAllowance``).
    /// Nil: start now (throughput; nothing learned yet; a flip pending or a frame held, whose
    /// successor is late already; a planning budget and wake allowance over half a period
    /// together, for which waiting gains less than half a period and a wake-up or a frame later
    /// than allowed costs the frame, as llvmpipe under emulation showed; or the start is not later
    /// than ``minimumDelay`` from now). The shell calls ``callbackStarted(at:plannedFor:)`` when
    /// it runs it.
    public func plannedStart(for event: RefreshEvent, now: MonotonicInstant) -> MonotonicInstant? {
        guard latency == .lowLatency, flipping == nil, held == nil, let deadline = event.deadline,
            let budget = planningBudget
        else { return nil }
        let (total, overflow) = budget.value.addingReportingOverflow(wakeAllowance.value)
        guard !overflow, total <= period.value / 2 else { return nil }
        let start = deadline.time - budget - wakeAllowance
        return start > now + KMSFrameScheduler.minimumDelay ? start : nil
    }

    /// The time a planned start allows for drawing: the render budget (the estimate, which decays
    /// after a slow frame, and its margin), or, when longer, the ``renderPeak`` (the longest
    /// render time under a period of the last 225–256 frames) plus its spread over the median of
    /// the last `RecentMedian.capacity`, at least the margin. Render times that scatter
    /// (llvmpipe under emulation: one frame in a hundred at twice the median) bring a frame
    /// slower than any of the last 31 now and then; a start planned with the estimate alone, or
    /// with the recent longest, then misses its vblank. With the long window and the spread,
    /// only render times that hold steady are planned with. Nil: nothing measured.
    public var planningBudget: Nanoseconds? {
        guard let budget = renderTime.budget else { return nil }
        guard let peak = renderPeak.largest else { return budget }
        let spread = max(renderTime.margin.value, peak &- recentRenderTimes.median)
        let (longest, overflow) = peak.addingReportingOverflow(spread)
        return Nanoseconds(max(budget.value, overflow ? .max : longest))
    }

    /// How long before a planned start the process is allowed to wake late: the learned
    /// ``wakeLateness``, at most half a period (see ``RenderTimeEstimator/allowance(atLeast:atMost:)``).
    public var wakeAllowance: Nanoseconds { wakeLateness.allowance(atMost: Nanoseconds(period.value / 2)) }
}
