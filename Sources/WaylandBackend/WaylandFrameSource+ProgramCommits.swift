import DisplayLinkCore
import FrameSchedulers

/// A surface the program owns and commits (``init(programSurface:connection:usesFifo:usesCommitTiming:configuration:)``):
/// the commit hook that sends a refresh's requests with the program's commit, and the tick that
/// follows a refresh the program drew nothing for.
extension WaylandFrameSource {
    /// Refreshes in a row, after which one without a commit through ``willCommit()`` logs a
    /// warning (once) that the program may be missing the hook.
    public static let missingCommitHookRefreshes = 60

    /// The commit hook: the program calls it right before the call that commits its surface
    /// (`eglSwapBuffers`, `vkQueuePresentKHR`, `SDL_RenderPresent`, `SDL_GL_SwapWindow`, its own
    /// `wl_surface_commit`). The latest refresh's requests (frame callback, presentation feedback,
    /// and where the program allowed them the commit's target time and FIFO barrier) are sent
    /// then, so they apply to exactly that commit; the commit's time teaches the deadline and the
    /// render time. A second call for one refresh sends nothing more. Does nothing on the
    /// library's own window (its swap tells the source) or once the connection failed.
    public func willCommit() {
        guard error == nil, !paced.isDestroyed, !paced.commitsItself else { return }
        refreshesWithoutCommit = 0
        if let refresh = stashedRefresh {
            stashedRefresh = nil
            sendRequests(of: refresh)
            connection.flush()
        }
        // The commit that follows applies the timestamp set for it (the program must commit
        // after the hook; see the type's notes).
        timestampPending = false
        noteCommit()
    }

    /// Refreshes in a row that ended without a commit through ``willCommit()`` (program surface only).
    public var uncommittedRefreshes: Int { refreshesWithoutCommit }

    /// The program may still commit for `refresh`: tick at ``WaylandRefreshScheduler/uncommittedTickTime(callbackStart:)``
    /// unless it has by then.
    func armUncommittedTick(for refresh: WaylandRefreshScheduler.Refresh, callbackStart: MonotonicInstant) {
        let timer = uncommittedTimer ?? MainQueueTimer { [weak self] in self?.uncommittedTickFired() }
        uncommittedTimer = timer
        uncommittedIndex = refresh.index
        timer.schedule(at: scheduler.uncommittedTickTime(callbackStart: callbackStart))
    }

    private func uncommittedTickFired() {
        guard error == nil, !paced.isDestroyed, let stashed = stashedRefresh, stashed.index == uncommittedIndex else { return }
        withdrawStashedRequests()
        refreshesWithoutCommit += 1
        if refreshesWithoutCommit == WaylandFrameSource.missingCommitHookRefreshes && !commitHookWarned {
            commitHookWarned = true
            if let onCommitHookMissing {
                onCommitHookMissing()
            } else {
                WaylandFrameSource.log.warning(
                    """
                    no frame was committed through WaylandFrameSource.willCommit() in \(refreshesWithoutCommit) refreshes: \
                    the links tick on the rhythm's predicted vblanks (estimated timestamps). If the program draws, it \
                    must call willCommit() right before each call that commits its surface
                    """)
            }
        }
        guard let tick = scheduler.uncommittedTickDue(at: MonotonicInstant.now()) else { return }
        perform(tick)
    }

    /// The stashed refresh's requests will not be sent: the scheduler forgets them.
    func withdrawStashedRequests() {
        guard let refresh = stashedRefresh else { return }
        stashedRefresh = nil
        scheduler.requestsWithdrawn(refresh)
    }
}
