import DisplayLinkCore

/// The held-commit rule (see <doc:WaylandScheduling>): noticing that the compositor holds timed
/// commits, asking it with probes, and releasing the held frame before commit timing ends.
extension WaylandRefreshScheduler {
    /// What the held-commit rule asks of the shell (see <doc:WaylandScheduling>).
    public enum HeldCommitAction: Sendable, Hashable {
        case nothing
        /// Send `wl_display.sync` now and call ``WaylandRefreshScheduler/compositorAnswered(at:)``
        /// when its `done` comes.
        case probe
        /// Timed commits are held: commit timing just ended for good
        /// (``WaylandRefreshScheduler/isCommitTimingFallenBack``); commit once, with no new
        /// requests, timed at `release` (a period ahead), so the compositor lets the held frame
        /// through.
        case fallBack(release: MonotonicInstant)
    }

    /// The held-commit rule's progress for the outstanding timed commit.
    enum HeldProbe: Sendable, Hashable {
        case none
        /// A probe went out; `serial` is its number among all probes sent.
        case sent(serial: UInt64, second: Bool)
        /// The first probe was answered at `at`: the second is due ``WaylandRefreshScheduler/heldCommitProbeGap``
        /// periods later.
        case answered(at: MonotonicInstant)
    }

    /// The surface left its last output (true; minimised on weston 16 or mutter 50) or entered one
    /// again (false). While off every output the held-commit rule does not apply: a compositor
    /// repaints no output for the surface, so it sends no callback for a commit it applied.
    public mutating func surfaceLeftAllOutputs(_ off: Bool) {
        isOffAllOutputs = off
        if off { heldProbe = .none }
    }

    /// The target of the timed commit the outstanding frame callback waits behind, when the rule
    /// applies (timed commits configured, falling back allowed, a link active, the surface shown):
    /// the commit that asked for the callback, or after a fallback the last release while no
    /// callback asked for after it has come (the held frame before it may still be held too, if
    /// the release did not wake the compositor). Nil: the rule does not apply.
    private var heldTarget: MonotonicInstant? {
        guard configuration.timesCommits, configuration.fallsBackFromHeldCommits, hasOutstandingFrameCallback,
            isActive, !isFailed, !isSuspended, !isOffAllOutputs
        else { return nil }
        if isTimingCommits { return outstandingCommitApplied ? nil : outstandingCommitTarget }
        return releaseTarget
    }

    /// When the shell should next call ``heldCommitCheck(at:)`` (nil: no check is wanted now, or a
    /// probe is out): `heldCommitPeriods` periods after the later of the outstanding timed
    /// commit's target and the last activity, or ``heldCommitProbeGap`` periods after the first
    /// probe's answer. A shell with one timer arms it for this time when it is idle, and at each
    /// firing asks again, so the timer fires at most every `heldCommitPeriods` periods while
    /// frames flow.
    public var heldCommitCheckTime: MonotonicInstant? {
        guard let target = heldTarget else { return nil }
        let p = period.value
        switch heldProbe {
        case .sent: return nil
        case .answered(let at):
            let gap = p.multipliedReportingOverflow(by: WaylandRefreshScheduler.heldCommitProbeGap).partialValue
            return at + Nanoseconds(gap)
        case .none:
            let limit = Nanoseconds(p.multipliedReportingOverflow(by: WaylandRefreshScheduler.heldCommitPeriods).partialValue)
            return max(target, lastActivity) + limit
        }
    }

    /// The shell's held-commit timer fired at `now` (see <doc:WaylandScheduling>):
    /// ``HeldCommitAction/probe`` when a probe is due, else nothing (re-arm for ``heldCommitCheckTime``).
    public mutating func heldCommitCheck(at now: MonotonicInstant) -> HeldCommitAction {
        guard let due = heldCommitCheckTime, now >= due else { return .nothing }
        let second: Bool
        if case .answered = heldProbe { second = true } else { second = false }
        probesSent &+= 1
        heldProbe = .sent(serial: probesSent, second: second)
        return .probe
    }

    /// A probe's answer (`wl_display.sync` done) arrived at `now`. After the second answer with
    /// the same timed commit still unanswered: ``HeldCommitAction/fallBack(release:)``.
    public mutating func compositorAnswered(at now: MonotonicInstant) -> HeldCommitAction {
        probesAnswered &+= 1
        guard case .sent(let serial, let second) = heldProbe, serial == probesAnswered else { return .nothing }
        guard let held = heldTarget else {
            heldProbe = .none
            return .nothing
        }
        guard second else {
            heldProbe = .answered(at: now)
            return .nothing
        }
        heldProbe = .none
        if !isCommitTimingFallenBack {
            isCommitTimingFallenBack = true
            let late = (now.nanoseconds &- held.nanoseconds) / 1_000_000
            commitTimingFallbackReason = """
                a timed commit was not presented \(late) ms after its target time while the compositor answered \
                two requests sent after it (the compositor holds timed commits)
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
        return .fallBack(release: release)
    }
}
