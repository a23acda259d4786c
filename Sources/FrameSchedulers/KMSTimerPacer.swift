import DisplayLinkCore

/// The decisions of a DRM/KMS display whose driver has no vblank events (virtual GPUs, firmware
/// framebuffers, USB displays: `drmCrtcQueueSequence` refused, page flips that complete at once
/// with a vblank counter that never moves). A value type, tested on virtual time: timer firings,
/// presents and flip completions in (every time passed in), refreshes, flips and feedback out.
///
/// - Ticks lie on a grid: tick `k` is at `anchor + k·period`, with the exact period of the mode
///   and the anchor the time of the first start. A refresh's `timestamp` is its tick's time (from
///   the schedule, not from when the timer happened to wake), `sequence` is nil (there is no
///   vblank counter: the core counts refreshes from the timestamps), provenance
///   `TimestampProvenance.timerFallback`: never hardware vblank.
/// - At most one callback per tick: a timer that wakes early (before the next tick's aimed time)
///   asks to be armed again for it; one that wakes late jumps to the newest tick passed (the ticks
///   in between are missed, as the timestamps show). A wake at `now` counts for the period of the
///   grid `now` plus ``wakeAllowance`` is in.
/// - A frame is shown at its target: the frame of tick `k`'s callback is held and flipped when the
///   timer fires for its target tick, so that a driver whose flips complete at once shows it then,
///   not whenever drawing ended. The target is tick `k + 1` unless the program's render time
///   (learned from callback to submission, as ``RenderTimeEstimator`` does, plus its margin) says
///   the frame will not be ready by then: then it is the first tick it will be ready for, and the
///   ticks before it bring no callback (one thread cannot flip a held frame at its tick while it
///   draws the next), as a vblank display shows a frame that misses its vblank at the next. A
///   frame submitted after its target tick is flipped at once.
/// - The timer is aimed early by how late it wakes (the median lateness of its recent wakes, at most
///   a quarter period): the flip of a held frame then lands on its tick rather than after it,
///   and a tick counts as come once its aimed time has.
/// - A frame held when the link stops wanting refreshes (paused after presenting) is still flipped
///   at its tick: ``stopped()`` says to arm the timer once more, and
///   ``timerFiredWhileStopped(now:)`` says to flip it (or to wait on).
/// - At most one flip per period of the grid: a frame is held (replacing an older held frame,
///   which is discarded) while a flip was already submitted in the period it counts for, or is
///   still pending, and flipped at the next timer firing or at the pending flip's completion,
///   whichever comes first in a later period at or after its target.
/// - The first present sets the mode (it counts as that period's flip); its frame is on screen
///   when the mode set returns. The next refresh follows a stall (`followsStall`): the time the
///   mode set and the first buffers took is no missed frames.
/// - Nothing here waits for flips to pace: the timer alone brings callbacks, so a driver whose
///   flips complete at once never makes the display spin.
///
/// Allocation-free.
public struct KMSTimerPacer: Sendable {
    /// What to do with a frame just submitted.
    public enum SubmitAction: Equatable, Sendable {
        /// Nothing is on screen yet: set the mode with this frame (blocking), then call
        /// ``modeSet(at:)``.
        case setMode
        /// Submit a page flip (with an event) for this frame now (it is late: its target tick passed).
        case flip
        /// Keep the frame; flip it when ``timerFired(now:refreshIndex:)`` or
        /// ``flipCompleted(at:now:)`` says so. `discarding`: an older held frame the shell drops.
        case hold(discarding: PresentationFeedback?)
    }

    /// What a timer firing brings.
    public struct Tick: Equatable, Sendable {
        /// Flip the held frame now (before dispatching).
        public var flipHeld: Bool
        /// Dispatch this refresh (nil: the timer woke before the next tick, or before a held frame's
        /// target; arm it again).
        public var event: RefreshEvent?
    }

    /// What a flip completion brings.
    public struct Completion: Equatable, Sendable {
        public var feedback: PresentationFeedback?
        /// Flip the held frame now.
        public var flipHeld: Bool
    }

