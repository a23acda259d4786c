import DisplayLinkCore

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
        public var usesCommitTiming: Bool
        /// Whether held timed commits end commit timing for good (see <doc:WaylandScheduling>; false:
        /// timed commits are kept whatever the compositor does).
        public var fallsBackFromHeldCommits: Bool

        public init(usesPresentation: Bool = true, stallTimeout: Nanoseconds = Nanoseconds(500_000_000),
                    fallbackTickInterval: Nanoseconds? = nil, usesCommitTiming: Bool = false,
                    fallsBackFromHeldCommits: Bool = true) {
            self.usesPresentation = usesPresentation
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.usesCommitTiming = usesCommitTiming
            self.fallsBackFromHeldCommits = fallsBackFromHeldCommits
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

    /// What a watchdog firing leads to.
    public enum WatchdogAction: Sendable, Hashable {
        case nothing
        /// Callbacks stopped: ``isStalled`` just became true (no fallback ticks configured).
        case stalled
        /// Dispatch this fallback tick (stalled, with fallback ticks configured).
        case fallbackTick(Refresh)
    }

    /// What the held-commit rule asks of the shell (see <doc:WaylandScheduling>).
    public enum HeldCommitAction: Sendable, Hashable {
        case nothing
        /// Send `wl_display.sync` now and call ``compositorAnswered(at:)`` when its `done` comes.
        case probe
        /// Timed commits are held: commit timing just ended for good (``isCommitTimingFallenBack``);
        /// commit once, with no new requests, timed at `release` (a period ahead), so the
        /// compositor lets the held frame through.
        case fallBack(release: MonotonicInstant)
    }

    public static let feedbackCapacity = 16
    /// Periods below this (measured from bogus presentation times) are not believed.
    public static let minimumPeriod = RhythmEstimator.minimumPeriod
    /// Presentation times later than their feedback's arrival by more than this are not learned from.
    public static let futureTolerance = Nanoseconds(100_000_000)
    /// Presentation times earlier than their feedback's arrival by more than this are not learned from.
    public static let pastTolerance = Nanoseconds(3_600_000_000_000)
    /// Periods past its target (and of silence) after which a timed commit is probed for a hold.
    public static let heldCommitPeriods: Int64 = 4
    /// Periods between the first probe's answer and the second probe.
    public static let heldCommitProbeGap: Int64 = 2
    /// The largest stride used for a preferred rate below the refresh.
    public static let maximumStride = 8

    public let configuration: Configuration
    /// The rhythm learned from presentations (period, phase, depth, prediction).
    public private(set) var rhythm: RhythmEstimator
    /// The newest presentation known, its sequence and the advertised period.
    public var timeline: PresentationTimeline { rhythm.timeline }
    /// Whether a link wants refreshes.
    public private(set) var isActive = false
    /// Whether the connection failed (nothing more is requested or dispatched).
    public private(set) var isFailed = false
    /// Whether callbacks have stopped arriving (set by the watchdog, cleared by the next refresh).
    public private(set) var isStalled = false
    /// A `wl_surface.frame` request is outstanding.
    public private(set) var hasOutstandingFrameCallback = false
    /// A start refresh is scheduled (``demandChanged(_:at:)`` returned true, ``startDue(at:)`` not yet called).
    public private(set) var isStartPending = false
    /// `wl_surface.frame` requests asked for.
    public private(set) var frameRequestCount = 0
    /// Feedback events (presented or discarded) for known slots.
    public private(set) var feedbackCount = 0
    /// The index of the next refresh.
    public private(set) var nextRefreshIndex: UInt64 = 0
    /// The last refresh's timestamp and sequence.
    public private(set) var lastTimestamp: MonotonicInstant?
    public private(set) var lastSequence: UInt64 = 0
    /// Whether the compositor suspended the surface (xdg_toplevel `suspended`): nothing is
    /// requested or dispatched until it is resumed (before ``hasCommittedContent``, but for a
    /// start refresh: see <doc:WaylandScheduling>).
    public private(set) var isSuspended = false
    /// Whether a frame with content was committed (``contentCommitted()``): the surface is mapped,
    /// so a suspension holds back start refreshes too.
    public private(set) var hasCommittedContent = false
    /// Whether the suspension holds back a start refresh: suspended, and the surface has content.
    private var holdsStartForSuspension: Bool { isSuspended && hasCommittedContent }
    /// Whether the advertised period is no reference (a feedback reported `refresh` 0).
    public var isAdvertisedPeriodUnreliable: Bool { rhythm.isAdvertisedPeriodUnreliable }
    /// Presentation intervals accepted as periods (see <doc:WaylandScheduling>).
    public var measuredIntervalCount: Int { rhythm.measuredIntervalCount }
    /// Whether timed commits were found held and commit timing ended for good (see <doc:WaylandScheduling>).
    public private(set) var isCommitTimingFallenBack = false
    /// Why commit timing ended (nil while it has not), for the shell's one warning.
    public private(set) var commitTimingFallbackReason: String?
    /// Whether commits carry targets now: configured, and not fallen back.
    public var usesCommitTimingNow: Bool { configuration.usesCommitTiming && !isCommitTimingFallenBack }
    /// The refreshes per callback every active link's interval is a multiple of (set by the shell
    /// before each batch from `RefreshDispatcher.commonFrameInterval(refreshPeriod:)`; 1: every
    /// refresh). Only used with commit timing (see <doc:WaylandScheduling>).
    public var linkFrameInterval = 1
    /// Whether a callback for a strided commit came before its commit target, so striding saves
    /// no wake-up on this compositor and is not used any more.
    public private(set) var isStridingUseless = false
    /// The stride the next compositor-paced refresh gets (see <doc:WaylandScheduling>): the largest
    /// divisor of the link interval up to ``maximumStride`` (so every link still fires on its
    /// refresh: 5 for an interval of 10, not 8) when striding saves wake-ups, else 1.
    public var stride: Int {
        guard usesCommitTimingNow, !isStridingUseless, isPeriodMeasured, timeline.latest != nil,
              let depth = learnedDepth else { return 1 }
        let stride = WaylandRefreshScheduler.largestDivisor(of: linkFrameInterval, atMost: WaylandRefreshScheduler.maximumStride)
        return stride > depth ? stride : 1
    }

    /// The largest divisor of `n` (≥ 1) that is at most `limit` (≥ 1).
    public static func largestDivisor(of n: Int, atMost limit: Int) -> Int {
        guard n > 1 else { return 1 }
        var d = min(n, max(1, limit))
        while n % d != 0 { d -= 1 }
        return d
    }

    /// Periods a strided refresh's target lies beyond the depth's (0 without a stride).
    private func extraPeriods(forStride stride: Int) -> Int {
        guard stride > 1, let depth = learnedDepth else { return 0 }
        return max(0, stride - depth)
    }
    /// The presentation depth learned from presented frames (nil: none presented yet).
    public var learnedDepth: Int? { rhythm.learnedDepth }

    private var lastCallbackArrival: MonotonicInstant?
    private var resumingFromSuspension = false

    private var returningFromStall = false
    private var lastActivity = MonotonicInstant.zero
    private var lastDeliveredPresentation: MonotonicInstant?
    /// The compositor `seq` of the last refresh, when it was stamped with a presentation that had one.
    private var lastCompositorSequence: UInt64?
    private var callbackArrival: MonotonicInstant?
    /// The refresh that counting by time starts from: the last one on the rhythm.
    private var countingAnchor: (time: MonotonicInstant, sequence: UInt64)?

    private struct Slot: Sendable {
        var inUse = false
        var refreshIndex: UInt64 = 0
        var knownAtDraw: MonotonicInstant?
        var commitTarget: MonotonicInstant?
        var stride = 1
        var extraPeriods = 0
    }
    private var slots: ContiguousArray<Slot>
    /// The commit target and stride of the commit that asked for the outstanding frame callback.
    private var outstandingCommitTarget: MonotonicInstant?
    /// The held-commit rule's progress (see <doc:WaylandScheduling>) for the outstanding timed commit.
    private enum HeldProbe: Sendable, Hashable {
        case none
        /// A probe went out; `serial` is its number among all probes sent.
        case sent(serial: UInt64, second: Bool)
        /// The first probe was answered at `at`: the second is due ``heldCommitProbeGap`` periods later.
        case answered(at: MonotonicInstant)
    }
    private var heldProbe = HeldProbe.none
    /// The target of the last release commit while no commit made after it is known applied
    /// (a callback asked for after it came): a release may not wake the compositor, or be held
    /// itself, and the rule then watches it as it watched the timed commit.
    private var releaseTarget: MonotonicInstant?
    /// Whether the outstanding frame callback was asked for after the last release.
    private var outstandingAfterRelease = false
    /// Release commits asked for.
    public private(set) var releaseCount = 0
    /// The refresh whose commit asked for the outstanding frame callback, and whether its
    /// feedback came (presented or discarded): the commit was applied, so it is not held (a
    /// window hidden on a compositor without `suspended`, weston 16's, discards it and sends no
    /// callback).
    private var outstandingRequestIndex: UInt64?
    private var outstandingCommitApplied = false
    /// Whether the surface left every output after being on one (``surfaceLeftAllOutputs(_:)``):
    /// hidden, so a callback that does not come says nothing about held commits.
    public private(set) var isOffAllOutputs = false

    /// The surface left its last output (true; minimised on weston 16 or mutter 50) or entered one
    /// again (false). While off every output the held-commit rule does not apply: a compositor
    /// repaints no output for the surface, so it sends no callback for a commit it applied.
    public mutating func surfaceLeftAllOutputs(_ off: Bool) {
        isOffAllOutputs = off
        if off { heldProbe = .none }
    }
    /// Probes sent and answered (answers come in the order the probes went out).
    public private(set) var probesSent: UInt64 = 0
    public private(set) var probesAnswered: UInt64 = 0
    private var outstandingStride = 1

    public init(configuration: Configuration = Configuration(), advertisedPeriod: Nanoseconds = .zero) {
        self.configuration = configuration
        rhythm = RhythmEstimator(advertisedPeriod: advertisedPeriod)
        slots = ContiguousArray(repeating: Slot(), count: WaylandRefreshScheduler.feedbackCapacity)
    }

    // MARK: Derived state

    /// The period reported with refreshes and used for targets: measured presentation intervals,
    /// else the last frame-callback interval, else the advertised period, else 60 Hz (see
    /// <doc:WaylandScheduling>).
    public var period: Nanoseconds { rhythm.period }

    /// Whether ``period`` rests on at least three measured presentation intervals.
    public var isPeriodMeasured: Bool { rhythm.isPeriodMeasured }

    /// Whether the shell should run its watchdog timer.
    public var wantsWatchdog: Bool { isActive && !isFailed && !isSuspended }

    /// How often the watchdog timer fires (the fallback interval, or the stall timeout; ≥ 1 ms).
    public var watchdogInterval: Nanoseconds {
        let interval = configuration.fallbackTickInterval ?? configuration.stallTimeout
        return max(interval, Nanoseconds(1_000_000))
    }

    /// Feedback requests not answered yet.
    public var outstandingFeedbackCount: Int {
        var n = 0
        for slot in slots where slot.inUse { n += 1 }
        return n
    }

    // MARK: Demand

    /// A link started or stopped wanting refreshes. Returns true when the shell should schedule a
    /// start refresh (from the main queue, then call ``startDue(at:)``).
    public mutating func demandChanged(_ wanted: Bool, at now: MonotonicInstant) -> Bool {
        isActive = wanted
        guard wanted, !isFailed else { return false }
        lastActivity = now
        lastCallbackArrival = nil
        guard !holdsStartForSuspension, !waitsForCallback, !isStartPending else { return false }
        isStartPending = true
        return true
    }

    /// The scheduled start refresh, if it is still due (the first frame maps the surface, and the
    /// compositor paces from there).
    public mutating func startDue(at now: MonotonicInstant) -> Refresh? {
        isStartPending = false
        guard isActive, !isFailed, !holdsStartForSuspension, !waitsForCallback else { return nil }
        return refresh(at: now, firstAfterStart: true)
    }

    /// The surface was committed with content (a frame drawn and swapped): it is mapped from now
    /// on, and a suspension holds back start refreshes too.
    public mutating func contentCommitted() {
        hasCommittedContent = true
    }

    /// Whether a frame callback will bring the next refresh: one is outstanding, and the surface
    /// has content or the compositor has answered before (before either, a request on the
    /// unmapped surface goes unanswered, and a start or pre-content tick brings the next).
    private var waitsForCallback: Bool { hasOutstandingFrameCallback && (hasCommittedContent || hasBeenCalledBack) }
    /// Whether any frame callback came.
    private var hasBeenCalledBack = false

    /// A refresh ended with nothing drawn. Before the surface has content its frame request is
    /// answered by no compositor (an unmapped surface is never repainted), so nothing would come
    /// again: returns when the shell should call ``preContentTickDue(at:index:)``, one period
    /// after that refresh (nil once there is content, or once the compositor answered a frame
    /// request: it paces). A program that draws
    /// nothing in its first callbacks (assets still loading) keeps getting callbacks at the
    /// output's rate, estimates, until it draws; the request made with the first refresh then
    /// comes back with the first frame shown.
    public func refreshEndedWithoutContent() -> MonotonicInstant? {
        guard !hasCommittedContent, !hasBeenCalledBack, isActive, !isFailed, let last = lastTimestamp else { return nil }
        return saturatingAdd(last, period)
    }

    /// The refresh ``refreshEndedWithoutContent()`` asked for, if still due at `now`: still no
    /// content, a link active, and no refresh since (`index`: ``nextRefreshIndex`` when it was
    /// asked for).
    public mutating func preContentTickDue(at now: MonotonicInstant, index: UInt64) -> Refresh? {
        guard !hasCommittedContent, !hasBeenCalledBack, isActive, !isFailed, nextRefreshIndex == index else { return nil }
        lastActivity = now
        let timestamp = notBeforeLast(now)
        let steps = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
        return makeRefresh(timestamp: timestamp, steps: steps, target: saturatingAdd(timestamp, period),
                           provenance: .frameCallbackEstimate, followsStall: false, stride: 1)
    }

    // MARK: Suspension

    /// The compositor set (`true`) or cleared the surface's `suspended` state at `now`. Returns
    /// true when the shell should schedule a start refresh (resumed, a link active, no callback
    /// outstanding), as for ``demandChanged(_:at:)``.
    public mutating func suspendedChanged(_ suspended: Bool, at now: MonotonicInstant) -> Bool {
        guard suspended != isSuspended else { return false }
        isSuspended = suspended
        lastCallbackArrival = nil
        if suspended {
            callbackArrival = nil
            return false
        }
        resumingFromSuspension = true
        lastActivity = now
        guard isActive, !isFailed, !hasOutstandingFrameCallback, !isStartPending else { return false }
        isStartPending = true
        return true
    }

    // MARK: Outputs

    /// The surface moved to another output, or its output's mode changed: everything learned
    /// about the rhythm is forgotten, and period and phase are learned again from the next
    /// presentations (`advertisedPeriod` 0: unknown).
    public mutating func outputChanged(advertisedPeriod: Nanoseconds) {
        rhythm = RhythmEstimator(advertisedPeriod: advertisedPeriod)
        lastCallbackArrival = nil
        lastDeliveredPresentation = nil
        lastCompositorSequence = nil
        for index in slots.indices { slots[index].knownAtDraw = nil }
    }

    // MARK: Frame callbacks

    /// A frame callback arrived at `arrival`. The refresh waits for ``eventsDispatched()``, so
    /// presentation feedback read in the same batch counts.
    public mutating func frameCallbackDone(at arrival: MonotonicInstant) {
        hasOutstandingFrameCallback = false
        hasBeenCalledBack = true
        if outstandingStride > 1, let target = outstandingCommitTarget, arrival < target {
            // The compositor called back before the timed content was due: striding saves nothing.
            isStridingUseless = true
        }
        outstandingCommitTarget = nil
        outstandingStride = 1
        heldProbe = .none
        if outstandingAfterRelease { releaseTarget = nil }
        outstandingAfterRelease = false
        guard !isSuspended else { return }
        callbackArrival = arrival
        if let previous = lastCallbackArrival {
            let (elapsed, overflow) = arrival.nanoseconds.subtractingReportingOverflow(previous.nanoseconds)
            if !overflow { rhythm.callbackIntervalObserved(elapsed) }
        }
        lastCallbackArrival = arrival
    }

    /// A batch of events was dispatched: the refresh for a callback in it, if a link wants one.
    public mutating func eventsDispatched() -> Refresh? {
        guard let arrival = callbackArrival else { return nil }
        callbackArrival = nil
        guard isActive, !isFailed, !isSuspended else { return nil }
        return refresh(at: arrival, firstAfterStart: false)
    }

    /// The refresh for a callback that arrived at `arrival` (or for the start, `firstAfterStart`).
    public mutating func refresh(at arrival: MonotonicInstant, firstAfterStart: Bool) -> Refresh {
        lastActivity = arrival
        let followsStall = (returningFromStall || isStalled) && !firstAfterStart || resumingFromSuspension
        isStalled = false
        returningFromStall = false
        resumingFromSuspension = false
        let pending = outstandingFeedbackCount

        var timestamp: MonotonicInstant
        var provenance = TimestampProvenance.frameCallbackEstimate
        var compositorSequence: UInt64?
        var isHalfStep = false
        if configuration.usesPresentation {
            let latest = timeline.latest
            let isNew = latest != nil && latest != lastDeliveredPresentation
            lastDeliveredPresentation = latest
            // On a start, the newest presentation may be from long ago (before a pause): the
            // rhythm's latest vblank then says better where the display is.
            let onRhythm = firstAfterStart ? rhythm.extrapolatedPresentation(at: arrival) : nil
            if isNew, let latest, isAfterLastTimestamp(latest), onRhythm.map({ $0 <= latest }) ?? true {
                timestamp = latest
                provenance = .presentationFeedback
                compositorSequence = timeline.latestSequence
            } else if !isNew || firstAfterStart, let estimate = rhythm.extrapolatedPresentation(at: arrival),
                      isAfterLastTimestamp(estimate) {
                // No news since the last refresh (feedback late or lost): the rhythm's latest vblank.
                timestamp = estimate
            } else if latest != nil, let lastTimestamp {
                // A presentation came in, but not after the timestamp already given (an earlier
                // extrapolation overshot it), or the rhythm has no newer vblank: half a period on,
                // so the next reported presentation is later again.
                timestamp = notBeforeLast(min(arrival, saturatingAdd(lastTimestamp, Nanoseconds(period.value / 2))))
                isHalfStep = true
            } else {
                timestamp = notBeforeLast(arrival)
            }
        } else {
            if !firstAfterStart {
                rhythm.recordPresentation(at: arrival, sequence: nil, advertisedRefresh: .zero)
                rhythm.learnInterval(to: arrival, sequence: nil, refreshIndex: nil)
            }
            timestamp = notBeforeLast(arrival)
        }

        var steps = stepsByTime(to: timestamp, requireMeasuredPeriod: true)
        let stride = firstAfterStart ? 1 : self.stride
        let target = saturatingAdd(rhythm.predictTarget(now: arrival, timestamp: timestamp, pendingFrames: pending),
                                   Nanoseconds(period.value &* Int64(extraPeriods(forStride: stride))))
        if let given = compositorSequence, let previous = lastCompositorSequence {
            // The compositor's count wins when it agrees with the time to within one refresh.
            let step = given &- previous
            let byTime = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
            if step >= 1 && step <= byTime &+ 1 && step &+ 1 >= byTime { steps = step }
        }
        lastCompositorSequence = compositorSequence
        // A half step is off the rhythm: refreshes after it are counted from the one before it.
        let keepAnchor = isHalfStep
        defer { if !keepAnchor { countingAnchor = (lastTimestamp ?? timestamp, lastSequence) } }
        return makeRefresh(timestamp: timestamp, steps: steps, target: target,
                           provenance: provenance, followsStall: followsStall, stride: stride)
    }

    // MARK: Presentation feedback

    /// The feedback filed under `slot` reported a presentation at `time` (already on
    /// `CLOCK_MONOTONIC`), received at `receivedAt`, with the protocol's `flags`. `sequence` 0
    /// means unknown; `advertisedRefresh` 0 means unknown or variable (the period then comes from
    /// measurement only). Returns what to deliver to the links (nil for an unknown slot).
    public mutating func presented(slot: Int, at time: MonotonicInstant, receivedAt: MonotonicInstant,
                                   sequence: UInt64, advertisedRefresh: Nanoseconds,
                                   flags: PresentationFlags = []) -> PresentationFeedback? {
        guard let entry = takeSlot(slot) else { return nil }
        feedbackCount += 1
        if entry.refreshIndex == outstandingRequestIndex { outstandingCommitApplied = true }
        let vblank: UInt64? = sequence == 0 ? nil : sequence
        rhythm.advertisedRefreshReported(advertisedRefresh)
        if isPlausible(time, receivedAt: receivedAt) {
            rhythm.recordPresentation(at: time, sequence: vblank, advertisedRefresh: advertisedRefresh)
            // A presentation off the rhythm (a stall) says nothing about the depth either.
            if rhythm.learnInterval(to: time, sequence: vblank, refreshIndex: entry.refreshIndex, stride: entry.stride) {
                rhythm.learnDepth(knownAtDraw: entry.knownAtDraw, presentedAt: time, extraPeriods: entry.extraPeriods)
            }
        }
        return PresentationFeedback(refreshIndex: entry.refreshIndex, outcome: .presented(at: time, sequence: vblank),
                                    flags: flags, commitTarget: entry.commitTarget)
    }

    /// The feedback filed under `slot` reported its frame discarded.
    public mutating func discarded(slot: Int) -> PresentationFeedback? {
        guard let entry = takeSlot(slot) else { return nil }
        feedbackCount += 1
        if entry.refreshIndex == outstandingRequestIndex { outstandingCommitApplied = true }
        return PresentationFeedback(refreshIndex: entry.refreshIndex, outcome: .discarded, commitTarget: entry.commitTarget)
    }

    // MARK: Learning the rhythm

    /// The refresh index the feedback in `slot` reports on (nil when the slot is free).
    public func refreshIndex(ofSlot slot: Int) -> UInt64? {
        guard slots.indices.contains(slot), slots[slot].inUse else { return nil }
        return slots[slot].refreshIndex
    }

    // MARK: Stalls and failure

    /// The watchdog timer fired at `now`.
    public mutating func watchdog(now: MonotonicInstant) -> WatchdogAction {
        guard isActive, !isFailed, !isSuspended else { return .nothing }
        let (idle, overflow) = now.nanoseconds.subtractingReportingOverflow(lastActivity.nanoseconds)
        guard !overflow, idle >= configuration.stallTimeout.value else { return .nothing }
        let noticed = !isStalled
        if noticed {
            isStalled = true
            returningFromStall = true
        }
        guard configuration.fallbackTickInterval != nil else { return noticed ? .stalled : .nothing }
        let timestamp = notBeforeLast(now)
        let steps = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
        lastCompositorSequence = nil
        defer { countingAnchor = (lastTimestamp ?? timestamp, lastSequence) }
        // Keeps (or makes) a frame request outstanding so the compositor can resume pacing us.
        return .fallbackTick(makeRefresh(timestamp: timestamp, steps: steps,
                                         target: saturatingAdd(timestamp, period), provenance: .timerFallback,
                                         followsStall: false, stride: 1))
    }

    // MARK: Held timed commits

    /// Whether the held-commit rule applies: timed commits in use, falling back allowed, and the
    /// outstanding frame callback was asked for by a timed commit.
    /// The target of the timed commit the outstanding frame callback waits behind: the commit
    /// that asked for it, or after a fallback the last release while no callback asked for after
    /// it has come (the held frame before it may still be held too, if the release did not wake
    /// the compositor; nil: the rule does not apply now).
    private var heldTarget: MonotonicInstant? {
        guard configuration.usesCommitTiming, configuration.fallsBackFromHeldCommits, hasOutstandingFrameCallback,
              isActive, !isFailed, !isSuspended, !isOffAllOutputs else { return nil }
        if usesCommitTimingNow { return outstandingCommitApplied ? nil : outstandingCommitTarget }
        return releaseTarget
    }

    /// When the shell should next call ``heldCommitCheck(at:)`` (nil: no check is wanted now, or a
    /// probe is out): `heldCommitPeriods` periods after the later of the outstanding timed
    /// commit's target and the last activity, or ``heldCommitProbeGap`` periods after the first
    /// probe's answer. A shell with one timer arms it for this time when it is idle, and at each
    /// firing asks again, so the timer fires at most every `heldCommitPeriods` periods while
    /// frames flow.
    public var heldCommitCheckTime: MonotonicInstant? {
        guard let target = heldTarget else { return nil }
        let p = period.value
        switch heldProbe {
        case .sent: return nil
        case .answered(let at):
            return saturatingAdd(at, Nanoseconds(p.multipliedReportingOverflow(by: WaylandRefreshScheduler.heldCommitProbeGap).partialValue))
        case .none:
            let limit = Nanoseconds(p.multipliedReportingOverflow(by: WaylandRefreshScheduler.heldCommitPeriods).partialValue)
            return saturatingAdd(max(target, lastActivity), limit)
        }
    }

    /// The shell's held-commit timer fired at `now` (see <doc:WaylandScheduling>): ``HeldCommitAction/probe``
    /// when a probe is due, else nothing (re-arm for ``heldCommitCheckTime``).
    public mutating func heldCommitCheck(at now: MonotonicInstant) -> HeldCommitAction {
        guard let due = heldCommitCheckTime, now >= due else { return .nothing }
        let second: Bool
        if case .answered = heldProbe { second = true } else { second = false }
        probesSent &+= 1
        heldProbe = .sent(serial: probesSent, second: second)
        return .probe
    }

    /// A probe's answer (`wl_display.sync` done) arrived at `now`. After the second answer with
    /// the same timed commit still unanswered: ``HeldCommitAction/fallBack(release:)``.
    public mutating func compositorAnswered(at now: MonotonicInstant) -> HeldCommitAction {
        probesAnswered &+= 1
        guard case .sent(let serial, let second) = heldProbe, serial == probesAnswered else { return .nothing }
        guard let held = heldTarget else {
            heldProbe = .none
            return .nothing
        }
        guard second else {
            heldProbe = .answered(at: now)
            return .nothing
        }
        heldProbe = .none
        if !isCommitTimingFallenBack {
            isCommitTimingFallenBack = true
            let late = (now.nanoseconds &- held.nanoseconds) / 1_000_000
            commitTimingFallbackReason = "a timed commit was not presented \(late) ms after its target time while the compositor answered two requests sent after it (the compositor holds timed commits)"
        }
        outstandingCommitTarget = nil
        outstandingStride = 1
        // Callbacks stopped: the refresh after the release follows a stall.
        isStalled = true
        returningFromStall = true
        let release = saturatingAdd(now, period)
        releaseTarget = release
        outstandingAfterRelease = false
        releaseCount += 1
        return .fallBack(release: release)
    }

    /// The connection failed: nothing is outstanding any more, and nothing more happens.
    public mutating func connectionFailed() {
        isFailed = true
        heldProbe = .none
        hasOutstandingFrameCallback = false
        callbackArrival = nil
        for index in slots.indices { slots[index] = Slot() }
    }

    // MARK: Helpers

    private mutating func makeRefresh(timestamp: MonotonicInstant, steps: UInt64, target: MonotonicInstant,
                                      provenance: TimestampProvenance, followsStall: Bool, stride: Int) -> Refresh {
        lastTimestamp = timestamp
        lastSequence &+= max(1, steps)
        let index = nextRefreshIndex
        nextRefreshIndex &+= 1
        var requestsCallback = false
        var feedbackSlot: Int?
        // Timer fallback ticks (stalled: hidden, or the compositor not repainting) carry no target,
        // as they set no FIFO barrier: a compositor that applies no content update of a hidden
        // surface (weston 16) would hold each timed one with its buffer until the client has none
        // left (Mesa 22.3's wl_shm swap then crashes), where an untimed one replaces the last.
        let commitTarget = provenance == .timerFallback ? nil : commitTarget(for: target)
        if !hasOutstandingFrameCallback {
            requestsCallback = true
            hasOutstandingFrameCallback = true
            frameRequestCount += 1
            outstandingCommitTarget = commitTarget
            outstandingAfterRelease = releaseTarget != nil
            outstandingRequestIndex = index
            outstandingCommitApplied = false
            outstandingStride = stride
            if configuration.usesPresentation {
                // The feedback reports on the frame drawn in this refresh. When every slot is taken
                // (the compositor loses feedback), the oldest request is given up: the shell destroys
                // its proxy and reuses the slot.
                let slot = slots.firstIndex(where: { !$0.inUse }) ?? oldestSlot()
                slots[slot] = Slot(inUse: true, refreshIndex: index, knownAtDraw: timeline.latest,
                                   commitTarget: commitTarget, stride: stride,
                                   extraPeriods: extraPeriods(forStride: stride))
                feedbackSlot = slot
            }
        }
        let event = RefreshEvent(timestamp: timestamp, sequence: lastSequence, refreshPeriod: period,
                                 targetTimestamp: target, provenance: provenance, followsStall: followsStall)
        // FIFO: compositor-paced refreshes once mapped; never a timer tick (see <doc:WaylandScheduling>).
        let fifo = timeline.latest != nil && provenance != .timerFallback
        return Refresh(event: event, index: index, requestsFrameCallback: requestsCallback, feedbackSlot: feedbackSlot,
                       commitTarget: commitTarget, setsFifoBarrier: fifo, stride: stride)
    }

    /// Half a period before `target` (see <doc:WaylandScheduling>), with commit timing once a
    /// presentation is known; else nil. Before the first presentation the surface may not be
    /// mapped: mutter 48 never applies a timed commit of a surface that is on no output yet.
    private func commitTarget(for target: MonotonicInstant) -> MonotonicInstant? {
        guard usesCommitTimingNow, timeline.latest != nil else { return nil }
        return saturatingAdd(target, Nanoseconds(-(period.value / 2)))
    }

    private func oldestSlot() -> Int {
        var oldest = 0
        for index in slots.indices where slots[index].refreshIndex < slots[oldest].refreshIndex { oldest = index }
        return oldest
    }

    private mutating func takeSlot(_ slot: Int) -> Slot? {
        guard slots.indices.contains(slot), slots[slot].inUse else { return nil }
        let entry = slots[slot]
        slots[slot] = Slot()
        return entry
    }

    private func isAfterLastTimestamp(_ time: MonotonicInstant) -> Bool {
        guard let lastTimestamp else { return true }
        return time > lastTimestamp
    }

    /// `time`, or 1 ns after the last timestamp if that is later (saturating).
    private func notBeforeLast(_ time: MonotonicInstant) -> MonotonicInstant {
        guard let lastTimestamp, time <= lastTimestamp else { return time }
        return saturatingAdd(lastTimestamp, Nanoseconds(1))
    }

    private func isPlausible(_ time: MonotonicInstant, receivedAt: MonotonicInstant) -> Bool {
        let (ahead, overflow) = time.nanoseconds.subtractingReportingOverflow(receivedAt.nanoseconds)
        return !overflow && ahead <= WaylandRefreshScheduler.futureTolerance.value
            && ahead >= -WaylandRefreshScheduler.pastTolerance.value
    }

    /// Refreshes between the last refresh and `timestamp`: whole periods (rounded) since the
    /// counting anchor, minus those already counted since it; at least 1 (always 1 while the period
    /// is not measured, if `requireMeasuredPeriod`).
    private func stepsByTime(to timestamp: MonotonicInstant, requireMeasuredPeriod: Bool) -> UInt64 {
        guard let anchor = countingAnchor, !requireMeasuredPeriod || isPeriodMeasured else { return 1 }
        let p = period.value
        let (elapsed, overflow) = timestamp.nanoseconds.subtractingReportingOverflow(anchor.time.nanoseconds)
        guard !overflow, elapsed > p else { return 1 }
        let periods = UInt64(elapsed / p + (elapsed % p >= p - p / 2 ? 1 : 0))
        let counted = lastSequence &- anchor.sequence
        return periods > counted ? max(1, periods &- counted) : 1
    }

    private func saturatingAdd(_ time: MonotonicInstant, _ span: Nanoseconds) -> MonotonicInstant {
        let (sum, overflow) = time.nanoseconds.addingReportingOverflow(span.value)
        guard overflow else { return MonotonicInstant(nanoseconds: sum) }
        return MonotonicInstant(nanoseconds: span.value > 0 ? .max : .min)
    }
}
