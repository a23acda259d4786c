/// The timing of one display-link callback. A plain `Sendable` value: what the closure, the
/// delegate and the `AsyncSequence` forms all deliver.
public struct DisplayFrame: Sendable, Hashable {
    /// Presentation time of the last frame that was displayed (`CADisplayLink.timestamp`).
    public var timestamp: MonotonicInstant
    /// Predicted presentation time of the frame being prepared now (`targetTimestamp`).
    public var targetTimestamp: MonotonicInstant
    /// The current refresh period (`CADisplayLink.duration`), not multiplied by the frame interval.
    ///
    /// It is the period the source measures, which is not always the one the display advertises:
    /// DRM/KMS gives the mode's exact period; a Wayland compositor's presentation cadence is
    /// learned from its feedback (weston 10 headless advertises 16.7 ms and presents every
    /// ~25.4 ms, so `duration` is ~25.4 ms there).
    public var duration: Nanoseconds
    /// `timestamp` minus the previous callback's `timestamp`; exactly zero on the first callback
    /// after start or resume (and after a stall under ``DisplayLink/StallPolicy/zeroDelta``).
    public var delta: Nanoseconds
    /// The display's refresh counter at `timestamp`: the source's vblank sequence (DRM, and
    /// compositors that fill `seq`) from the first refresh on, or counted from the timestamps.
    /// It never decreases, and the step between two callbacks is the refreshes that passed: when
    /// the source's counter goes backwards, wraps, or starts after counted refreshes, it is
    /// continued from the timestamps instead (so it can then differ from the kernel's counter
    /// by a constant), until a refresh that follows a restart takes the source's counter up again.
    public var sequence: UInt64
    /// Refreshes this link should have fired on but could not since its previous callback.
    public var missedFrames: Int
    public var provenance: TimestampProvenance
    /// Which refresh of the source this is (0, 1, 2, … per source); ties presentation feedback
    /// (``PresentationFeedback/refreshIndex``) to the callback that drew the frame.
    public var refreshIndex: UInt64
    /// How many refreshes the link spans per callback (1 at the display's full rate).
    public var frameInterval: Int
    /// When this frame must be submitted at the latest to be shown at ``targetTimestamp``, and
    /// what that rests on; nil while the source has learned none.
    public var deadline: FrameDeadline?
    /// How long the program's callbacks have taken from their start to their frame's submission,
    /// as the source has learned it (rising at once on a slow frame, decaying slowly; without the
    /// margin a low-latency start adds); nil while none was measured or the source learns none.
    public var renderEstimate: Nanoseconds?

    public init(
        timestamp: MonotonicInstant, targetTimestamp: MonotonicInstant, duration: Nanoseconds,
        delta: Nanoseconds, sequence: UInt64, missedFrames: Int, provenance: TimestampProvenance,
        refreshIndex: UInt64, frameInterval: Int, deadline: FrameDeadline? = nil,
        renderEstimate: Nanoseconds? = nil
    ) {
        self.timestamp = timestamp
        self.targetTimestamp = targetTimestamp
        self.duration = duration
        self.delta = delta
        self.sequence = sequence
        self.missedFrames = missedFrames
        self.provenance = provenance
        self.refreshIndex = refreshIndex
        self.frameInterval = frameInterval
        self.deadline = deadline
        self.renderEstimate = renderEstimate
    }

    /// `delta` in seconds.
    @inlinable public var deltaTime: Double { delta.seconds }
}
