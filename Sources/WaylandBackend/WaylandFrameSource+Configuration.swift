import DisplayLinkCore

extension WaylandFrameSource {
    /// How the source paces: stall detection, timer fallback ticks, and whether it uses commit
    /// timing.
    public struct Configuration: Sendable {
        /// No callback for this long means the compositor stopped pacing us.
        public var stallTimeout = Nanoseconds(500_000_000)
        /// While stalled, tick the links this often with `timerFallback` provenance (nil: don't).
        public var fallbackTickInterval: Nanoseconds?
        /// Give each commit its target time when the compositor offers commit timing (false: the
        /// connection may have bound it, but this source does not use it). On by default, made
        /// safe by ``fallsBackFromHeldCommits``: mutter 48 applies a timed commit only in a stage
        /// frame whose target time has reached the commit's, and when its frame clock has no
        /// presentation prediction (a headless virtual monitor never has one) it schedules the
        /// frame for a timed commit about one system uptime away; so once nothing else on the
        /// output repaints (the window's map animation ends), the window's timed commits would
        /// wait indefinitely.
        public var allowsCommitTiming = true
        /// When timed commits are held (no callback `WaylandRefreshScheduler.heldCommitPeriods`
        /// periods after a commit's target, while the compositor answers two `wl_display.sync`
        /// probes sent after it: see `WaylandRefreshScheduler`), release the held frame with one
        /// commit timed a period ahead and use untimed commits from then on
        /// (``WaylandFrameSource/isCommitTimingFallenBack``, one warning). False: keep timed
        /// commits whatever the compositor does (for measuring a compositor; mutter 48 and 50
        /// headless then freeze the window unless something else repaints).
        public var fallsBackFromHeldCommits = true
        /// Use commit timing when every output the window is on (or, before it is on one, every
        /// output of the connection) is one of mutter's virtual monitors
        /// (``WaylandOutput/isMutterVirtualMonitor``: headless and remote desktop sessions).
        /// False, the default: there mutter 48 and 50 hold a timed commit made while nothing else
        /// repaints, and mutter 50 sometimes holds the commits that would release it too (under
        /// load, for good), so frames are committed untimed as without the protocol.
        public var allowsCommitTimingOnVirtualMonitors = false
        /// When callbacks start: at the frame event (`LatencyPolicy.throughput`, the default),
        /// or as late as the frame can still be committed for its target, its deadline less the
        /// program's learned render time (`LatencyPolicy.lowLatency`).
        public var latency: LatencyPolicy = .throughput
        public init(
            stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = nil,
            allowsCommitTiming: Bool = true, fallsBackFromHeldCommits: Bool = true,
            allowsCommitTimingOnVirtualMonitors: Bool = false, latency: LatencyPolicy = .throughput
        ) {
            self.latency = latency
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.allowsCommitTiming = allowsCommitTiming
            self.fallsBackFromHeldCommits = fallsBackFromHeldCommits
            self.allowsCommitTimingOnVirtualMonitors = allowsCommitTimingOnVirtualMonitors
        }
    }
}
