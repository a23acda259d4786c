/// A timer synchronised to the display's refresh: Linux's `CADisplayLink`.
///
/// ```swift
/// let link = DisplayLink(source: source, target: self) { me, link in
///     me.advance(by: link.deltaTime)          // 0 on the first callback and after a resume
///     me.render(until: link.targetTimestamp)  // when this frame will be on screen
/// }
/// link.preferredFramesPerSecond = 30          // every 2nd refresh on a 60 Hz display
/// ```
///
/// - The link starts when created and calls its target on the main actor once per refresh (or per
///   k refreshes with a preferred rate), whether or not the target draws.
/// - The target is held weakly: once it is gone the link invalidates itself and the source stops
///   requesting refreshes for it. The link's owner keeps the link alive; deinit invalidates.
/// - All times are on `CLOCK_MONOTONIC`; ``currentMediaTime()`` reads the same clock.
/// - The per-refresh path allocates nothing.
@MainActor
public final class DisplayLink {
    /// What `deltaTime` is on the first callback after the source stalled (surface hidden,
    /// feedback lost) and came back.
    public enum StallPolicy: Sendable, Hashable {
        /// Zero, as after a resume: animations continue where they were.
        case zeroDelta
        /// The real time that passed: animations jump to where they would be.
        case realGap
    }

    // MARK: Per-callback values (CADisplayLink's names, seconds on CLOCK_MONOTONIC)
    //
    // Two forms of one value, on purpose: these properties are `Double` seconds, as
    // CADisplayLink's are (code ported from Apple platforms reads `link.duration` and
    // `link.targetTimestamp` unchanged), and ``frame`` carries the same values exactly, as
    // `MonotonicInstant` and `Nanoseconds` (integer nanoseconds: differences and sums exact, for
    // checks and schedulers). `link.duration == link.frame.duration.seconds`, and so on.

    /// All of this callback's values, exact (`MonotonicInstant`, `Nanoseconds`): the same values
    /// as the `Double` properties below, which are these in seconds. Zeroes before the first callback.
    public private(set) var frame: DisplayFrame
    public var timestamp: Double { frame.timestamp.seconds }
    public var targetTimestamp: Double { frame.targetTimestamp.seconds }
    /// The refresh period in seconds, as the source measures it (``DisplayFrame/duration``).
    public var duration: Double { frame.duration.seconds }
    public var deltaTime: Double { frame.delta.seconds }
    /// When this frame must be submitted at the latest to be shown at ``targetTimestamp``
    /// (``DisplayFrame/deadline``); nil while the source has learned none.
    public var deadline: Double? { frame.deadline?.time.seconds }
    /// The program's render time the source has learned, in seconds
    /// (``DisplayFrame/renderEstimate``); nil while none was measured.
    public var renderEstimate: Double? { frame.renderEstimate?.seconds }

    // MARK: Control

    /// Pausing stops callbacks (and, when no other link is active, the source's requests).
    /// The first callback after resuming has `deltaTime == 0`.
    public var isPaused: Bool = false {
        didSet {
            guard isPaused != oldValue, isValid else { return }
            if !isPaused { nextDeltaIsZero = true }
            dispatcher?.linkStateChanged()
        }
    }

    /// The preferred callback rate; the link picks the achievable rate (refresh / k) nearest it.
    public var preferredFrameRateRange: FrameRateRange = .default {
        didSet { fixedInterval = nil; cachedPeriod = .zero }
    }

    /// The preferred callback rate in frames per second; 0 means the display's rate.
    public var preferredFramesPerSecond: Int {
        get {
            // 0 for "as fast as the range allows" (also infinity or NaN, which select the same).
            let preferred = preferredFrameRateRange.preferred
            guard preferred.isFinite, preferred > 0 else { return 0 }
            return preferred >= Double(Int.max) ? Int.max : Int(preferred.rounded())
        }
        set { preferredFrameRateRange = FrameRateRange(minimum: 0, maximum: .infinity, preferred: Double(max(0, newValue))) }
    }