    /// The exact refresh period (from the mode timings).
    public let period: Nanoseconds
    /// Tick 0's time: the first start.
    public private(set) var anchor: MonotonicInstant?
    /// The newest tick a refresh was dispatched for.
    public private(set) var lastTick: UInt64?
    /// Whether the mode is set.
    public private(set) var isModeSet = false
    /// The refresh whose frame's flip is pending, and the period of the grid of the last flip.
    public private(set) var flipping: UInt64?
    public private(set) var flipPeriod: UInt64?
    /// The refresh of a frame held for a later tick, and that tick, its target (it is flipped in
    /// the target's period or after).
    public private(set) var held: UInt64?
    private var heldTarget: UInt64 = 0
    /// Flips (and the mode set) submitted, one per tick at most.
    public private(set) var flipsSubmitted = 0
    /// The program's render time, from callback to submission.
    public private(set) var renderTime = RenderTimeEstimator()
    /// How late the timer wakes after the time it was aimed for.
    public private(set) var wakeLateness = RecentMedian()
    /// The time the timer was last aimed for (``aimTimer(now:)``), to learn its lateness from.
    private var aimedFor: MonotonicInstant?
    /// When the last dispatched callback ran, and the tick its frame is for.
    private var callbackStart: MonotonicInstant = .zero
    private var callbackTarget: UInt64 = 0
    /// A dispatched callback runs and its frame is not submitted yet: a present outside a
    /// callback (``callbackReturned()``) has no render time and no planned target.
    private var inCallback = false
    /// The next dispatched refresh follows a stop (or is the first).
    private var restarting = true
    /// The refresh of the last dispatched callback.
    private var callbackRefresh: UInt64 = 0

    /// - Parameters:
    ///   - period: the mode's exact refresh period (at least 1 ns).
    ///   - modeSet: the mode is already set (pacing switched to the timer mid-run).
    public init(period: Nanoseconds, modeSet: Bool = false) {
        self.period = Nanoseconds(max(1, period.value))
        isModeSet = modeSet
    }

    /// The period of the grid `time` is in: tick `k` starts period `k`.
    public func periodIndex(at time: MonotonicInstant) -> UInt64 {
        let elapsed = (time - (anchor ?? time)).value
        return elapsed < 0 ? 0 : UInt64(elapsed / period.value)
    }

    /// The time of tick `k`.
    public func time(ofTick k: UInt64) -> MonotonicInstant {
        (anchor ?? .zero) + Nanoseconds(Int64(truncatingIfNeeded: k) &* period.value)
    }

    /// How early the timer is aimed before a tick: the median lateness of its recent wakes, at most
    /// a quarter period.
    public var wakeAllowance: Nanoseconds { Nanoseconds(min(wakeLateness.median, period.value / 4)) }

    /// The next tick the timer is for: the tick after the last dispatched one, or a held frame's
    /// target when that is later (nil before the first start).
    public var nextTick: UInt64? {
        guard anchor != nil else { return nil }
        let next = lastTick.map { $0 + 1 } ?? 0
        return held != nil ? max(next, heldTarget) : next
    }

    /// When the timer should fire next: ``nextTick``'s time less ``wakeAllowance`` (nil before the
    /// first start).
    public var deadline: MonotonicInstant? {
        nextTick.map { time(ofTick: $0) - wakeAllowance }
    }

    /// The timer is armed at `now` for ``deadline`` (returned; nil: do not arm). When that is still
    /// ahead, the timer's lateness when it fires is learned; a deadline already passed (a frame
    /// that took longer than planned) fires at once and says nothing about the timer.
    public mutating func aimTimer(now: MonotonicInstant) -> MonotonicInstant? {
        let deadline = deadline
        aimedFor = deadline.flatMap { $0 > now ? $0 : nil }
        return deadline
    }

    /// The period of the grid a timer wake at `now` counts for: the one ``wakeAllowance`` later.
    private func aimedPeriod(at now: MonotonicInstant) -> UInt64 {
        periodIndex(at: now + wakeAllowance)
    }

    /// Learns the lateness of a wake at `now` (from the time the timer was aimed for).
    private mutating func learnWake(at now: MonotonicInstant) {
        guard let aimed = aimedFor else { return }
        aimedFor = nil
        wakeLateness.append(min(max(0, (now - aimed).value), period.value))
    }

