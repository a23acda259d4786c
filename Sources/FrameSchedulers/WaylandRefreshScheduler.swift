import DisplayLinkCore

// This file holds the scheduler's configuration, its state and what is derived from the rhythm.
// The rules live in extensions, one job a file: starting and stopping (+Demand), making refreshes
// (+Refreshes), presentation feedback (+Feedback), commit targets and strides (+CommitTiming),
// the held-commit watchdog (+HeldCommits), stalls and failure (+Stalls), and low latency (+Latency).

/// The decisions of a Wayland frame source, with no Wayland calls and no clock reads: events in
/// (frame callback done, presentation feedback, watchdog firings, demand changes), refreshes and
/// requests out. The shell (`WaylandFrameSource`) makes the C calls, reads the clock, converts
/// presentation times to `CLOCK_MONOTONIC`, runs the timer, and feeds this type.
///
/// Its rules (timestamps, sequences, targets, the period, commit timing and held timed commits,
/// strides, FIFO, suspension) are described in <doc:WaylandScheduling>.
public struct WaylandRefreshScheduler: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Whether `wp_presentation` feedback is requested (false: callback arrivals are the estimate).
        public var usesPresentation: Bool
        /// No callback for this long means the compositor stopped pacing us.
        public var stallTimeout: Nanoseconds
        /// While stalled, tick this often with `TimestampProvenance.timerFallback` (nil: don't).
        public var fallbackTickInterval: Nanoseconds?

        /// Whether each refresh carries a ``Refresh/commitTarget`` (`wp_commit_timing_manager_v1`).
        public var timesCommits: Bool
        /// Whether held timed commits end commit timing on their output for good (see
        /// <doc:WaylandScheduling>; false: timed commits are kept whatever the compositor does).
        public var fallsBackFromHeldCommits: Bool
        /// Whether commits are timed only while the feedback on the current output carries
        /// `VSYNC` (``CommitTimingGate``; false: from the first presentation on, whatever it says).
        public var requiresVsyncForTimedCommits: Bool

        public init(
            usesPresentation: Bool = true, stallTimeout: Nanoseconds = Nanoseconds(500_000_000),
            fallbackTickInterval: Nanoseconds? = nil, timesCommits: Bool = false,
            fallsBackFromHeldCommits: Bool = true, requiresVsyncForTimedCommits: Bool = true
        ) {
            self.usesPresentation = usesPresentation
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.timesCommits = timesCommits
            self.fallsBackFromHeldCommits = fallsBackFromHeldCommits
            self.requiresVsyncForTimedCommits = requiresVsyncForTimedCommits
        }
    }

    /// A refresh to dispatch, and what to request for it before dispatching.
    public struct Refresh: Sendable, Hashable {
        public var event: RefreshEvent
        /// The index the dispatcher gives this refresh (refreshes are counted from 0).
        public var index: UInt64
        /// Send `wl_surface.frame` (no callback is outstanding).
        public var requestsFrameCallback: Bool
        /// Send `wp_presentation.feedback` and file it under this slot (its frame is this refresh's).
        public var feedbackSlot: Int?
        /// Ask the commit made in this refresh not to be presented before this time
        /// (`wp_commit_timer_v1.set_timestamp`); nil without commit timing.
        public var commitTarget: MonotonicInstant?
        /// Make this refresh's commit wait for the previous FIFO barrier and set a new one
        /// (`wp_fifo_v1.wait_barrier` + `set_barrier`; see <doc:WaylandScheduling>).
        public var setsFifoBarrier: Bool
        /// Refreshes this one's frame is meant to follow the previous by (k with a preferred rate
        /// below the refresh and commit timing; else 1): its target is that many periods ahead.
        public var stride: Int
    }

    public static let feedbackCapacity = 16
    /// Periods below this (measured from bogus presentation times) are not believed.
    public static let minimumPeriod = RhythmEstimator.minimumPeriod
    /// Presentation times later than their feedback's arrival by more than this are not learned from.
    public static let futureTolerance = Nanoseconds(100_000_000)
    /// Presentation times earlier than their feedback's arrival by more than this are not learned from.
    public static let pastTolerance = Nanoseconds(3_600_000_000_000)
    /// Periods past its target (and of silence) after which a timed commit is taken as held.
    public static let heldCommitPeriods: Int64 = 3
    /// How far before a frame's target its commit is timed (at most half a period), as Mesa's
    /// Vulkan WSI does: a compositor shows it at the vblank of the target, and one that can move
    /// its vblank (variable refresh) shows it no more than this early.
    public static let commitTargetMargin = Nanoseconds(500_000)
    /// A commit whose time would be less than this after the refresh is made goes untimed: it is
    /// due by the time it is committed.
    public static let minimumCommitLead = Nanoseconds(1_000_000)
    /// The largest stride used for a preferred rate below the refresh.
    public static let maximumStride = 8

    public let configuration: Configuration
    /// The rhythm learned from presentations (period, phase, depth, prediction).
    public internal(set) var rhythm: RhythmEstimator

    // MARK: Demand, suspension and content (see +Demand)

    /// Whether a link wants refreshes.
    public internal(set) var isActive = false
    /// Whether the connection failed (nothing more is requested or dispatched).
    public internal(set) var isFailed = false
    /// A start refresh is scheduled (``demandChanged(_:at:)`` returned true, ``startDue(at:)`` not yet called).
    public internal(set) var isStartPending = false
    /// Whether the compositor suspended the surface (xdg_toplevel `suspended`): nothing is
    /// requested or dispatched until it is resumed (before ``hasCommittedContent``, but for a
    /// start refresh: see <doc:WaylandScheduling>).
    public internal(set) var isSuspended = false
    /// Whether a frame with content was committed (``contentCommitted()``): the surface is mapped,
    /// so a suspension holds back start refreshes too.
    public internal(set) var hasCommittedContent = false
    /// Whether any frame callback came.
    var hasBeenCalledBack = false
    var resumingFromSuspension = false

    // MARK: Refreshes (see +Refreshes)

    /// Whether callbacks have stopped arriving (set by the watchdog, cleared by the next refresh).
    public internal(set) var isStalled = false
    /// A `wl_surface.frame` request is outstanding.
    public internal(set) var hasOutstandingFrameCallback = false
    /// `wl_surface.frame` requests asked for.
    public internal(set) var frameRequestCount = 0
    /// The index of the next refresh.
    public internal(set) var nextRefreshIndex: UInt64 = 0
    /// The last refresh's timestamp and sequence.
    public internal(set) var lastTimestamp: MonotonicInstant?
    public internal(set) var lastSequence: UInt64 = 0
    /// The last refresh's target.
    var lastTarget: MonotonicInstant?
    var lastCallbackArrival: MonotonicInstant?
    var returningFromStall = false
    var lastActivity = MonotonicInstant.zero
    var lastDeliveredPresentation: MonotonicInstant?
    /// The compositor `seq` of the last refresh, when it was stamped with a presentation that had one.
    var lastCompositorSequence: UInt64?
    var callbackArrival: MonotonicInstant?
    /// The refresh that counting by time starts from: the last one on the rhythm.
    var countingAnchor: (time: MonotonicInstant, sequence: UInt64)?

    // MARK: Feedback (see +Feedback)

    /// Feedback events (presented or discarded) for known slots.
    public internal(set) var feedbackCount = 0
    var slots: ContiguousArray<Slot>
    /// When frames must be committed: learned from the commits of the frames presented.
    public internal(set) var deadlines = SubmitDeadlineLearner()
    /// When callbacks start (see ``plannedStart(for:now:)``). Low latency plans with the
    /// compositor's latch ``latchPrior`` before the presentation until frames show otherwise.
    public var latency: LatencyPolicy = .throughput {
        didSet { deadlines.prior = latency == .lowLatency ? WaylandRefreshScheduler.latchPrior : nil }
    }
    /// The program's time from a callback's start to its frame's commit.
    public internal(set) var renderTime = RenderTimeEstimator()
    /// The last frames' render times, for a typical one (their median): a target a frame is sure
    /// to miss is judged by it, not by the estimate, which a single slow frame keeps high.
    public internal(set) var recentRenderTimes = RecentMedian()
    /// How late the shell's timer runs a planned start, learned by the same rule (rises at once
    /// to a later wake-up, decays slowly; no margin): a start planned that much earlier runs in
    /// time, where one late wake-up otherwise missed the latch, and with FIFO the frame after it.
    public internal(set) var wakeLateness = RenderTimeEstimator(margin: .zero)
    /// When the current refresh's callback started (nil once its frame is committed).
    var callbackBegan: MonotonicInstant?

    // MARK: Commit timing and held timed commits (see +CommitTiming, +HeldCommits)

    /// Which outputs commits may be timed on, from their feedback's `VSYNC` flag and held commits.
    public internal(set) var commitTimingGate: CommitTimingGate
    /// Whether a timed commit was found held (on any output), so timed commits stopped there
    /// for good (see <doc:WaylandScheduling>).
    public var isCommitTimingFallenBack: Bool { commitTimingGate.hasStoppedAnyOutput }
    /// Why commit timing stopped (nil while it has not), for the shell's one warning.
    public internal(set) var commitTimingFallbackReason: String?
    /// The refreshes per callback every active link's interval is a multiple of (set by the shell
    /// before each batch from `RefreshDispatcher.commonFrameInterval(refreshPeriod:)`; 1: every
    /// refresh). Only used with commit timing (see <doc:WaylandScheduling>).
    public var linkFrameInterval = 1
    /// Whether a callback for a strided commit came before its commit target, so striding saves
    /// no wake-up on this compositor and stays off.
    public internal(set) var isStridingUseless = false
    /// The commit target and stride of the commit that asked for the outstanding frame callback.
    var outstandingCommitTarget: MonotonicInstant?
    var outstandingStride = 1
    /// The target of the last release commit while no commit made after it is known applied
    /// (a callback asked for after it came): a release may not wake the compositor, or be held
    /// itself, and the rule then watches it as it watches a timed commit.
    var releaseTarget: MonotonicInstant?
    /// Whether the outstanding frame callback was asked for after the last release.
    var outstandingAfterRelease = false
    /// Release commits asked for, and those since the last frame callback.
    public internal(set) var releaseCount = 0
    var releasesSinceCallback = 0
    /// Output changes seen (``outputChanged(to:advertisedPeriod:)``): feedback for a frame made
    /// before the last one says nothing of the current output's `VSYNC`.
    var outputGeneration: UInt64 = 0
    /// The refresh whose commit asked for the outstanding frame callback, and whether its
    /// feedback came (presented or discarded): the commit was applied, so it is not held (a
    /// window hidden on a compositor without `suspended`, weston 16's, discards it and sends no
    /// callback).
    var outstandingRequestIndex: UInt64?
    var outstandingCommitApplied = false
    /// Whether that feedback said presented: the surface is shown, so a callback that still does
    /// not come was lost (``lostFrameCallbackCount``).
    var outstandingCommitPresented = false
    /// Frame callbacks given up as lost: their frame was presented and no callback came within
    /// the stall timeout (see ``watchdog(now:)``).
    public internal(set) var lostFrameCallbackCount = 0
    /// Whether the surface left every output after being on one (``surfaceLeftAllOutputs(_:)``):
    /// hidden, so a callback that does not come says nothing about held commits.
    public internal(set) var isOffAllOutputs = false

    public init(configuration: Configuration = Configuration(), advertisedPeriod: Nanoseconds = .zero) {
        self.configuration = configuration
        rhythm = RhythmEstimator(advertisedPeriod: advertisedPeriod)
        commitTimingGate = CommitTimingGate(requiresVsync: configuration.requiresVsyncForTimedCommits)
        slots = ContiguousArray(repeating: Slot(), count: WaylandRefreshScheduler.feedbackCapacity)
    }

    // MARK: Derived state

    /// The newest presentation known, its sequence and the advertised period.
    public var timeline: PresentationTimeline { rhythm.timeline }

    /// The period reported with refreshes and used for targets: measured presentation intervals,
    /// else the last frame-callback interval, else the advertised period, else 60 Hz (see
    /// <doc:WaylandScheduling>).
    public var period: Nanoseconds { rhythm.period }

    /// Whether ``period`` rests on at least three measured presentation intervals.
    public var isPeriodMeasured: Bool { rhythm.isPeriodMeasured }

    /// Whether the advertised period is no reference (a feedback reported `refresh` 0).
    public var isAdvertisedPeriodUnreliable: Bool { rhythm.isAdvertisedPeriodUnreliable }
    /// Presentation intervals accepted as periods (see <doc:WaylandScheduling>).
    public var measuredIntervalCount: Int { rhythm.measuredIntervalCount }
    /// The presentation depth learned from presented frames (nil: none presented yet).
    public var learnedDepth: Int? { rhythm.learnedDepth }

    /// Whether commits carry targets at this point: configured, and the gate open on the current
    /// output (its feedback carries `VSYNC`, and no timed commit was held there).
    public var isTimingCommits: Bool { configuration.timesCommits && commitTimingGate.allowsTimedCommits }
}
