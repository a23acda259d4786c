import DisplayLinkCore

/// A surface the program commits (see <doc:WaylandScheduling>): each refresh's requests go out
/// with the commit the program announces, and a refresh whose frame the program did not commit
/// is followed by a tick on the rhythm, not by a frame callback that nothing asked for.
extension WaylandRefreshScheduler {
    /// Slack after the vblank a tick is due at: a frame callback for that vblank, which the
    /// compositor sends around it, comes first.
    public static let uncommittedTickSlack = Nanoseconds(1_000_000)

    /// The requests of `refresh` were never sent (the program did not commit for it): no frame
    /// callback is outstanding for it, and its feedback slot is free again.
    public mutating func requestsWithdrawn(_ refresh: Refresh) {
        if let slot = refresh.feedbackSlot, slots.indices.contains(slot), slots[slot].inUse,
            slots[slot].refreshIndex == refresh.index
        {
            slots[slot] = Slot()
        }
        guard refresh.requestsFrameCallback, hasOutstandingFrameCallback, outstandingRequestIndex == refresh.index else { return }
        hasOutstandingFrameCallback = false
        frameRequestCount -= 1
        outstandingRequestIndex = nil
        outstandingCommitTarget = nil
        outstandingStride = 1
        outstandingAfterRelease = false
        outstandingCommitApplied = false
        outstandingCommitPresented = false
    }

    /// When to tick for a refresh whose callback started at `callbackStart` and whose frame the
    /// program has not committed: the first vblank of the rhythm (the newest presentation, else
    /// the last timestamp, plus or minus whole periods) more than half a period after the start, plus
    /// ``uncommittedTickSlack``. A commit before then is answered by a frame callback at about that
    /// vblank (a compositor that calls back just before its vblank, as kwin does after its latch,
    /// calls back up to half a period before the vblank it latched for); one after it misses that
    /// vblank anyway, so the tick stands in for the callback it would have brought.
    public func uncommittedTickTime(callbackStart: MonotonicInstant) -> MonotonicInstant {
        let p = max(period.value, 1)
        let earliest = callbackStart + Nanoseconds(p / 2)
        let anchor = timeline.latest ?? lastTimestamp ?? callbackStart
        let (elapsed, overflow) = earliest.nanoseconds.subtractingReportingOverflow(anchor.nanoseconds)
        var vblank: MonotonicInstant
        if overflow {
            vblank = earliest + Nanoseconds(p)
        } else if elapsed < 0 {
            // The anchor lies after `earliest` (a start stamped before the newest presentation):
            // whole periods back from it, to the first vblank still after `earliest`.
            let back = (elapsed.magnitude - 1) / UInt64(p) * UInt64(p)
            vblank = MonotonicInstant(nanoseconds: anchor.nanoseconds - Int64(back))
        } else {
            let (steps, tooFar) = (elapsed / p + 1).multipliedReportingOverflow(by: p)
            vblank = tooFar ? earliest + Nanoseconds(p) : anchor + Nanoseconds(steps)
        }
        return vblank + WaylandRefreshScheduler.uncommittedTickSlack
    }

    /// The tick ``uncommittedTickTime(callbackStart:)`` asked for, at `now`: the refresh a frame
    /// callback would have brought, its timestamp the rhythm's latest vblank (an estimate), or
    /// nil when nothing is wanted, the connection failed or the surface is suspended.
    public mutating func uncommittedTickDue(at now: MonotonicInstant) -> Refresh? {
        guard isActive, !isFailed, !isSuspended else { return nil }
        return refresh(at: now, firstAfterStart: false)
    }
}