    // MARK: Demand

    /// Refreshes are wanted (again) at `now`. The first start anchors the grid at `now` and
    /// returns tick 0's refresh to dispatch at once; a restart returns nil: arm the timer for
    /// ``deadline`` (the next tick), whose refresh follows the stall.
    public mutating func start(now: MonotonicInstant, refreshIndex: UInt64) -> RefreshEvent? {
        restarting = true
        guard anchor == nil else { return nil }
        anchor = now
        return dispatch(tick: 0, refreshIndex: refreshIndex, now: now)
    }

    /// What the timer firing brings while no refreshes are wanted.
    public enum StoppedTick: Equatable, Sendable {
        /// The held frame's tick has come: flip it now.
        case flipHeld
        /// A held frame waits for its tick (the timer woke before it, or a flip is still pending):
        /// arm the timer for ``deadline`` again.
        case armAgain
        /// Nothing is held: leave the timer unarmed.
        case idle
    }

    /// Nobody wants refreshes: no more callbacks, and the next refresh follows a stall. Returns
    /// whether the timer must still fire once more, for a held frame's tick (a link paused right
    /// after presenting; see ``timerFiredWhileStopped(now:)``).
    @discardableResult
    public mutating func stopped() -> Bool {
        restarting = true
        return held != nil
    }

    /// The session came back after another VT had the display (the shell has set the mode again
    /// with the frame last shown, and dropped any held frame): a flip pending before the pause
    /// completed while away, unseen, and a held frame is gone. Forgets both, and the last flip's
    /// period, so the next frame flips at once; the next refresh follows a stall.
    public mutating func sessionResumed() {
        flipping = nil
        held = nil
        flipPeriod = nil
        restarting = true
        inCallback = false
    }

    /// The timer fired at `now`. No refresh is dispatched before a held frame's target tick:
    /// drawing the next frame then would keep the thread from flipping the held one at its tick.
    public mutating func timerFired(now: MonotonicInstant, refreshIndex: UInt64) -> Tick {
        guard anchor != nil else { return Tick(flipHeld: false, event: nil) }
        let k = aimedPeriod(at: now)
        learnWake(at: now)
        if let last = lastTick, k <= last { return Tick(flipHeld: false, event: nil) }
        let flipHeld = flipHeldIfDue(period: k)
        if held != nil, heldTarget > k { return Tick(flipHeld: flipHeld, event: nil) }
        return Tick(flipHeld: flipHeld, event: dispatch(tick: k, refreshIndex: refreshIndex, now: now))
    }

    /// The longest a frame is planned to take, in periods: a longer render time is a stall (a
    /// first shader compile, a loaded machine), and planning for it in full would slow the frames
    /// after it while the estimate decays.
    static let longestPlannedFrame: Int64 = 4

    private mutating func dispatch(tick k: UInt64, refreshIndex: UInt64, now: MonotonicInstant) -> RefreshEvent {
        lastTick = k
        callbackRefresh = refreshIndex
        callbackStart = now
        callbackTarget = k + targetOffset(tick: k, now: now)
        inCallback = true
        let timestamp = time(ofTick: k)
        let event = RefreshEvent(
            timestamp: timestamp, sequence: nil, refreshPeriod: period,
            targetTimestamp: time(ofTick: callbackTarget), provenance: .timerFallback,
            followsStall: restarting)
        restarting = false
        return event
    }

    /// The dispatched callback returned: a frame presented after this (outside a callback, as after
    /// a pause) is not its frame.
    public mutating func callbackReturned() {
        inCallback = false
    }

    /// How many ticks after tick `k` a frame started at `now` is ready for: it must be submitted
    /// before the timer is aimed for its tick. 1 until a render time is known.
    private func targetOffset(tick k: UInt64, now: MonotonicInstant) -> UInt64 {
        guard let budget = renderTime.budget, isModeSet else { return 1 }
        let ready = (now - time(ofTick: k)).value + budget.value + wakeAllowance.value
        let ticks = (max(0, ready) + period.value - 1) / period.value
        return UInt64(min(max(1, ticks), KMSTimerPacer.longestPlannedFrame))
    }

