import SystemPackage
import ConsoleSeat

/// Seat pauses and resumes: another VT comes to the front and goes again.
extension DRMDisplay {
    /// The seat is about to take the display away: no flip, vblank request or callback from now
    /// on. A flip already queued completes (its event only moves the buffers). The seat manager
    /// drops master after this returns.
    func sessionDisabled() {
        guard sessionActive, !shutDownDone else { return }
        sessionActive = false
        resumeAwaitsFlip = false
        pacer.sessionDisabled()
        let pending = buffers.flipping != nil ? " (a flip queued before completes)" : ""
        DRMDisplay.log.debug("session disabled: no flips and no callbacks until the session is back\(pending)")
        onSessionChange?(false)
    }

    /// The display is ours again: the mode is set again with the frame last shown (the buffers
    /// are kept), and refreshes restart: the first callback is a restart (zero delta, the kernel's
    /// sequence taken up without counting the time away as missed).
    func sessionEnabled() {
        guard !shutDownDone, error == nil else { return }
        if buffers.flipping != nil {
            // That flip's event is still to come (the kernel completes it): resume after it.
            resumeAwaitsFlip = true
            DRMDisplay.log.debug("session enabled: waiting for the flip queued before the pause to complete")
            return
        }
        sessionActive = true
        buffers.dropHeld()
        if pacer.isModeSet {
            let fb = buffers.framebufferToShowAgain
            do { try crtc.setModeAgain(fb: fb) } catch {
                // The seat may already have taken master back for the next switch away (an
                // enable and a disable queued together): its enable brings the display back.
                if case .kernel(_, let code) = error, lostMasterToSeat(code) { return }
                fail(error)
                return
            }
            pacer.sessionResumed()
            DRMDisplay.log.debug("session enabled: mode \(mode) set again with framebuffer \(fb); refreshes restart at the next vblank")
        } else {
            DRMDisplay.log.debug("session enabled before the first frame: the next frame sets the mode")
        }
        onSessionChange?(true)
        if dispatcher.wantsRefreshes { pacer.demandChanged(true) }
    }

    /// A request refused for want of master while the device is the seat's: the seat manager
    /// took master away before its disable reached us (logind drops DRM master first, then
    /// tells). Paused as for a disable; the seat's enable brings the display back.
    func lostMasterToSeat(_ code: Errno) -> Bool {
        guard session.kind != .direct, code == .permissionDenied || code == .notPermitted else { return false }
        DRMDisplay.log.debug("the seat took DRM master away (\(code)) before its disable arrived: paused")
        sessionDisabled()
        return true
    }
}
