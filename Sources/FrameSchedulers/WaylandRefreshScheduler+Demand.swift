import DisplayLinkCore

/// When refreshes start and stop: links' demand, start refreshes, ticks before the surface has
/// content, and the compositor's suspension.
extension WaylandRefreshScheduler {
    // MARK: Demand

    /// A link started or stopped wanting refreshes. Returns true when the shell should schedule a
    /// start refresh (from the main queue, then call ``startDue(at:)``).
    public mutating func demandChanged(_ wanted: Bool, at now: MonotonicInstant) -> Bool {
        isActive = wanted
        guard wanted, !isFailed else { return false }
        lastActivity = now
        lastCallbackArrival = nil
        guard !holdsStartForSuspension, !waitsForCallback, !isStartPending else { return false }
        isStartPending = true
        return true
    }

    /// The scheduled start refresh, if it is still due (the first frame maps the surface, and the
    /// compositor paces from there).
    public mutating func startDue(at now: MonotonicInstant) -> Refresh? {
        isStartPending = false
        guard isActive, !isFailed, !holdsStartForSuspension, !waitsForCallback else { return nil }
        return refresh(at: now, firstAfterStart: true)
    }

    /// The surface was committed with content (a frame drawn and swapped): it is mapped from here
    /// on, and a suspension holds back start refreshes too.
    public mutating func contentCommitted() {
        hasCommittedContent = true
    }

    /// Whether a frame callback will bring the next refresh: one is outstanding, and the surface
    /// has content or the compositor has answered before (before either, a request on the
    /// unmapped surface goes unanswered, and a start or pre-content tick brings the next).
    private var waitsForCallback: Bool { hasOutstandingFrameCallback && (hasCommittedContent || hasBeenCalledBack) }

    /// Whether the suspension holds back a start refresh: suspended, and the surface has content.
    private var holdsStartForSuspension: Bool { isSuspended && hasCommittedContent }

    // MARK: Before content

    /// A refresh ended with nothing drawn. Before the surface has content its frame request is
    /// answered by no compositor (an unmapped surface is never repainted), so nothing would come
    /// again: returns when the shell should call ``preContentTickDue(at:index:)``, one period
    /// after that refresh (nil once there is content, or once the compositor answered a frame
    /// request: it paces). A program that draws nothing in its first callbacks (assets still
    /// loading) keeps getting callbacks at the output's rate, estimates, until it draws; the
    /// request made with the first refresh then comes back with the first frame shown.
    public func refreshEndedWithoutContent() -> MonotonicInstant? {
        guard !hasCommittedContent, !hasBeenCalledBack, isActive, !isFailed, let last = lastTimestamp else { return nil }
        return last + period
    }

    /// The refresh ``refreshEndedWithoutContent()`` asked for, if still due at `now`: still no
    /// content, a link active, and no refresh since (`index`: ``nextRefreshIndex`` when it was
    /// asked for).
    public mutating func preContentTickDue(at now: MonotonicInstant, index: UInt64) -> Refresh? {
        guard !hasCommittedContent, !hasBeenCalledBack, isActive, !isFailed, nextRefreshIndex == index else { return nil }
        lastActivity = now
        let timestamp = notBeforeLast(now)
        let steps = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
        return makeRefresh(
            timestamp: timestamp, steps: steps, target: timestamp + period,
            provenance: .frameCallbackEstimate, followsStall: false, stride: 1, now: now)
    }

    // MARK: Suspension

    /// The compositor set (`true`) or cleared the surface's `suspended` state at `now`. Returns
    /// true when the shell should schedule a start refresh (resumed, a link active, no callback
    /// outstanding), as for ``demandChanged(_:at:)``.
    public mutating func suspendedChanged(_ suspended: Bool, at now: MonotonicInstant) -> Bool {
        guard suspended != isSuspended else { return false }
        isSuspended = suspended
        lastCallbackArrival = nil
        if suspended {
            callbackArrival = nil
            return false
        }
        resumingFromSuspension = true
        lastActivity = now
        guard isActive, !isFailed, !hasOutstandingFrameCallback, !isStartPending else { return false }
        isStartPending = true
        return true
    }
}
