import DisplayLinkCore
import Dispatch
import FrameSchedulers
internal import CWayland
internal import CWaylandClient

/// Carrying out refreshes: starting on demand, sending each refresh's requests, dispatching it to
/// the links, and committing the empty state when no target drew.
extension WaylandFrameSource {
    // MARK: Demand

    func demandChanged(_ wanted: Bool) {
        if !wanted { withdrawStashedRequests() }
        let scheduleStart = scheduler.demandChanged(wanted, at: MonotonicInstant.now())
        if scheduler.wantsWatchdog { startWatchdog() } else { stopWatchdog() }
        guard scheduleStart else { return }
        scheduleStartRefresh()
    }

    /// Start with a refresh now, from the main queue (not inside the link's init or setter, or
    /// the configure handler): the first frame maps the surface, and the compositor paces from there.
    func scheduleStartRefresh() {
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self, let refresh = self.scheduler.startDue(at: MonotonicInstant.now()) else { return }
                self.perform(refresh)
            }
        }
    }

    /// The next refresh at `time`, before the surface has content (see
    /// ``WaylandRefreshScheduler/refreshEndedWithoutContent()``), unless another came first.
    private func schedulePreContentTick(at time: MonotonicInstant) {
        let index = scheduler.nextRefreshIndex
        let wait = max(0, (time - MonotonicInstant.now()).value)
        DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.error == nil, !self.paced.isDestroyed,
                    let refresh = self.scheduler.preContentTickDue(at: MonotonicInstant.now(), index: index)
                else { return }
                self.perform(refresh)
            }
        }
    }

    // MARK: The refresh

    func afterDispatch() {
        if scheduler.isTimingCommits {
            // The links' common interval: a stride of timed commits replaces the wake-ups no link uses.
            scheduler.linkFrameInterval = dispatcher.commonFrameInterval(refreshPeriod: scheduler.period)
        }
        guard let refresh = scheduler.eventsDispatched() else { return }
        deliver(refresh)
    }

    /// Sends the refresh's requests, dispatches it, and commits the empty state if no target drew.
    func perform(_ refresh: WaylandRefreshScheduler.Refresh, plannedFor planned: MonotonicInstant? = nil) {
        guard !paced.isDestroyed else { return }
        if paced.commitsItself {
            sendRequests(of: refresh)
        } else {
            // The program commits: the requests go out with the commit it announces (willCommit()).
            withdrawStashedRequests()
            stashedRefresh = refresh
        }
        if refresh.stride > 1 {
            stridedRefreshCount += 1
            if firstStridedRefreshIndex == nil { firstStridedRefreshIndex = refresh.index }
        }
        if stallLogged && refresh.event.provenance != .timerFallback {
            stallLogged = false
            WaylandFrameSource.log.debug("frame callbacks resumed after a stall (refresh \(refresh.index); delta 0 under .zeroDelta)")
        }
        committedDuringDispatch = false
        let began = MonotonicInstant.now()
        scheduler.callbackStarted(at: began, plannedFor: planned)
        dispatcher.dispatch(refresh.event)
        // A target may have destroyed the window in its callback (closing its surface).
        guard error == nil, !paced.isDestroyed else { return }
        if !paced.commitsItself {
            // The program may still commit for this refresh after its callbacks returned (it
            // draws in its own loop): a tick follows only if it has not by the next vblank.
            // Not after a timer fallback tick (stalled: hidden, or a commit that never came): the
            // watchdog brings the next at its low rate, where ticks at the vblank rate would spin.
            if !committedDuringDispatch && refresh.event.provenance != .timerFallback {
                armUncommittedTick(for: refresh, callbackStart: began)
            }
        } else if !committedDuringDispatch {
            // Nothing drawn: commit the frame request alone so the compositor keeps pacing us.
            wl_surface_commit(paced.frameProxy)
            emptyCommitCount += 1
            // Before the first frame with content no compositor answers it: tick on a timer.
            if let due = scheduler.refreshEndedWithoutContent() { schedulePreContentTick(at: due) }
        }
        armHeldCommitCheck()
        // EGL may have read events for our queue while swapping: handle them, then flush.
        connection.dispatchPending()
    }

    /// Sends the requests of `refresh`: the frame callback, the feedback, the commit's target and
    /// its FIFO barrier, all applied by the surface's next commit.
    func sendRequests(of refresh: WaylandRefreshScheduler.Refresh) {
        if refresh.requestsFrameCallback { requestFrameCallback() }
        if let slot = refresh.feedbackSlot { requestFeedback(slot: slot) }
        if let target = refresh.commitTarget, let timer = paced.commitTimer {
            setTimestamp(timer, target)
        }
        if let fifo = paced.fifo, refresh.setsFifoBarrier {
            // Applied with this refresh's commit: it waits until the previous one was presented
            // (or the compositor gave up on it, e.g. while hidden), and sets the next barrier.
            // Not before the first presentation (the surface is mapped by then), never on a timer tick.
            wp_fifo_v1_wait_barrier(fifo)
            wp_fifo_v1_set_barrier(fifo)
            fifoBarrierCount += 1
        }
    }

    /// `wp_commit_timer_v1.set_timestamp` with `target` converted to the presentation clock.
    func setTimestamp(_ timer: OpaquePointer, _ target: MonotonicInstant) {
        let raw = target.nanoseconds &- clockOffset.nanoseconds
        guard raw > 0 else { return }
        // On the program's surface one timestamp waits for the program's next commit at most (a
        // second before it is the protocol's timestamp_exists error, which ends the program's
        // display): a release's waits, and the refresh's own goes with a later commit.
        if !paced.commitsItself {
            guard !timestampPending else { return }
            timestampPending = true
        }
        let seconds = UInt64(raw / 1_000_000_000)
        wp_commit_timer_v1_set_timestamp(
            timer, UInt32(truncatingIfNeeded: seconds >> 32),
            UInt32(truncatingIfNeeded: seconds), UInt32(raw % 1_000_000_000))
        timedCommitCount += 1
    }
}
