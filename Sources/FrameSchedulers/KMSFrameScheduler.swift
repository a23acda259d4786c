import DisplayLinkCore

/// The decisions of a DRM/KMS display (legacy page flips with `DRM_MODE_PAGE_FLIP_EVENT`), as a
/// value type: kernel events and presents in (every time passed in), refreshes to dispatch,
/// presentation feedback and requests to the kernel out. The shell (`DRMDisplay`) does the C
/// calls and clock reads, and keeps the buffer objects parallel to ``flipping`` and ``held``.
///
/// - Start: before the mode is set, the CRTC may already be running (a console on it): then the
///   first callback is the kernel's current vblank (its sequence and time, hardware provenance),
///   in the same sequence space as every later one. When it is off there is no vblank: the first
///   callback is an estimate at `now` with no sequence. Either way its frame sets the mode.
///   The first vblank event after the mode set, or after any (re)start, is a restart
///   (`followsStall`): it begins the kernel's sequence space without invented misses.
/// - Frames in flight (``FlipPipeline``): one while drawing fits the period, two (the frame
///   submitted while a flip is pending is held and flipped at that flip's completion) once a frame
///   misses its vblank (not once per window for a low-latency start that ran late with a fast
///   frame). `targetTimestamp` is one or two periods after `timestamp` accordingly,
///   plus the lateness learned from recent frames (counted once 16 frames are known). A target
///   never goes back: it is held at the previous one rather than named earlier.
/// - A callback that draws nothing still ticks: the next vblank is queued instead of a flip.
/// - Kernel values never trap: 32-bit flip sequences are extended to 64 bits across wraps, and a
///   sequence or time that goes backwards starts a new space (a restart) instead of a huge step;
///   emitted timestamps never decrease.
///
/// Allocation-free.
public struct KMSFrameScheduler: Sendable {
    /// A frame on its way to the screen: the refresh it was drawn for and the vblank the frames in
    /// flight put it on (its target without the learned lateness).
    public struct Frame: Sendable, Hashable {
        public var refresh: UInt64
        public var expected: MonotonicInstant
        public init(refresh: UInt64, expected: MonotonicInstant) {
            self.refresh = refresh
            self.expected = expected
        }
    }

    /// What to do with a frame just submitted (swapped and locked by the shell).
    public enum SubmitAction: Equatable, Sendable {
        /// Nothing is on screen yet: set the mode with this frame, then queue a vblank event.
        case setMode
        /// Queue a page flip with this frame now.
        case flip
        /// Queue a page flip now, then (after returning to the event loop) read the current vblank
        /// and call ``currentVblank(sequence:at:eventPending:refreshIndex:now:)``: the next frame may start now.
        case flipAndStartNext
        /// A flip is pending: keep this frame and flip it at that flip's completion. `discarding`:
        /// an older held frame the shell drops (never reached: no callback runs while one is held).
        case hold(discarding: PresentationFeedback?)
    }

    /// What follows a kernel event.
    public enum Next: Equatable, Sendable {
        /// Nothing: an event is already on its way (or nobody wants refreshes).
        case none
        /// Run a callback for this vblank: ``beginCallback(refreshIndex:now:)``, dispatch, then
        /// ``callbackEnded(wantsRefreshes:)`` (only if refreshes are still wanted).
        case callback
        /// Queue a vblank event, after ``idleVblankQueued()`` (the callback for this vblank already
        /// ran, and drew nothing), if refreshes are still wanted.
        case queueVblank
    }

    public struct EventOutcome: Equatable, Sendable {
        /// Deliver this first (the frame shown from this vblank).
        public var feedback: PresentationFeedback?
        /// Flip the held frame now (it is ``flipping`` from now on).
        public var flipHeld: Bool
        public var next: Next
    }

    /// What to do when refreshes are wanted again.
    public enum StartAction: Equatable, Sendable {
        /// An event is on its way already: it brings the next callback.
        case none
        /// Queue a vblank event; its callback is a restart.
        case queueVblank
        /// Nothing on screen yet: dispatch this refresh; the frame it presents sets the mode.
        case dispatch(RefreshEvent)
    }

