/// The latest time a frame can be submitted (committed on Wayland, its flip or atomic commit
/// queued on KMS) and still be shown at its ``DisplayFrame/targetTimestamp``, as the source has
/// learned it from which submissions made which presentations, and what that rests on.
///
/// A frame that starts later and still submits before ``time`` is shown as early as one that
/// started at once: the time between is latency the program can give back. Sources report none
/// (``DisplayFrame/deadline`` nil) until a frame made its target.
public struct FrameDeadline: Sendable, Hashable {
    public enum Provenance: String, Sendable, Hashable, CustomStringConvertible {
        /// Frames submitted this long before their targets all made them: safe, and maybe earlier
        /// than needed (nothing later has been tried).
        case sufficient
        /// Between the shortest lead that made its target and the longest that missed it.
        case bracketed
        /// The latch the source assumes (a KMS driver's, just before the vblank; a compositor's
        /// repaint, 8 ms before the presentation) and has not yet seen a frame make or miss at:
        /// what a low-latency start plans with at first.
        case prior

        public var description: String { rawValue }
    }

    /// The latest time to submit, on `CLOCK_MONOTONIC`.
    public var time: MonotonicInstant
    /// How long before the target presentation that is.
    public var lead: Nanoseconds
    public var provenance: Provenance

    public init(time: MonotonicInstant, lead: Nanoseconds, provenance: Provenance) {
        self.time = time
        self.lead = lead
        self.provenance = provenance
    }
}

/// When a source starts the callbacks of a refresh.
public enum LatencyPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// As soon as the refresh is known (the flip or frame event): the most time to draw, and the
    /// frame then waits for its target. The default.
    case throughput
    /// As late as the frame's ``FrameDeadline`` allows, less the program's learned render time
    /// and a margin, so the frame is drawn from the newest input and shown at the same target.
    /// A frame predicted not to fit starts at once.
    case lowLatency

    public var description: String { rawValue }
}