    /// Refreshes per callback. Setting it (≥ 1) overrides the preferred rate, as the deprecated
    /// `CADisplayLink.frameInterval` did.
    public var frameInterval: Int {
        get { fixedInterval ?? cachedInterval }
        set { fixedInterval = max(1, newValue) }
    }

    public var stallPolicy: StallPolicy = .zeroDelta

    /// Called with the fate of frames drawn in this link's callbacks, as the source learns it:
    /// how an app learns when its frames were really shown.
    ///
    /// Each ``PresentationFeedback`` names the callback's ``DisplayFrame/refreshIndex`` and says
    /// whether its frame was presented (and when, with the vblank sequence when known) or
    /// discarded, next to the ``DisplayFrame/targetTimestamp`` that callback predicted:
    ///
    /// ```swift
    /// link.presentationHandler = { feedback in
    ///     guard case .presented(let shown, _) = feedback.outcome, let target = feedback.targetTimestamp else { return }
    ///     stats.record(error: shown - target)   // how far the prediction was off
    /// }
    /// ```
    ///
    /// It runs on the main actor, usually one or two refreshes after the frame's callback (the
    /// frames in flight), and only for frames drawn after this link's first callback.
    public var presentationHandler: ((PresentationFeedback) -> Void)?

    public private(set) var isValid = true

    // MARK: State

    private weak var dispatcher: RefreshDispatcher?
    private weak var target: AnyObject?
    private let hasTarget: Bool
    private var action: ((AnyObject, DisplayLink) -> Void)?
    private var nextDeltaIsZero = true
    private var hasFired = false
    /// The dispatcher's refresh count at this link's last callback.
    private var lastCount: UInt64 = 0
    private var fixedInterval: Int?
    private var cachedPeriod: Nanoseconds = .zero
    private var cachedInterval = 1
    private var continuations: ContiguousArray<(id: Int, continuation: AsyncStream<DisplayFrame>.Continuation)> = []
    private var nextContinuationID = 0

    // MARK: Creation

    /// A link that calls `action` with its target on every callback.
    public init<Target: AnyObject>(
        source: some FrameSource,
        target: Target,
        action: @escaping @MainActor (Target, DisplayLink) -> Void
    ) {
        self.frame = DisplayLink.zeroFrame
        self.dispatcher = source.dispatcher
        self.target = target
        self.hasTarget = true
        self.action = { target, link in action(unsafeDowncast(target, to: Target.self), link) }
        source.dispatcher.register(self)
    }

    /// A link that calls the receiver's `displayWillUpdate` on every callback.
    public convenience init<Receiver: DisplayUpdateReceiver>(source: some FrameSource, receiver: Receiver) {
        self.init(source: source, target: receiver) { receiver, link in
            receiver.displayWillUpdate(link.frame)
        }
    }

    /// A link with no target, used by ``frames(from:frameRateRange:bufferingPolicy:)``.
    private init(dispatcher: RefreshDispatcher) {
        self.frame = DisplayLink.zeroFrame
        self.dispatcher = dispatcher
        self.hasTarget = false
        dispatcher.register(self)
    }

    isolated deinit {
        invalidate()
    }

    /// Stops callbacks for good, releases the target, finishes the frame streams and lets the
    /// source stop requesting refreshes if no other link wants them. Idempotent; safe inside a
    /// callback.
    public func invalidate() {
        guard isValid else { return }
        isValid = false
        target = nil
        action = nil
        presentationHandler = nil
        let streams = continuations
        continuations.removeAll()
        for entry in streams { entry.continuation.finish() }
        dispatcher?.linkStateChanged()
    }

    // MARK: Frames as an AsyncSequence

