/// What a frame source reports once per refresh: "a refresh happened; here is what we know".
///
/// Every backend (DRM page flips, Wayland frame callbacks with presentation feedback, the mock)
/// produces this same value; the core turns it into CADisplayLink's per-callback values.
public struct RefreshEvent: Sendable, Hashable {
    /// The newest presentation (vblank) time known, on `CLOCK_MONOTONIC`.
    public var timestamp: MonotonicInstant
    /// The display's vblank counter for `timestamp`, if the source has one (DRM always; Wayland
    /// when the compositor fills `seq`). Without it the core counts refreshes from the timestamps.
    public var sequence: UInt64?
    /// The source's current refresh period estimate.
    public var refreshPeriod: Nanoseconds
    /// When the frame prepared in response to this refresh is expected on screen; `nil` lets the
    /// core use `timestamp + refreshPeriod`.
    public var targetTimestamp: MonotonicInstant?
    public var provenance: TimestampProvenance
    /// When the frame prepared for ``targetTimestamp`` must be submitted at the latest (nil:
    /// not learned yet, or the source learns none).
    public var deadline: FrameDeadline?
    /// The program's render time the source has learned, from a callback's start to its frame's
    /// submission, without the margin a low-latency start adds (nil: none measured yet, or the
    /// source learns none).
    public var renderEstimate: Nanoseconds?
    /// True on the first refresh after the source stopped delivering for a while (surface hidden,
    /// feedback lost, source restarted): links apply their ``DisplayLink/StallPolicy`` to it.
    public var followsStall: Bool

    public init(
        timestamp: MonotonicInstant,
        sequence: UInt64? = nil,
        refreshPeriod: Nanoseconds,
        targetTimestamp: MonotonicInstant? = nil,
        provenance: TimestampProvenance,
        followsStall: Bool = false,
        deadline: FrameDeadline? = nil,
        renderEstimate: Nanoseconds? = nil
    ) {
        self.timestamp = timestamp
        self.sequence = sequence
        self.refreshPeriod = refreshPeriod
        self.targetTimestamp = targetTimestamp
        self.provenance = provenance
        self.followsStall = followsStall
        self.deadline = deadline
        self.renderEstimate = renderEstimate
    }
}

/// What became of a frame drawn in a callback, reported by the source when it learns it.
///
/// An app receives it through ``DisplayLink/presentationHandler``: whether the frame drawn in the
/// callback with ``refreshIndex`` was shown, and when (the compositor's presentation time or the
/// page flip's vblank), next to the ``targetTimestamp`` that callback predicted. It usually comes
/// one or two refreshes after the frame was drawn, and a frame replaced before it was shown is
/// reported ``Outcome/discarded``.
public struct PresentationFeedback: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// Shown at this time (`CLOCK_MONOTONIC`), with the vblank sequence if known.
        case presented(at: MonotonicInstant, sequence: UInt64?)
        /// Never shown (replaced by a newer commit, or the surface was hidden).
        case discarded
    }
    /// The ``DisplayFrame/refreshIndex`` of the callback in which the frame was drawn.
    public var refreshIndex: UInt64
    public var outcome: Outcome
    /// The ``DisplayFrame/targetTimestamp`` of the callback in which the frame was drawn: when it
    /// was predicted to be shown, so that the presentation time minus this is the prediction's
    /// error. The ``RefreshDispatcher`` fills it in for the recent refreshes it remembers; nil for
    /// feedback older than that, and in what a source hands to the dispatcher.
    public var targetTimestamp: MonotonicInstant?
    /// How the frame was presented, when the source says (Wayland `wp_presentation` flags); nil
    /// when unknown (discarded, or a source without flags).
    public var flags: PresentationFlags?
    /// The time the frame's commit asked not to be presented before (Wayland
    /// `wp_commit_timer_v1.set_timestamp`), on `CLOCK_MONOTONIC`; nil when it asked for none.
    public var commitTarget: MonotonicInstant?
    /// False when the reported time lies implausibly far from when the report arrived (more
    /// than 100 ms ahead of it, or an hour behind; a buggy or hostile compositor): the outcome
    /// carries the time as reported, and the link learned nothing from it. Reports and statistics
    /// should leave such a time out.
    public var isTimePlausible = true

    public init(
        refreshIndex: UInt64, outcome: Outcome, flags: PresentationFlags? = nil,
        commitTarget: MonotonicInstant? = nil, targetTimestamp: MonotonicInstant? = nil
    ) {
        self.refreshIndex = refreshIndex
        self.outcome = outcome
        self.flags = flags
        self.commitTarget = commitTarget
        self.targetTimestamp = targetTimestamp
    }
}

/// How a frame was presented (the `kind` flags of Wayland's presentation-time protocol).
public struct PresentationFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Presented in sync with the display's vertical retrace (no tearing).
    public static let vsync = PresentationFlags(rawValue: 0x1)
    /// The time was taken from the display hardware's clock.
    public static let hardwareClock = PresentationFlags(rawValue: 0x2)
    /// The hardware signalled the completion (not an estimate from a timer).
    public static let hardwareCompletion = PresentationFlags(rawValue: 0x4)
    /// The client's buffer was scanned out directly (no copy by the compositor).
    public static let zeroCopy = PresentationFlags(rawValue: 0x8)

    /// The flags' names, in the protocol's order (`vsync`, `hw_clock`, `hw_completion`, `zero_copy`).
    public var names: [String] {
        var result: [String] = []
        if contains(.vsync) { result.append("vsync") }
        if contains(.hardwareClock) { result.append("hw_clock") }
        if contains(.hardwareCompletion) { result.append("hw_completion") }
        if contains(.zeroCopy) { result.append("zero_copy") }
        return result
    }
}
