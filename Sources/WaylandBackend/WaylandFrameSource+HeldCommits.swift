import DisplayLinkCore
import Dispatch
import FrameSchedulers
internal import CWayland
internal import CWaylandClient

/// The held-commit watchdog's shell (the rule itself is ``WaylandRefreshScheduler``'s): its
/// timer, and the commit that releases a held frame.
extension WaylandFrameSource {
    /// Arms the held-commit timer for ``WaylandRefreshScheduler/heldCommitCheckTime`` unless it is
    /// armed already: an earlier arming fires, finds the frame answered, and re-arms for the
    /// outstanding one, so the timer is set at most once every few periods, not every frame.
    func armHeldCommitCheck() {
        guard !isHeldCommitTimerArmed, error == nil, let due = scheduler.heldCommitCheckTime else { return }
        let timer = heldCommitTimer ?? MainQueueTimer { [weak self] in self?.heldCommitTimerFired() }
        heldCommitTimer = timer
        timer.schedule(at: due, leeway: Nanoseconds(1_000_000))
        isHeldCommitTimerArmed = true
    }

    private func heldCommitTimerFired() {
        isHeldCommitTimerArmed = false
        guard error == nil, !paced.isDestroyed else { return }
        if case .fallBack(let release) = scheduler.heldCommitCheck(at: MonotonicInstant.now()) {
            releaseHeldCommit(at: release)
        }
        armHeldCommitCheck()
    }

    /// Timed commits are held: on mutter with the release subsurface, commit it (a repaint that
    /// applies the held commit); elsewhere commit once, timed at `release` (a period ahead: a
    /// commit due at once behind the held one does not wake mutter 50's frame clock, one timed in
    /// the future does). The held frame and its callback come through; the commits after it are
    /// untimed.
    private func releaseHeldCommit(at release: MonotonicInstant) {
        stallLogged = true
        let reason = scheduler.commitTimingFallbackReason ?? "timed commits are held"
        if releaseCommitCount > 0 {
            WaylandFrameSource.log.debug(
                """
                the release commit was held as well: released again with a commit timed a period ahead \
                (release \(releaseCommitCount + 1))
                """)
        } else {
            WaylandFrameSource.log.warning(
                """
                commit timing stopped on this output: \(reason); released (a commit on the window's 1×1 subsurface \
                on mutter, else a commit timed a period ahead), untimed commits on this output from here on \
                (WaylandFrameSource.Configuration.allowsCommitTiming / DisplaySurface.Options.waylandCommitTiming: \
                false avoids trying; fallsBackFromHeldCommits: false keeps timed commits)
                """)
        }
        guard !paced.isDestroyed else { return }
        if paced.commitsItself, let releaser {
            // mutter: the subsurface's repaint applies the held commit (its target has passed), and
            // the window's next commits, untimed, follow it. A timed release would itself be held
            // on an idle stage, and need releasing in turn.
            releaser.release()
            releaseCommitCount += 1
            connection.dispatchPending()
            return
        }
        guard let timer = paced.commitTimer else { return }
        setTimestamp(timer, release)
        releaseCommitCount += 1
        guard paced.commitsItself else {
            // The program's surface: the release time goes with the program's next commit, which
            // a refresh now asks for (its callback may draw; its own requests carry no target).
            if let tick = scheduler.uncommittedTickDue(at: MonotonicInstant.now()) { perform(tick) }
            return
        }
        wl_surface_commit(paced.frameProxy)
        connection.dispatchPending()
    }
}