    /// The exact refresh period (from the mode timings).
    public let period: Nanoseconds
    public private(set) var pipeline = FlipPipeline()
    /// The frame whose flip is pending, and the one held until that flip completes.
    public internal(set) var flipping: Frame?
    public private(set) var held: Frame?
    /// Whether the mode is set (the first submitted frame is on its way to the screen).
    public private(set) var isModeSet = false
    /// A flip or vblank event is on its way.
    public internal(set) var isWaitingForEvent = false
    /// The newest vblank sequence the kernel reported (64-bit, extended).
    public private(set) var lastSequence: UInt64 = 0
    /// How many periods after their expected vblank recent frames appeared.
    public private(set) var lateness = RecentMedian()
    /// The target of the last callback (targets never go back between callbacks of one run).
    private var lastTarget: MonotonicInstant?
    /// Stop deciding anything (the display failed).
    public private(set) var hasFailed = false
    /// When frames must be submitted: learned from the submissions of the frames shown.
    public private(set) var deadlines = SubmitDeadlineLearner()
    /// The program's time from a callback's start to its frame's submission.
    public private(set) var renderTime = RenderTimeEstimator()
    /// The last frames' render times, for their median (see ``planningBudget``).
    public private(set) var recentRenderTimes = RecentMedian()
    /// The longest render time among the last 225–256 frames drawn in under a period (see
    /// ``planningBudget``; a slower frame misses whenever it starts and deepens the pipeline).
    public private(set) var renderPeak = RecentPeak()
    /// How late the process wakes, learned by the render time's rule (rises at once to a later
    /// wake-up, decays slowly; no margin) from the timer's planned starts and from the vblank
    /// events read while no frame was in flight: a start planned that much earlier still submits
    /// in time on a host whose timers wake late (a loaded machine, an emulated one). The events
    /// teach it without planned starts, so a host that wakes late stops planning before a miss
    /// and plans again once it wakes on time.
    public private(set) var wakeLateness = RenderTimeEstimator(margin: .zero)
    /// When callbacks start (see ``plannedStart(for:now:)``). Low latency assumes the driver's
    /// latch ``latchPrior`` before the vblank until frames show otherwise.
    public var latency: LatencyPolicy = .throughput {
        didSet { deadlines.prior = latency == .lowLatency ? KMSFrameScheduler.latchPrior : nil }
    }
    /// The recent frames' submissions (refresh, target, when), until their presentation is known.
    var submissions = SubmissionRing()

    /// The refresh whose frame the mode set put on screen, until the first vblank after it.
    private var modeSetFrame: UInt64?
    /// The next callback from a vblank is a restart.
    private var restarting = true
    /// The vblank the next callback is for (set by the event that asks for it), and whether the
    /// event was read while no frame was in flight (the process was waiting for it: how late the
    /// callback begins after it is how late the process wakes).
    private var pending: (time: MonotonicInstant, sequence: UInt64, periods: Int, awaited: Bool)?
    /// The last dispatched callback: its vblank time (or start estimate), sequence (nil for the
    /// estimate), the vblank its frame goes out at by the frames in flight alone, when it began,
    /// and its refresh index.
    public private(set) var callbackVblank = MonotonicInstant.zero
    public private(set) var callbackSequence: UInt64?
    public private(set) var callbackExpected = MonotonicInstant.zero
    public private(set) var callbackBegan = MonotonicInstant.zero
    public private(set) var callbackRefresh: UInt64 = 0
    var submittedInCallback = false
    /// The current callback started at a planned start (low latency).
    private var callbackPlanned = false
    /// The refresh of the last planned start that ran late without going to two frames in flight.
    private var lastLateStart: UInt64?
    /// The newest timestamp handed out (timestamps never decrease).
    private var lastTimestamp: MonotonicInstant?
    /// A ``SubmitAction/flipAndStartNext`` awaits its ``currentVblank(sequence:at:eventPending:refreshIndex:now:)``.
    public internal(set) var wantsCurrentVblank = false