    /// This link's callbacks as a stream of `Sendable` values, delivered after the target's
    /// callback. Finishes when the link is invalidated.
    public func frames(
        bufferingPolicy: AsyncStream<DisplayFrame>.Continuation.BufferingPolicy = .bufferingNewest(8)
    ) -> AsyncStream<DisplayFrame> {
        let (stream, continuation) = AsyncStream.makeStream(of: DisplayFrame.self, bufferingPolicy: bufferingPolicy)
        guard isValid else {
            continuation.finish()
            return stream
        }
        let id = nextContinuationID
        nextContinuationID += 1
        continuations.append((id, continuation))
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in self?.removeContinuation(id: id) }
        }
        return stream
    }

    /// A stream of refreshes from `source` with no target object: the link lives as long as the
    /// stream is being iterated, and stops when the iteration ends.
    public static func frames(
        from source: some FrameSource,
        frameRateRange: FrameRateRange = .default,
        bufferingPolicy: AsyncStream<DisplayFrame>.Continuation.BufferingPolicy = .bufferingNewest(8)
    ) -> AsyncStream<DisplayFrame> {
        let link = DisplayLink(dispatcher: source.dispatcher)
        link.preferredFrameRateRange = frameRateRange
        let (stream, continuation) = AsyncStream.makeStream(of: DisplayFrame.self, bufferingPolicy: bufferingPolicy)
        link.continuations.append((0, continuation))
        link.nextContinuationID = 1
        // The stream owns the link until its iteration ends or the link is invalidated.
        continuation.onTermination = { _ in
            Task { @MainActor in link.invalidate() }
        }
        return stream
    }

    private func removeContinuation(id: Int) {
        continuations.removeAll { $0.id == id }
    }

    // MARK: Per-refresh path (no allocation)

    func receive(_ refresh: ResolvedRefresh) {
        guard isValid, !isPaused else { return }
        if hasTarget && target == nil {
            invalidate()
            return
        }
        let interval = currentInterval(for: refresh.period)
        var delta = Nanoseconds.zero
        var missed = 0
        if hasFired && !nextDeltaIsZero {
            // The dispatcher's count only increases, and timestamps never decrease.
            let steps = refresh.count > lastCount ? refresh.count - lastCount : 0
            let stalled = refresh.followsStall
            if stalled && stallPolicy == .zeroDelta {
                // Treated as a resume: zero delta, no misses counted for the hidden time.
            } else {
                guard steps >= UInt64(interval) || stalled else { return }
                delta = refresh.timestamp - frame.timestamp
                missed = stalled ? 0 : Int(clamping: steps - UInt64(interval))
            }
        }
        nextDeltaIsZero = false
        hasFired = true
        lastCount = refresh.count
        frame = DisplayFrame(
            timestamp: refresh.timestamp,
            targetTimestamp: refresh.targetTimestamp,
            duration: refresh.period,
            delta: delta,
            sequence: refresh.sequence,
            missedFrames: missed,
            provenance: refresh.provenance,
            refreshIndex: refresh.index,
            frameInterval: interval,
            deadline: refresh.deadline,
            renderEstimate: refresh.renderEstimate
        )
        if let action, let target {
            action(target, self)
        }
        for entry in continuations {
            entry.continuation.yield(frame)
        }
    }

    func receive(_ feedback: PresentationFeedback) {
        guard isValid, hasFired else { return }
        presentationHandler?(feedback)
    }

    /// Refreshes per callback at `period` (the dispatcher asks for its sources).
    func interval(for period: Nanoseconds) -> Int { currentInterval(for: period) }

    private func currentInterval(for period: Nanoseconds) -> Int {
        if let fixedInterval { return fixedInterval }
        if period != cachedPeriod {
            cachedPeriod = period
            cachedInterval = preferredFrameRateRange.frameInterval(refreshPeriod: period)
        }
        return cachedInterval
    }

    private static let zeroFrame = DisplayFrame(
        timestamp: .zero, targetTimestamp: .zero, duration: .zero, delta: .zero, sequence: 0,
        missedFrames: 0, provenance: .hardwareVBlank, refreshIndex: 0, frameInterval: 1)
}
