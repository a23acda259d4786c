import DisplayLinkCore

/// What the window reports: the compositor suspending and resuming it, and the outputs it is on
/// (leaving all of them, moving to another, a mode change).
extension WaylandFrameSource {
    func suspendedChanged(_ suspended: Bool) {
        if suspended { withdrawStashedRequests() }
        let scheduleStart = scheduler.suspendedChanged(suspended, at: MonotonicInstant.now())
        if scheduler.wantsWatchdog { startWatchdog() } else { stopWatchdog() }
        if suspended && !scheduler.hasCommittedContent {
            WaylandFrameSource.log.debug(
                """
                suspended by the compositor before the first frame: the first frame is still drawn (it maps the \
                window, so the compositor can show and resume it); then no requests and no timer until it resumes \
                the window
                """)
        } else {
            WaylandFrameSource.log.debug(
                suspended
                    ? "suspended by the compositor: no requests and no timer until it resumes the window"
                    : "resumed by the compositor (the next refresh follows a stall: delta 0 under .zeroDelta)")
        }
        if scheduleStart { scheduleStartRefresh() }
    }

    func outputsChanged() {
        if !paced.outputs.isEmpty { hasBeenOnOutput = true }
        let off = hasBeenOnOutput && paced.outputs.isEmpty
        if off != scheduler.isOffAllOutputs {
            scheduler.surfaceLeftAllOutputs(off, at: MonotonicInstant.now())
            armHeldCommitCheck()
        }
        let primary = paced.outputs.first
        let identity = primary.map { ObjectIdentifier($0) }
        let advertised = primary?.advertisedPeriod ?? currentAdvertised
        defer {
            if identity != nil { currentOutput = identity }
            currentAdvertised = advertised
        }
        // The first output entered: the gate learns where the surface is (nothing was presented
        // before, so nothing learned is lost).
        if currentOutput == nil, let primary { scheduler.outputChanged(to: primary.gateKey, advertisedPeriod: advertised) }
        // The first enter of the output the source started from is no change.
        let isNewOutput = identity != nil && currentOutput != nil && identity != currentOutput
        guard isNewOutput || advertised != currentAdvertised else { return }
        outputChangeCount += 1
        scheduler.outputChanged(to: primary?.gateKey, advertisedPeriod: advertised)
        WaylandFrameSource.log.debug("output or mode changed (advertised period \(advertised)): period and phase learned again")
    }
}
