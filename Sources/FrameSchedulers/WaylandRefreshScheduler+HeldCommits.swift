import DisplayLinkCore

/// The held-commit watchdog (see <doc:WaylandScheduling>): a timed commit that is neither
/// presented nor followed by a frame event by its target plus ``WaylandRefreshScheduler/heldCommitPeriods``
/// periods is taken as held, timed commits stop on that output for good, and the held frame is
/// released.
extension WaylandRefreshScheduler {
    /// What the held-commit watchdog asks of the shell (see <doc:WaylandScheduling>).
    public enum HeldCommitAction: Sendable, Hashable {
        case nothing
        /// A timed commit is held: commit timing just stopped on the current output
        /// (``WaylandRefreshScheduler/commitTimingGate``); commit once, with no new requests,
        /// timed at `release` (a period ahead), so the compositor lets the held frame through.
        case fallBack(release: MonotonicInstant)
    }

    /// The surface left its last output (true; minimised on weston 16 or mutter 50) or entered one
    /// again (false) at `now`. While off every output the watchdog does not apply: a compositor
    /// repaints no output for the surface, so it sends no callback for a commit it applied. Back
    /// on one, the watchdog counts from `now`: the outstanding commit's target passed while the
    /// surface was hidden.
    public mutating func surfaceLeftAllOutputs(_ off: Bool, at now: MonotonicInstant) {
        if isOffAllOutputs && !off { lastActivity = max(lastActivity, now) }
        isOffAllOutputs = off
    }

    /// The target of the timed commit the outstanding frame callback waits behind, when the
    /// watchdog applies (commit timing configured, falling back allowed, a link active, the
    /// surface shown): the commit that asked for the callback, or after a fallback the last
    /// release while no callback asked for after it has come (the held frame before it may still
    /// be held too, if the release did not wake the compositor). Nil: the watchdog does not apply.
    private var heldTarget: MonotonicInstant? {
        guard configuration.timesCommits, configuration.fallsBackFromHeldCommits, hasOutstandingFrameCallback,
            isActive, !isFailed, !isSuspended, !isOffAllOutputs
        else { return nil }
        if let target = outstandingCommitTarget { return outstandingCommitApplied ? nil : target }
        return releaseTarget
    }

    /// When the shell should call ``heldCommitCheck(at:)`` (nil: nothing to watch):
    /// ``heldCommitPeriods`` periods after the later of the outstanding timed commit's target and
    /// the last refresh, doubled for each release made since the last frame callback (at most
    /// 2⁵ times: a compositor that sends no callback at all, stuck or blanked, gets a release
    /// about every 1.6 s at 60 Hz, not every few periods). A shell with one timer arms it for this
    /// time when it is idle, and at each firing asks again, so the timer fires at most every few
    /// periods while frames flow.
    public var heldCommitCheckTime: MonotonicInstant? {
        guard let target = heldTarget else { return nil }
        let limit = period * Int(WaylandRefreshScheduler.heldCommitPeriods) * (1 << min(releasesSinceCallback, 5))
        return max(target, lastActivity) + limit
    }

    /// The shell's held-commit timer fired at `now`: ``HeldCommitAction/fallBack(release:)`` when
    /// the outstanding timed commit (or release) is past its limit, else nothing (re-arm for
    /// ``heldCommitCheckTime``).
    public mutating func heldCommitCheck(at now: MonotonicInstant) -> HeldCommitAction {
        guard let due = heldCommitCheckTime, now >= due, let held = heldTarget else { return .nothing }
        if commitTimingGate.state != .stopped {
            commitTimingGate.stopCurrentOutput()
            let late = (now.nanoseconds &- held.nanoseconds) / 1_000_000
            commitTimingFallbackReason = """
                a timed commit was neither presented nor followed by a frame callback \(late) ms after its target \
                time (the compositor holds timed commits on this output)
                """
        }
        outstandingCommitTarget = nil
        outstandingStride = 1
        // Callbacks stopped: the refresh after the release follows a stall.
        isStalled = true
        returningFromStall = true
        let release = now + period
        releaseTarget = release
        outstandingAfterRelease = false
        releaseCount += 1
        releasesSinceCallback += 1
        return .fallBack(release: release)
    }
}