    /// Lateness counts once this many frames are known (slow start-up frames are not the pace).
    public static let latenessFrames = 16
    /// At most this many periods of learned lateness.
    public static let maximumLateness: Int64 = 8
    /// The driver's latch assumed before the vblank: a flip queued this long before it is shown
    /// at it (atomic and legacy flips are applied at the vblank itself).
    public static let latchPrior = Nanoseconds(1_000_000)
    /// A vblank time further ahead of the time its callback begins than this, or further behind
    /// than ``pastTolerance``, is implausible: no clock reading explains it.
    public static let futureTolerance = Nanoseconds(100_000_000)
    public static let pastTolerance = Nanoseconds(3_600_000_000_000)
    /// Starts later than now by less than this are not worth a timer.
    public static let minimumDelay = Nanoseconds(500_000)

    /// Whether vblank times implausibly far from the callback's start are replaced by it
    /// (``futureTolerance``, ``pastTolerance``): on for a kernel's events. Off where the times are
    /// a program's to give (a fed source replaying a recording may report times far from now).
    public var checksVblankTimes: Bool

    public init(period: Nanoseconds, checksVblankTimes: Bool = true) {
        self.period = Nanoseconds(max(1, period.value))
        self.checksVblankTimes = checksVblankTimes
    }

    // MARK: Demand

    /// Refreshes are wanted (again): start, or restart, the rhythm.
    /// - Parameters:
    ///   - now: the time of the request.
    ///   - refreshIndex: the index the dispatcher gives the next refresh.
    ///   - currentVblank: before the mode is set, the CRTC's current vblank if the kernel
    ///     gave one (the CRTC is running); nil: it is off, the first callback is an estimate.
    public mutating func start(
        now: MonotonicInstant, refreshIndex: UInt64,
        currentVblank: (sequence: UInt64, time: MonotonicInstant)? = nil
    ) -> StartAction {
        guard !hasFailed, !isWaitingForEvent else { return .none }
        restarting = true
        if isModeSet {
            isWaitingForEvent = true
            return .queueVblank
        }
        if let current = currentVblank, current.time <= now {
            lastSequence = current.sequence
            let timestamp = monotonic(current.time)
            let event = RefreshEvent(
                timestamp: timestamp, sequence: current.sequence, refreshPeriod: period,
                targetTimestamp: timestamp + period,
                provenance: timestamp == current.time ? .hardwareVBlank : .frameCallbackEstimate, followsStall: true,
                renderEstimate: renderTime.estimate)
            began(timestamp: timestamp, sequence: current.sequence, periods: 1, refreshIndex: refreshIndex, now: now)
            return .dispatch(event)
        }
        let timestamp = monotonic(now)
        let event = RefreshEvent(
            timestamp: timestamp, sequence: nil, refreshPeriod: period,
            targetTimestamp: timestamp + period, provenance: .frameCallbackEstimate, renderEstimate: renderTime.estimate)
        began(timestamp: timestamp, sequence: nil, periods: 1, refreshIndex: refreshIndex, now: now)
        return .dispatch(event)
    }

    // MARK: Presents

    /// The current callback's frame was submitted (swapped) at `now`.
    public mutating func frameSubmitted(now: MonotonicInstant) -> SubmitAction {
        submittedInCallback = true
        let drawn = now - callbackBegan
        renderTime.record(drawn)
        recentRenderTimes.append(max(0, drawn.value))
        if drawn < period { renderPeak.append(drawn.value) }
        if let target = lastTarget { submissions.add(refresh: callbackRefresh, target: target, submitted: now) }
        if !isModeSet {
            isModeSet = true
            modeSetFrame = callbackRefresh
            isWaitingForEvent = true
            return .setMode
        }
        // A planned start that ran late (its timer woke late) with a frame drawn within half a
        // period is one miss: a second frame in flight would not have helped it, and would cost
        // every later frame a period until ``FlipPipeline/fastFramesToReturn`` fast frames. Once
        // per window of recent frames only: a timer that wakes later than its allowance every time
        // would otherwise miss every frame, with nothing learning from it.
        let missedItsVblank = now > callbackVblank + period
        let lateStart =
            missedItsVblank && callbackPlanned && drawn.value <= period.value / 2
            && lastLateStart.map { callbackRefresh &- $0 > UInt64(RecentMedian.capacity) } ?? true
        if lateStart { lastLateStart = callbackRefresh }
        let action = pipeline.frameSubmitted(
            sinceVblank: now - callbackVblank, period: period,
            flipPending: flipping != nil,
            missedItsVblank: missedItsVblank && !lateStart)
        let frame = Frame(refresh: callbackRefresh, expected: callbackExpected)
        switch action {
        case .hold:
            let stale = held.map { PresentationFeedback(refreshIndex: $0.refresh, outcome: .discarded) }
            held = frame
            return .hold(discarding: stale)
        case .flip:
            flip(frame)
            return .flip
        case .flipAndStartNext:
            flip(frame)
            wantsCurrentVblank = true
            return .flipAndStartNext
        }
    }

