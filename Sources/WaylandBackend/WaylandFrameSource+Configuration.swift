import DisplayLinkCore

extension WaylandFrameSource {
    /// How the source paces: stall detection, timer fallback ticks, and whether it uses commit
    /// timing.
    public struct Configuration: Sendable {
        /// No callback for this long means the compositor stopped pacing us.
        public var stallTimeout = Nanoseconds(500_000_000)
        /// While stalled, tick the links this often with `timerFallback` provenance (nil: don't).
        public var fallbackTickInterval: Nanoseconds?
        /// Give commits their target time when the compositor offers commit timing (false: the
        /// connection may have bound it, but this source does not use it). On by default, made
        /// safe by the `VSYNC` gate (``requiresVsyncForTimedCommits``) and by
        /// ``fallsBackFromHeldCommits``: mutter 48 to 50 apply a timed commit only in a frame of
        /// their own, and when the output's frame clock predicts no presentation (its last one
        /// lacked `VSYNC`: virtual monitors always, real ones after a mode-set fallback or at a new
        /// frame clock's first frames) no frame comes for it, so the window would wait for good.
        public var allowsCommitTiming = true
        /// When a timed commit is neither presented nor followed by a frame callback
        /// `WaylandRefreshScheduler.heldCommitPeriods` periods after its target, take it as held:
        /// stop timed commits on that output for as long as the program runs, release the held
        /// frame with one commit timed a period ahead, and log one warning
        /// (``WaylandFrameSource/isCommitTimingFallenBack``). A compositor only late by that much
        /// (a loaded host) loses timed commits too; frames still follow its frame callbacks.
        /// False: keep timed commits whatever the compositor does (for measuring a compositor).
        public var fallsBackFromHeldCommits = true
        /// Time commits only while the latest presentation feedback on the window's current output
        /// carries `VSYNC`, and only after one such since it entered that output or its mode
        /// changed (`CommitTimingGate`). True by default. False times commits from the first
        /// presentation on whatever the feedback says: for a compositor known to apply timed
        /// commits without `VSYNC` (weston 16's headless backend), or for testing the held-commit
        /// watchdog; mutter's virtual monitors then hold timed commits now and then.
        public var requiresVsyncForTimedCommits = true
        /// When callbacks start: at the frame event (`LatencyPolicy.throughput`, the default),
        /// or as late as the frame can still be committed for its target, its deadline less the
        /// program's learned render time (`LatencyPolicy.lowLatency`).
        public var latency: LatencyPolicy = .throughput
        public init(
            stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = nil,
            allowsCommitTiming: Bool = true, fallsBackFromHeldCommits: Bool = true,
            requiresVsyncForTimedCommits: Bool = true, latency: LatencyPolicy = .throughput
        ) {
            self.latency = latency
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.allowsCommitTiming = allowsCommitTiming
            self.fallsBackFromHeldCommits = fallsBackFromHeldCommits
            self.requiresVsyncForTimedCommits = requiresVsyncForTimedCommits
        }
    }
}