    // MARK: Presents and flips

    /// The timer fired at `now` with no refreshes wanted (the link paused after presenting): the
    /// held frame is flipped when its target tick has come (and the last flip's period has
    /// passed) and no flip is pending. No refresh is dispatched.
    public mutating func timerFiredWhileStopped(now: MonotonicInstant) -> StoppedTick {
        restarting = true
        let current = aimedPeriod(at: now)
        learnWake(at: now)
        if flipHeldIfDue(period: current) { return .flipHeld }
        return held != nil && flipping == nil ? .armAgain : .idle
    }

    /// The one rule for flipping a held frame, in period `current` of the grid: no flip pending,
    /// at or after its target tick and after the last flip's period.
    private mutating func flipHeldIfDue(period current: UInt64) -> Bool {
        guard let frame = held, flipping == nil, current >= heldTarget, flipPeriod.map({ current > $0 }) ?? true else { return false }
        held = nil
        submit(frame, period: current)
        return true
    }

    /// The current callback's frame was submitted at `now` (its render time is learned): held for
    /// its target tick, or flipped at once when that tick has come and no flip is in the way.
    public mutating func frameSubmitted(now: MonotonicInstant) -> SubmitAction {
        let current = aimedPeriod(at: now)
        if isModeSet, inCallback {
            // Once per tick the frame was planned over: the estimate decays with time, as it does
            // where a frame comes every tick, not more slowly because a slow frame made them rarer.
            let sample = Nanoseconds(min((now - callbackStart).value, period.value * KMSTimerPacer.longestPlannedFrame))
            let ticks = min(max(1, callbackTarget &- (lastTick ?? 0)), UInt64(KMSTimerPacer.longestPlannedFrame))
            for _ in 0..<ticks { renderTime.record(sample) }
        }
        let target = inCallback ? callbackTarget : (lastTick ?? 0) + 1
        inCallback = false
        if !isModeSet {
            isModeSet = true
            flipPeriod = current
            flipsSubmitted += 1
            // Nothing was on screen before: the first tick after the mode set starts the rhythm
            // (as the first vblank after it does with vblank events), without counting the ticks
            // the mode set and the first buffers took as missed.
            restarting = true
            return .setMode
        }
        if current < target || flipping != nil || flipPeriod.map({ current <= $0 }) == true {
            let stale = held.map { PresentationFeedback(refreshIndex: $0, outcome: .discarded) }
            held = callbackRefresh
            heldTarget = target
            return .hold(discarding: stale)
        }
        submit(callbackRefresh, period: current)
        return .flip
    }

    /// The mode set returned at `time`: the first frame is on screen.
    public mutating func modeSet(at time: MonotonicInstant) -> PresentationFeedback {
        PresentationFeedback(refreshIndex: callbackRefresh, outcome: .presented(at: time, sequence: nil))
    }

    private mutating func submit(_ refresh: UInt64, period current: UInt64) {
        flipping = refresh
        flipPeriod = current
        flipsSubmitted += 1
    }

    /// The pending flip completed at `time` (the event's time; it carries no vblank counter), and
    /// its event is handled at `now` (later when it waited to be read). A held frame is flipped now
    /// if its target tick has come and `now` is in a later period than the last flip's.
    public mutating func flipCompleted(at time: MonotonicInstant, now: MonotonicInstant) -> Completion {
        guard let frame = flipping else { return Completion(feedback: nil, flipHeld: false) }
        flipping = nil
        let feedback = PresentationFeedback(refreshIndex: frame, outcome: .presented(at: time, sequence: nil))
        return Completion(feedback: feedback, flipHeld: flipHeldIfDue(period: aimedPeriod(at: max(time, now))))
    }

    /// The kernel refused the flip just submitted as busy (`EBUSY`): the frame is dropped (its
    /// feedback, to deliver, says discarded); the timer's ticks go on, and the next frame flips.
    public mutating func flipRefused() -> PresentationFeedback? {
        guard let frame = flipping else { return nil }
        flipping = nil
        return PresentationFeedback(refreshIndex: frame, outcome: .discarded)
    }
}