    private mutating func flip(_ frame: Frame) {
        flipping = frame
        isWaitingForEvent = true
    }

    // MARK: Kernel events

    /// A page flip completed at the vblank `sequence32` (the event's 32-bit counter) at `time`.
    public mutating func flipCompleted(sequence32: UInt32, at time: MonotonicInstant) -> EventOutcome {
        guard !hasFailed else { return EventOutcome(feedback: nil, flipHeld: false, next: .none) }
        let sequence = KMSFrameScheduler.extend(sequence32, after: lastSequence)
        isWaitingForEvent = false
        let restartsSpace = noteKernelVblank(sequence: sequence, time: time)
        var feedback: PresentationFeedback?
        if let frame = flipping {
            lateness.append(min(KMSFrameScheduler.maximumLateness, wholePeriods(time - frame.expected)))
            feedback = PresentationFeedback(refreshIndex: frame.refresh, outcome: .presented(at: time, sequence: sequence))
            learnDeadline(refresh: frame.refresh, presented: time)
        }
        flipping = nil
        let runsCallback = pipeline.flipCompleted(hasHeldFrame: held != nil)
        var flipHeld = false
        if let next = held {
            held = nil
            flipping = next
            isWaitingForEvent = true
            flipHeld = true
        }
        guard runsCallback else { return EventOutcome(feedback: feedback, flipHeld: flipHeld, next: .none) }
        // A callback already ran for this vblank (read as the current vblank after a late frame):
        // not twice. A held frame's flip brings the next one; without one, tick on the next vblank.
        if !restartsSpace, let ran = callbackSequence, sequence <= ran {
            return EventOutcome(feedback: feedback, flipHeld: flipHeld, next: flipHeld ? .none : .queueVblank)
        }
        // A frame drawn now is flipped at the next vblank, or after the pending flip (one more).
        pending = (time, sequence, flipping == nil ? 1 : 2, flipping == nil)
        return EventOutcome(feedback: feedback, flipHeld: flipHeld, next: .callback)
    }

    /// A queued vblank event arrived (64-bit `sequence` at `time`).
    public mutating func vblankEvent(sequence: UInt64, at time: MonotonicInstant) -> EventOutcome {
        guard !hasFailed else { return EventOutcome(feedback: nil, flipHeld: false, next: .none) }
        isWaitingForEvent = false
        _ = noteKernelVblank(sequence: sequence, time: time)
        var feedback: PresentationFeedback?
        if let frame = modeSetFrame {
            // The frame set by the mode set is on screen from the first vblank after it.
            modeSetFrame = nil
            feedback = PresentationFeedback(refreshIndex: frame, outcome: .presented(at: time, sequence: sequence))
            learnDeadline(refresh: frame, presented: time)
        }
        pending = (time, sequence, flipping == nil ? 1 : 2, flipping == nil)
        return EventOutcome(feedback: feedback, flipHeld: false, next: .callback)
    }

    /// After ``SubmitAction/flipAndStartNext``: the kernel's current vblank, read after the flip
    /// was queued, and whether an event was already waiting to be read after that read
    /// (`eventPending`). Returns the refresh to dispatch now when it is the vblank right after the
    /// late frame's own and no event is waiting: then the flip was queued after that vblank and
    /// completes at a later one. Nil otherwise: the flip may have completed at this vblank (the
    /// frame was late by our clock but not the kernel's: its vblank handler ran late), or a later
    /// vblank may carry its completion, still unread; its event brings the next callback.
    public mutating func currentVblank(
        sequence: UInt64, at time: MonotonicInstant, eventPending: Bool,
        refreshIndex: UInt64, now: MonotonicInstant
    ) -> RefreshEvent? {
        guard wantsCurrentVblank else { return nil }
        wantsCurrentVblank = false
        guard !hasFailed, !eventPending, flipping != nil, held == nil, let last = callbackSequence,
            sequence > lastSequence, sequence == last &+ 1, time >= callbackVblank
        else { return nil }
        lastSequence = sequence
        pending = (time, sequence, 2, false)
        return beginCallback(refreshIndex: refreshIndex, now: now)
    }

