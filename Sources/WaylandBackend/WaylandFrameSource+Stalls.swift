import DisplayLinkCore
import Dispatch
internal import CWayland
internal import CWaylandClient

/// Stalls and failure: the watchdog timer that notices callbacks stopped (and ticks the links
/// while they are), the connection failing, and giving back outstanding requests.
extension WaylandFrameSource {
    // MARK: The watchdog

    func startWatchdog() {
        guard watchdog == nil else { return }
        let nanos = Int(clamping: scheduler.watchdogInterval.value)
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
            leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler { [weak self] in
            onMainActor(self) { $0?.watchdogFired() }
        }
        watchdog = timer
        timer.resume()
    }

    func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
    }

    private func watchdogFired() {
        guard error == nil else { return }
        // On the program's display, another reader (a toolkit's thread) may have queued events
        // for this source that nothing dispatched: they count before a stall does.
        if !paced.commitsItself { connection.dispatchPending() }
        let lost = scheduler.lostFrameCallbackCount
        switch scheduler.watchdog(now: MonotonicInstant.now()) {
        case .nothing:
            break
        case .stalled:
            logStall(fallback: false)
        case .fallbackTick(let refresh) where scheduler.lostFrameCallbackCount != lost:
            // The first, then every 100th: a compositor that loses many does not log per frame.
            if lost == 0 || (lost + 1) % 100 == 0 {
                WaylandFrameSource.log.warning(
                    """
                    the compositor presented a frame but sent no frame callback for it within \
                    \(scheduler.configuration.stallTimeout); asking for another (\(lost + 1) lost so far)
                    """)
            }
            perform(refresh)
        case .fallbackTick(let refresh):
            if !stallLogged { logStall(fallback: true) }
            perform(refresh)
        }
    }

    private func logStall(fallback: Bool) {
        stallLogged = true
        let timeout = scheduler.configuration.stallTimeout
        if fallback, let interval = scheduler.configuration.fallbackTickInterval {
            WaylandFrameSource.log.debug(
                """
                stalled: no frame callback for \(timeout) (window hidden or compositor not repainting); \
                timer fallback ticks every \(interval)
                """)
        } else {
            WaylandFrameSource.log.debug(
                """
                stalled: no frame callback for \(timeout) (window hidden or compositor not repainting); \
                waiting without ticking
                """)
        }
    }

    // MARK: Failure and teardown

    func connectionFailed(_ failure: WaylandError) {
        WaylandFrameSource.log.debug("the compositor connection failed: \(failure); links invalidated")
        error = failure
        scheduler.connectionFailed()
        stopWatchdog()
        heldCommitTimer?.cancel()
        heldCommitTimer = nil
        isHeldCommitTimerArmed = false
        uncommittedTimer?.cancel()
        stashedRefresh = nil
        frameCallback = nil
        for index in feedbackProxies.indices { feedbackProxies[index] = nil }
        dispatcher.invalidateAll()
    }

    func destroyPendingRequests() {
        guard error == nil else { return }
        if let frameCallback { wl_callback_destroy(frameCallback) }
        frameCallback = nil
        for proxy in feedbackProxies where proxy != nil { wp_presentation_feedback_destroy(proxy) }
    }
}
