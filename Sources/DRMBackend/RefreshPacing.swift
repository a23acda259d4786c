import Dispatch
import DisplayLinkCore

/// How a ``DRMDisplay`` turns kernel events (or a timer) into refreshes and its frames into
/// mode sets, flips and held frames. Two implementations: ``VblankPacing`` (page-flip and queued
/// vblank events; the decisions are ``KMSFrameScheduler``'s) and ``TimerPacing`` (a timer at the
/// mode's exact period for drivers without vblank events; ``KMSTimerPacer``'s). The display starts
/// with the one the device calls for and switches once, from vblank to timer, when vblank events
/// turn out to be missing.
@MainActor
protocol RefreshPacing: AnyObject {
    var kind: KMSPacing { get }
    /// Whether a frame was put on screen (the mode set).
    var isModeSet: Bool { get }
    /// Refreshes became wanted or unwanted (a link added, paused, removed).
    func demandChanged(_ wanted: Bool)
    /// Starts the refreshes (from ``DRMDisplay/requestStart()``: refreshes are wanted, the display
    /// runs, and no refresh came since the start was asked for).
    func startRefreshes()
    /// A frame was drawn into `buffer`: set the mode with it, flip it, or hold it.
    func submit(_ buffer: ScanoutBuffer) throws(DRMError)
    /// A page flip completed at vblank `sequence32` (the kernel's 32-bit counter) at `time`.
    func flipCompleted(sequence32: UInt32, time: MonotonicInstant)
    /// A queued vblank event arrived.
    func vblankEvent(sequence: UInt64, time: MonotonicInstant)
    /// The 64-bit sequence for a flip's 32-bit one (for a flip that completes during a pause).
    func sequence(extending sequence32: UInt32) -> UInt64
    /// Another VT took the display: nothing is decided until ``sessionResumed()``.
    func sessionDisabled()
    /// The display is back, with the mode set again: the next refresh is a restart.
    func sessionResumed()
    /// The display failed: nothing more is decided.
    func displayFailed()
    /// Lets go of event sources and timers (shutdown, or the switch to the other pacing).
    func stop()
}

extension DRMDisplay {
    /// Starts refreshes from the main queue, never inside the call that changed the demand (a link
    /// being created): at most one start pending, and none when a refresh came meanwhile (the
    /// rhythm runs already, and a second start would zero one more delta).
    func requestStart() {
        guard !startPending else { return }
        startPending = true
        let index = dispatcher.nextRefreshIndex
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.startPending = false
                guard self.dispatcher.wantsRefreshes, self.isRunning, self.sessionActive,
                    self.dispatcher.nextRefreshIndex == index
                else { return }
                self.pacer.startRefreshes()
            }
        }
    }
}
