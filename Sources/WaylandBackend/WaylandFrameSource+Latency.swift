import DisplayLinkCore
import FrameSchedulers

/// Low latency (``Configuration/latency``): a refresh whose callback should start later than the
/// frame event (``WaylandRefreshScheduler/plannedStart(for:now:)``) is performed at its planned
/// start by a timer made with the source.
extension WaylandFrameSource {
    /// Performs `refresh` now, or at its planned start under low latency.
    func deliver(_ refresh: WaylandRefreshScheduler.Refresh) {
        let now = MonotonicInstant.now()
        guard let start = scheduler.plannedStart(for: refresh, now: now), let timer = delayTimer else {
            perform(refresh)
            return
        }
        delayedRefresh = refresh
        delayedStart = start
        delayedRefreshCount += 1
        timer.schedule(at: start, now: now)
    }

    func runDelayedRefresh() {
        guard let refresh = delayedRefresh else { return }
        delayedRefresh = nil
        guard error == nil else { return }
        perform(refresh, plannedFor: delayedStart)
    }
}
