import DisplayLinkCore
import Dispatch
import FrameSchedulers

/// Low latency (``Configuration/latency``): a refresh whose callback should start later than the
/// frame event (``WaylandRefreshScheduler/plannedStart(for:now:)``) is performed from a timer
/// made once, at its planned start.
extension WaylandFrameSource {
    /// Performs `refresh` now, or at its planned start under low latency.
    func deliver(_ refresh: WaylandRefreshScheduler.Refresh) {
        let now = MonotonicInstant.now()
        guard let start = scheduler.plannedStart(for: refresh, now: now), let timer = delayTimer else {
            perform(refresh)
            return
        }
        delayedRefresh = refresh
        delayedRefreshCount += 1
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: (start - now).value)))
    }

    /// The timer for planned starts, made when the source is (only under low latency).
    func makeDelayTimer() {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.setEventHandler { [weak self] in
            onMainActor(self) { $0?.runDelayedRefresh() }
        }
        delayTimer = timer
        timer.resume()
    }

    private func runDelayedRefresh() {
        guard let refresh = delayedRefresh else { return }
        delayedRefresh = nil
        guard error == nil else { return }
        perform(refresh)
    }
}