    /// The start-next decision was dropped (nobody wants refreshes, or the display is going).
    public mutating func cancelCurrentVblank() { wantsCurrentVblank = false }

    // MARK: Callbacks

    /// The refresh for the vblank the last event asked a callback for; bookkeeping for the
    /// callback that runs now (`refreshIndex`: the dispatcher's next index).
    public mutating func beginCallback(refreshIndex: UInt64, now: MonotonicInstant) -> RefreshEvent {
        let (time, sequence, periods, awaited) = pending ?? (callbackVblank, lastSequence, 1, false)
        pending = nil
        // At most a period: an event read long after its vblank (a stall, a stale event after a
        // resume) says little of how late a timer wakes, and would stop planning until it decays.
        if awaited { wakeLateness.record(Nanoseconds(min((now - time).value, period.value))) }
        var followsStall = restarting
        restarting = false
        if let last = lastTimestamp, time < last { followsStall = true }
        if let ran = callbackSequence, sequence <= ran { followsStall = true }
        // A vblank time implausibly far from now (a broken driver) is not used: now stands in.
        // One before the last given (a driver that went back) is not used either: the last one
        // stands. Either, and a new vblank at the last one's time, is said to be an estimate.
        let (ahead, overflow) = time.nanoseconds.subtractingReportingOverflow(now.nanoseconds)
        let plausible =
            !checksVblankTimes
            || !overflow && ahead <= KMSFrameScheduler.futureTolerance.value && ahead >= -KMSFrameScheduler.pastTolerance.value
        let timestamp = monotonic(plausible ? time : now)
        // The same time as the last refresh's is exact only for that same vblank again.
        let repeatsLast = lastTimestamp == time && callbackSequence != sequence
        let provenance: TimestampProvenance =
            plausible && timestamp == time && !repeatsLast ? .hardwareVBlank : .frameCallbackEstimate
        var targetTimestamp = target(after: timestamp, periods: periods)
        if let previous = lastTarget, targetTimestamp < previous {
            // A target before the previous one is moved to the vblank nearest the previous target,
            // and held at the previous target when that vblank is a little before it: targets never
            // go back (a shorter pipeline or a smaller learned lateness moves them back by whole
            // periods, an off-grid timestamp by a fraction of one), and never run ahead (not
            // `previous + period`: consecutive callbacks may aim at one vblank, the later frame
            // replacing the held one).
            let p = period.value
            let (span, overflow) = previous.nanoseconds.subtractingReportingOverflow(timestamp.nanoseconds)
            let nearest = overflow ? 0 : (span + p / 2) / p
            if nearest >= 1 && nearest < 64 { targetTimestamp = timestamp + Nanoseconds(p * nearest) }
            targetTimestamp = max(targetTimestamp, previous)
        }
        lastTarget = targetTimestamp
        let event = RefreshEvent(
            timestamp: timestamp, sequence: sequence, refreshPeriod: period,
            targetTimestamp: targetTimestamp,
            provenance: provenance, followsStall: followsStall,
            deadline: deadlines.deadline(forTarget: targetTimestamp), renderEstimate: renderTime.estimate)
        began(timestamp: timestamp, sequence: sequence, periods: periods, refreshIndex: refreshIndex, now: now)
        return event
    }

    /// What the shell does once a callback returned without presenting.
    public enum CallbackEndAction: Equatable, Sendable {
        /// Nothing (something was submitted, or nothing is wanted): the flip or event on its way
        /// brings the next refresh.
        case none
        /// Queue a vblank event: the next refresh ticks on the next vblank without a flip.
        case queueVblank
        /// Before the mode set there is no vblank to wait for (the CRTC may be off): call
        /// ``start(now:refreshIndex:currentVblank:)`` again at this time, one period after the
        /// callback's refresh, unless a refresh has run since. A program that draws nothing in
        /// its first callbacks (assets still loading) keeps getting callbacks at the mode's rate.
        case startAgain(at: MonotonicInstant)
    }

