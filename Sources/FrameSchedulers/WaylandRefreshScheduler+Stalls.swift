import DisplayLinkCore

/// Stalls and failure: the watchdog that notices callbacks stopped (and ticks on a timer while
/// they are), and a failed connection.
extension WaylandRefreshScheduler {
    /// What a watchdog firing leads to.
    public enum WatchdogAction: Sendable, Hashable {
        case nothing
        /// Callbacks stopped: ``WaylandRefreshScheduler/isStalled`` just became true (no fallback
        /// ticks configured).
        case stalled
        /// Dispatch this tick: stalled with fallback ticks configured, or a frame callback lost
        /// (``WaylandRefreshScheduler/lostFrameCallbackCount``; the tick asks for another).
        case fallbackTick(Refresh)
    }

    /// Whether the shell should run its watchdog timer.
    public var wantsWatchdog: Bool { isActive && !isFailed && !isSuspended }

    /// How often the watchdog timer fires (the fallback interval, or the stall timeout; ≥ 1 ms).
    public var watchdogInterval: Nanoseconds {
        let interval = configuration.fallbackTickInterval ?? configuration.stallTimeout
        return max(interval, Nanoseconds(1_000_000))
    }

    /// The watchdog timer fired at `now`.
    public mutating func watchdog(now: MonotonicInstant) -> WatchdogAction {
        guard isActive, !isFailed, !isSuspended else { return .nothing }
        let (idle, overflow) = now.nanoseconds.subtractingReportingOverflow(lastActivity.nanoseconds)
        guard !overflow, idle >= configuration.stallTimeout.value else { return .nothing }
        if hasOutstandingFrameCallback, outstandingCommitPresented {
            // The frame whose commit asked for the callback was shown, yet no callback came: the
            // compositor lost it (a hidden window shows nothing, so this cannot spin). Without
            // asking again the link would wait for good; the refresh asks again, as after a stall.
            lostFrameCallbackCount += 1
            hasOutstandingFrameCallback = false
            frameRequestCount -= 1
            outstandingCommitTarget = nil
            outstandingStride = 1
            if outstandingAfterRelease { releaseTarget = nil }
            outstandingAfterRelease = false
            isStalled = true
            return .fallbackTick(refresh(at: notBeforeLast(now), firstAfterStart: false))
        }
        let noticed = !isStalled
        if noticed {
            isStalled = true
            returningFromStall = true
        }
        guard configuration.fallbackTickInterval != nil else { return noticed ? .stalled : .nothing }
        let timestamp = notBeforeLast(now)
        let steps = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
        lastCompositorSequence = nil
        defer { countingAnchor = (lastTimestamp ?? timestamp, lastSequence) }
        // Keeps (or makes) a frame request outstanding so the compositor can resume pacing us.
        return .fallbackTick(
            makeRefresh(
                timestamp: timestamp, steps: steps,
                target: timestamp + period, provenance: .timerFallback,
                followsStall: false, stride: 1, now: now))
    }

    /// The connection failed: nothing is outstanding, and nothing more happens.
    public mutating func connectionFailed() {
        isFailed = true
        hasOutstandingFrameCallback = false
        callbackArrival = nil
        for index in slots.indices { slots[index] = Slot() }
    }
}
