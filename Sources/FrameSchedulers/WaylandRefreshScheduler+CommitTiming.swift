import DisplayLinkCore

/// Commit timing: each commit's target time, and strides for a preferred rate below the refresh
/// (see <doc:WaylandScheduling>).
extension WaylandRefreshScheduler {
    /// The stride the next compositor-paced refresh gets (see <doc:WaylandScheduling>): the largest
    /// divisor of the link interval up to ``maximumStride`` (so every link still fires on its
    /// refresh: 5 for an interval of 10, not 8) when striding saves wake-ups, else 1.
    public var stride: Int {
        guard isTimingCommits, !isStridingUseless, isPeriodMeasured, timeline.latest != nil,
            let depth = learnedDepth
        else { return 1 }
        let stride = WaylandRefreshScheduler.largestDivisor(
            of: linkFrameInterval,
            atMost: WaylandRefreshScheduler.maximumStride)
        return stride > depth ? stride : 1
    }

    /// The largest divisor of `n` (≥ 1) that is at most `limit` (≥ 1).
    public static func largestDivisor(of n: Int, atMost limit: Int) -> Int {
        guard n > 1 else { return 1 }
        var d = min(n, max(1, limit))
        while n % d != 0 { d -= 1 }
        return d
    }

    /// Periods a strided refresh's target lies beyond the depth's (0 without a stride).
    func extraPeriods(forStride stride: Int) -> Int {
        guard stride > 1, let depth = learnedDepth else { return 0 }
        return max(0, stride - depth)
    }

    /// The time a commit made at `now` for a frame aimed at `target` asks not to be shown before
    /// (see <doc:WaylandScheduling>): ``commitTargetMargin`` (at most half a period) before it
    /// while the feedback carries `VSYNC` (presentations on the vblank grid), else half a period
    /// before it (the gate bypassed: presentations without `VSYNC` are off any grid, weston 16
    /// headless presents every 17–25 ms), while the gate allows timed commits and once
    /// a presentation is known; else nil. Before the first presentation the surface may not be
    /// mapped: mutter 48 never applies a timed commit of a surface that is on no output yet. A
    /// time less than ``minimumCommitLead`` ahead is due by the time the frame is committed, so
    /// that commit goes untimed.
    func commitTarget(for target: MonotonicInstant, now: MonotonicInstant) -> MonotonicInstant? {
        guard isTimingCommits, timeline.latest != nil else { return nil }
        let half = Nanoseconds(period.value / 2)
        let margin = commitTimingGate.isOnVblankGrid ? min(WaylandRefreshScheduler.commitTargetMargin, half) : half
        let aim = target + Nanoseconds(-margin.value)
        guard aim >= now + WaylandRefreshScheduler.minimumCommitLead else { return nil }
        return aim
    }
}