    /// The callback returned: what to do when it submitted nothing.
    public mutating func callbackEnded(wantsRefreshes: Bool) -> CallbackEndAction {
        guard !hasFailed, wantsRefreshes, !isWaitingForEvent, !submittedInCallback else { return .none }
        guard isModeSet else { return .startAgain(at: callbackVblank + period) }
        isWaitingForEvent = true
        return .queueVblank
    }

    /// The shell queues the vblank event an outcome's ``Next/queueVblank`` asked for.
    public mutating func idleVblankQueued() {
        isWaitingForEvent = true
    }

    /// The display failed: nothing more is decided.
    public mutating func stop() {
        hasFailed = true
        wantsCurrentVblank = false
    }

    /// The session came back after a pause (another VT had the display; events from before may
    /// have been lost): forget the frames on their way and any event waited for; the shell has
    /// set the mode again with the frame last shown. The next `start(now:refreshIndex:currentVblank:)`
    /// queues a vblank event whose callback is a restart (`followsStall`: the resume's zero
    /// delta, the kernel's sequence taken up again without invented misses). Lateness learned
    /// before stays. Before the first mode set there is nothing to forget: the next frame sets it.
    public mutating func sessionResumed() {
        lastTarget = nil
        flipping = nil
        held = nil
        pending = nil
        modeSetFrame = nil
        isWaitingForEvent = false
        wantsCurrentVblank = false
        restarting = true
        pipeline = FlipPipeline()
    }

    // MARK: Pure helpers

    /// When a frame drawn after the vblank at `time` is expected: `periods` vblanks on (1 or 2 by
    /// the frames in flight), plus the lateness recent frames showed (once 16 frames are known).
    public func target(after time: MonotonicInstant, periods: Int) -> MonotonicInstant {
        let late = lateness.count >= KMSFrameScheduler.latenessFrames ? Int(lateness.median) : 0
        return time + period * (periods + late)
    }

    private mutating func began(
        timestamp: MonotonicInstant, sequence: UInt64?, periods: Int,
        refreshIndex: UInt64, now: MonotonicInstant
    ) {
        callbackVblank = timestamp
        callbackSequence = sequence
        callbackExpected = timestamp + period * periods
        callbackBegan = now
        callbackRefresh = refreshIndex
        submittedInCallback = false
        callbackPlanned = false
        lastTimestamp = timestamp
    }

    /// Records a kernel vblank; returns whether it starts a new sequence space (it went backwards).
    private mutating func noteKernelVblank(sequence: UInt64, time: MonotonicInstant) -> Bool {
        let backwards = sequence < lastSequence
        lastSequence = sequence
        return backwards
    }

    /// A time no earlier than the last one handed out.
    private func monotonic(_ time: MonotonicInstant) -> MonotonicInstant {
        guard let last = lastTimestamp else { return time }
        return max(time, last)
    }

    /// `span` in whole periods, rounded to the nearest, 0 when negative.
    private func wholePeriods(_ span: Nanoseconds) -> Int64 {
        let late = max(0, span.value), p = period.value
        return late / p + (late % p >= p - p / 2 ? 1 : 0)
    }
}

extension KMSFrameScheduler {
    /// The frame of `refresh` was shown at `presented`: what its submission teaches about the
    /// deadline.
    fileprivate mutating func learnDeadline(refresh: UInt64, presented: MonotonicInstant) {
        guard let submission = submissions.take(refresh: refresh) else { return }
        deadlines.record(submitted: submission.submitted, target: submission.target, presented: presented, period: period)
    }
}

extension KMSFrameScheduler {
    /// A callback planned to start at `planned` (``plannedStart(for:now:)``) starts now (`time`):
    /// its render time counts from here, and how late the timer woke is learned.
    public mutating func callbackStarted(at time: MonotonicInstant, plannedFor planned: MonotonicInstant) {
        callbackBegan = time
        callbackPlanned = true
        wakeLateness.record(time - planned)
    }
}
