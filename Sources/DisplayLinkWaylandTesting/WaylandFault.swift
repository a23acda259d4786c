/// What ``WaylandFaultProxy`` does wrong, on the events that time frames: `wl_callback.done` of a
/// surface's frame callbacks and the events of `wp_presentation_feedback`. Each fault models a
/// buggy or hostile compositor; a client must survive every one (never trap, never spin, keep its
/// callbacks coming while frame events come) or fail with an error when the connection breaks.
public enum WaylandFault: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Nothing: the proxy only forwards (the control run).
    case none
    /// A frame callback's `done` never arrives.
    case dropFrameCallback
    /// A frame callback's `done` arrives three refreshes (50 ms) late.
    case delayFrameCallback
    /// A frame callback's `done` arrives again 8 ms later (on the id, which the client may have
    /// reused for its next frame callback by then).
    case duplicateFrameCallback
    /// A feedback's `presented` or `discarded` never arrives.
    case dropFeedback
    /// A feedback's `presented` or `discarded` arrives three refreshes (50 ms) late.
    case delayFeedback
    /// A feedback's event arrives after the next feedback's.
    case reorderFeedback
    /// A feedback's event arrives again 8 ms later.
    case duplicateFeedback
    /// `presented` one second before the time the compositor said.
    case presentedBackwards
    /// `presented` at time 0.
    case presentedZero
    /// `presented` with `tv_sec` past what nanoseconds in 64 bits can hold (2⁶³ ns).
    case presentedNearOverflow
    /// `presented` with `tv_sec` at the largest value the protocol carries (2⁶⁴ − 1).
    case presentedSecondsMax
    /// `presented` a year after the time the compositor said.
    case presentedFarFuture
    /// `presented` with `tv_nsec` of 2³² − 1 (the protocol allows 0 to 999,999,999).
    case presentedNanosecondsInvalid
    /// `presented` with `refresh` 0 (the protocol's "unknown").
    case refreshZero
    /// `presented` with `refresh` of 2³² − 1 ns (4.3 s).
    case refreshAbsurd
    /// `presented` with `seq` 1,000 below the compositor's.
    case sequenceBackwards
    /// `presented` with `seq` counted from 2⁶⁴ − 3, so that it wraps.
    case sequenceWrapping
    /// `presented` with its flags drawn at random.
    case flagsChanged
    /// `presented` turned into `discarded`.
    case presentedAsDiscarded
    /// A `presented` sent earlier replayed on its feedback's id, which the client has destroyed
    /// or reused: feedback for a commit the client never made.
    case staleFeedback
    /// The `wl_output` global removed (`wl_registry.global_remove`) between a frame and its
    /// feedback, once.
    case outputRemoved
    /// The socket cut in the middle of a `presented` event, once.
    case cutMidMessage
    /// mutter-like: a commit that carries a `wp_commit_timer_v1` timestamp is held: neither its
    /// frame callback nor its feedback comes (nor those of the surface's later commits) until a
    /// commit on another surface, or another timed commit on the same one, releases it (as on
    /// mutter 50.5's idle stage, see Docs/MEASURED.md). Candidates are timed commits.
    case holdTimedCommits

    public var description: String { rawValue }

    /// Whether the fault acts on frame callbacks (otherwise on presentation feedback).
    public var actsOnFrameCallbacks: Bool {
        switch self {
        case .dropFrameCallback, .delayFrameCallback, .duplicateFrameCallback: true
        default: false
        }
    }

    /// Whether the fault acts once only.
    public var actsOnce: Bool { self == .outputRemoved || self == .cutMidMessage }

    /// Whether the fault acts on the client's requests (timed commits) rather than on events.
    public var actsOnRequests: Bool { self == .holdTimedCommits }

    /// Whether the fault acts on `discarded` as well as `presented`.
    var actsOnDiscarded: Bool {
        switch self {
        case .dropFeedback, .delayFeedback, .reorderFeedback, .duplicateFeedback: true
        default: false
        }
    }
}

/// When ``WaylandFaultProxy`` applies its fault: to each event it acts on, after the first
/// `sparing` of them (the client has started), with `probability`, drawn from a generator seeded
/// with `seed`: the same seed and the same stream of events give the same faults.
public struct WaylandFaultSchedule: Sendable, CustomStringConvertible {
    public var fault: WaylandFault
    public var seed: UInt64
    public var probability: Double
    public var sparing: Int

    public init(_ fault: WaylandFault, seed: UInt64 = 1, probability: Double = 0.3, sparing: Int = 20) {
        self.fault = fault
        self.seed = seed
        self.probability = min(max(probability, 0), 1)
        self.sparing = max(sparing, 0)
    }

    public var description: String { "\(fault) (seed \(seed), p \(probability), after \(sparing))" }
}
