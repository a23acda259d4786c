import Dispatch
import DisplayLinkCore
import Logging
internal import FrameSchedulers

/// A frame source fed with the presentations the program learns itself: page flips it makes on its
/// own DRM/KMS file descriptor (atomic or legacy), `VK_KHR_present_wait` or
/// `VK_EXT_present_timing`, a remote or recorded display.
///
/// The program reports each presentation (``presented(at:sequence:)``: the time on
/// `CLOCK_MONOTONIC`, and the display's refresh sequence where it knows it) and, right before the
/// call that presents, each submission (``willSubmit(at:)``). In return its links get what they
/// get on the library's own KMS output: `timestamp`, `targetTimestamp`, `duration` (the exact
/// period given), `deadline`, `renderEstimate`, the latency policy, pause and resume with a first
/// delta of 0. The decisions are the library's KMS backend's own (`KMSFrameScheduler`), so a
/// program that flips a CRTC itself gets the targets and deadlines that backend gives for the
/// same flips.
///
/// ```swift
/// let source = try FedFrameSource(refreshPeriod: mode.period)      // from the mode timings
/// let link = DisplayLink(source: source, target: renderer) { renderer, link in
///     renderer.draw(at: link.targetTimestamp)
///     if source.willSubmit() == .presentNow { renderer.flip() }  // else at the next presented(at:)
/// }
/// // in the DRM page-flip handler:
/// source.presented(at: MonotonicInstant(nanoseconds: flipTime), sequence: UInt64(sequence))
/// ```
///
/// - A frame is submitted from the callback that drew it (or before the next vblank after it).
/// - Frames in flight: one while drawing fits the period; after a frame missed its vblank the
///   next is drawn at once, while its flip is pending (the backend's two frames in flight):
///   ``willSubmit(at:)`` then returns ``SubmitAction/presentAfterPending``, and the program
///   keeps that frame and presents it when the pending one completes: in its flip handler, before
///   it reports that completion (the report runs the next callback at once, as the backend queues
///   the held flip before its next callback).
/// - A callback that submits nothing is followed by one at the next vblank, predicted from the
///   presentations reported and the exact period (`TimestampProvenance.frameCallbackEstimate`):
///   the program reports no presentation for a frame it did not present.
/// - A submitted frame whose presentation is not reported within ``lostPresentationTimeout`` (a
///   program that forgot to report it, or a first frame set with a legacy mode set, which brings
///   no event: report the first vblank after it, or let the timeout pass once) is taken as lost:
///   the rhythm restarts on predicted vblanks, and one warning says so.
/// - Reports are untrusted: a time or sequence that goes backwards starts a new rhythm, never a
///   trap, and timestamps never decrease.
///
/// Main actor only; the callbacks run inside ``presented(at:sequence:)`` (the flip's completion
/// brings the next frame at once) or from the main queue (a start, a tick, a planned
/// low-latency start).
@MainActor
public final class FedFrameSource: FrameSource {
    static let log = Logger(label: "displaylink.fed")
    /// What to do with the frame just submitted.
    public enum SubmitAction: Sendable, Hashable {
        /// Present it now (flip, commit, present).
        case presentNow
        /// A presentation is pending: keep this frame and present it when that one completes, in
        /// the completion's handler before reporting it with ``FedFrameSource/presented(at:sequence:)``.
        case presentAfterPending
    }

    public let dispatcher = RefreshDispatcher()
    /// The refresh periods a fed source takes: 100 µs (10 kHz) to 10 s.
    public static let periods = Nanoseconds(100_000)...Nanoseconds(10_000_000_000)
    /// The exact refresh period the source was made with.
    public let refreshPeriod: Nanoseconds
    public let latency: LatencyPolicy
    /// Callbacks that followed a predicted vblank rather than a reported presentation.
    public private(set) var predictedTickCount = 0
    /// Presentations reported.
    public private(set) var presentationCount = 0

    var scheduler: KMSFrameScheduler
    /// What the next report answers: the frame set as the first, a flip, or nothing in flight.
    private enum Awaited { case nothing, firstFrame, flip }
    private var awaited = Awaited.nothing
    /// The newest vblank reported (or predicted), for predicting the next ones.
    private var lastVblank: (time: MonotonicInstant, sequence: UInt64)?
    private var tickTimer: MainQueueTimer?
    private var tickDue = false
    private var delayTimer: MainQueueTimer?
    private var delayedEvent: (event: RefreshEvent, planned: MonotonicInstant)?
    private var startPending = false
    private var startNextPending = false
    /// Reports not taken yet, and whether they are being taken (see ``presented(at:sequence:)``).
    private var pendingReports: [(time: MonotonicInstant, sequence: UInt64?)] = []
    private var isTakingReports = false
    private var isInCallback = false
    /// A presentation awaited this long (a submitted frame whose completion the program never
    /// reported) is taken as lost: the rhythm restarts on predicted vblanks, with one warning.
    public var lostPresentationTimeout = Nanoseconds(500_000_000)
    /// Presentations taken as lost (``lostPresentationTimeout``).
    public private(set) var lostPresentationCount = 0
    private var lostTimer: MainQueueTimer?
    /// The clock decisions read (`CLOCK_MONOTONIC`; tests put the source on virtual time: the
    /// timers still wait real time).
    package var clock: @MainActor () -> MonotonicInstant = { MonotonicInstant.now() }

    /// A source with the display's exact refresh period (from its mode timings: the pixel clock
    /// over the total pixels of a frame). Throws ``FedSourceError/invalidPeriod(_:)`` for a period
    /// outside ``periods``.
    public init(refreshPeriod: Nanoseconds, latency: LatencyPolicy = .throughput) throws(FedSourceError) {
        guard refreshPeriod >= FedFrameSource.periods.lowerBound, refreshPeriod <= FedFrameSource.periods.upperBound else {
            throw .invalidPeriod(refreshPeriod)
        }
        self.refreshPeriod = refreshPeriod
        self.latency = latency
        // The program's times are its own to give (a recording replayed may lie far from now).
        scheduler = KMSFrameScheduler(period: refreshPeriod, checksVblankTimes: false)
        scheduler.latency = latency
        pendingReports.reserveCapacity(4)
        tickTimer = MainQueueTimer { [weak self] in self?.tickFired() }
        lostTimer = MainQueueTimer { [weak self] in self?.presentationLost() }
        if latency == .lowLatency {
            delayTimer = MainQueueTimer { [weak self] in self?.runDelayedCallback() }
        }
        dispatcher.onDemandChange = { [weak self] wanted in self?.demandChanged(wanted) }
    }

    isolated deinit {
        tickTimer?.cancel()
        delayTimer?.cancel()
        lostTimer?.cancel()
    }

    // MARK: What the program reports

    /// The frame of the current callback is about to be presented (`time`: when the program read
    /// the clock for it; nil: now). Returns whether to present it now or after the pending
    /// presentation completes.
    public func willSubmit(at time: MonotonicInstant? = nil) -> SubmitAction {
        let time = time ?? clock()
        // A submission after the callback returned replaces the tick that followed it.
        if tickDue, awaited == .nothing {
            tickDue = false
            tickTimer?.cancel()
        }
        switch scheduler.frameSubmitted(now: time) {
        case .setMode:
            // A first frame set with a legacy mode set brings no event: if its presentation is
            // not reported either, the rhythm restarts on predicted vblanks after the timeout.
            awaited = .firstFrame
            lostTimer?.schedule(at: time + lostPresentationTimeout)
            return .presentNow
        case .flip:
            awaitFlip(submittedAt: time)
            return .presentNow
        case .flipAndStartNext:
            awaitFlip(submittedAt: time)
            startNextSoon()
            return .presentNow
        case .hold:
            return .presentAfterPending
        }
    }

    /// A frame was presented at `time` (`CLOCK_MONOTONIC`: a DRM page-flip event's time, a
    /// Vulkan present's) at the display's refresh `sequence` (nil when unknown: counted from the
    /// times). The next callback runs now (or at its planned start under low latency).
    public func presented(at time: MonotonicInstant, sequence: UInt64? = nil) {
        presentationCount += 1
        // A report made from a callback (a present-wait loop that reports as it draws) is handled
        // once that callback returned: reports are taken in order, one after another, and the
        // stack never grows report by report.
        pendingReports.append((time, sequence))
        guard !isTakingReports, !isInCallback else { return }
        takeReports()
    }

    private func takeReports() {
        isTakingReports = true
        defer { isTakingReports = false }
        while !pendingReports.isEmpty {
            let report = pendingReports.removeFirst()
            take(report.time, report.sequence)
        }
    }

    private func take(_ time: MonotonicInstant, _ sequence: UInt64?) {
        let resolved = sequence ?? countedSequence(at: time)
        tickDue = false
        tickTimer?.cancel()
        lostTimer?.cancel()
        lastVblank = (time, resolved)
        let outcome: KMSFrameScheduler.EventOutcome
        if awaited == .flip {
            outcome = scheduler.flipCompleted(sequence32: UInt32(truncatingIfNeeded: resolved), at: time)
            if scheduler.flipping == nil {
                awaited = .nothing
            } else {
                // The held frame is on its way now: its presentation is awaited in turn.
                lostTimer?.schedule(at: clock() + lostPresentationTimeout)
            }
        } else {
            outcome = scheduler.vblankEvent(sequence: resolved, at: time)
            awaited = .nothing
        }
        follow(outcome, predicted: false)
    }

    // MARK: Refreshes

    private func demandChanged(_ wanted: Bool) {
        guard wanted, !scheduler.isWaitingForEvent, !startPending else { return }
        startPending = true
        let index = dispatcher.nextRefreshIndex
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.startPending = false
                guard self.dispatcher.wantsRefreshes, self.dispatcher.nextRefreshIndex == index else { return }
                self.start()
            }
        }
    }

    private func start() {
        if delayedEvent != nil {
            delayedEvent = nil
            delayTimer?.cancel()
        }
        switch scheduler.start(now: clock(), refreshIndex: dispatcher.nextRefreshIndex) {
        case .none: break
        case .queueVblank: scheduleTick(at: nextVblank(after: clock()))
        case .dispatch(let event): runCallback(event, predicted: event.provenance != .hardwareVBlank)
        }
    }

    private func follow(_ outcome: KMSFrameScheduler.EventOutcome, predicted: Bool) {
        if let feedback = outcome.feedback { dispatcher.deliver(feedback) }
        guard dispatcher.wantsRefreshes else { return }
        switch outcome.next {
        case .none: break
        case .queueVblank:
            scheduler.idleVblankQueued()
            scheduleTick(at: nextVblank(after: clock()))
        case .callback:
            let now = clock()
            var event = scheduler.beginCallback(refreshIndex: dispatcher.nextRefreshIndex, now: now)
            if predicted { event.provenance = .frameCallbackEstimate }
            if let start = scheduler.plannedStart(for: event, now: now), let delayTimer {
                delayedEvent = (event, start)
                delayTimer.schedule(at: start, now: now)
            } else {
                runCallback(event, predicted: predicted)
            }
        }
    }

    private func runDelayedCallback() {
        guard let (event, planned) = delayedEvent else { return }
        delayedEvent = nil
        scheduler.callbackStarted(at: clock(), plannedFor: planned)
        runCallback(event, predicted: event.provenance != .hardwareVBlank)
    }

    private func runCallback(_ event: RefreshEvent, predicted: Bool) {
        if predicted { predictedTickCount += 1 }
        let outermost = !isInCallback
        isInCallback = true
        dispatcher.dispatch(event)
        if outermost { isInCallback = false }
        defer { if outermost && !isTakingReports && !pendingReports.isEmpty { takeReports() } }
        switch scheduler.callbackEnded(wantsRefreshes: dispatcher.wantsRefreshes) {
        case .none:
            break
        case .startAgain(let time):
            // Before the first frame: start again a period on, unless a refresh ran meanwhile.
            let index = dispatcher.nextRefreshIndex
            DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, (time - clock()).value)))) {
                [weak self] in
                MainActor.assumeIsolated {
                    guard let self, self.dispatcher.nextRefreshIndex == index, self.dispatcher.wantsRefreshes,
                        !self.scheduler.isModeSet
                    else { return }
                    self.start()
                }
            }
        case .queueVblank:
            // Nothing submitted: the next vblank, predicted, brings the next callback.
            scheduleTick(at: nextVblank(after: clock()))
        }
    }

    // MARK: Presentations never reported

    private func awaitFlip(submittedAt time: MonotonicInstant) {
        awaited = .flip
        lostTimer?.schedule(at: time + lostPresentationTimeout)
    }

    /// A submitted frame's presentation was never reported: the frames on their way are
    /// forgotten and the rhythm restarts at the next predicted vblank (a restart: zero delta).
    private func presentationLost() {
        guard awaited != .nothing else { return }
        lostPresentationCount += 1
        if lostPresentationCount == 1 {
            FedFrameSource.log.warning(
                """
                a submitted frame's presentation was not reported within \(lostPresentationTimeout): the links \
                restart on predicted vblanks. Report each presentation (the page flip's completion) with \
                FedFrameSource.presented(at:sequence:) (C: dl_source_presented)
                """)
        }
        awaited = .nothing
        scheduler.sessionResumed()
        if dispatcher.wantsRefreshes { start() }
    }

    // MARK: Predicted vblanks

    private func scheduleTick(at time: MonotonicInstant) {
        tickDue = true
        tickTimer?.schedule(at: time)
    }

    /// A tick: the predicted vblank stands in for the event the program does not report.
    private func tickFired() {
        // Also while no link wants refreshes: the vblank stands in for the event the scheduler
        // waits for, as the backend's queued vblank event still comes during a pause (the next
        // start then finds nothing on its way); its callback is dropped by `follow`.
        guard tickDue, awaited != .flip else { return }
        tickDue = false
        awaited = .nothing
        let now = clock()
        let vblank = latestVblank(atOrBefore: now)
        lastVblank = vblank
        follow(scheduler.vblankEvent(sequence: vblank.sequence, at: vblank.time), predicted: true)
    }

    /// After a late frame's submission: the callback for the vblank right after its own runs now,
    /// from the main queue (as the backend's, which reads that vblank from the kernel; here it is
    /// predicted from the last one reported).
    private func startNextSoon() {
        guard !startNextPending else { return }
        startNextPending = true
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.startNextPending = false
                guard self.dispatcher.wantsRefreshes, self.scheduler.wantsCurrentVblank else {
                    self.scheduler.cancelCurrentVblank()
                    return
                }
                let now = self.clock()
                let current = self.latestVblank(atOrBefore: now)
                if let event = self.scheduler.currentVblank(
                    sequence: current.sequence, at: current.time, eventPending: false,
                    refreshIndex: self.dispatcher.nextRefreshIndex, now: now)
                {
                    // The vblank is predicted from the last one reported (the backend reads it
                    // from the kernel): an estimate.
                    var predicted = event
                    predicted.provenance = .frameCallbackEstimate
                    self.runCallback(predicted, predicted: true)
                }
            }
        }
    }

    /// The last vblank at or before `now` on the reported rhythm (now itself, sequence 1, before any).
    private func latestVblank(atOrBefore now: MonotonicInstant) -> (time: MonotonicInstant, sequence: UInt64) {
        guard let last = lastVblank else { return (now, 1) }
        let p = refreshPeriod.value
        let (elapsed, overflow) = now.nanoseconds.subtractingReportingOverflow(last.time.nanoseconds)
        guard !overflow, elapsed >= p else { return last }
        let steps = elapsed / p
        return (last.time + Nanoseconds(steps &* p), last.sequence &+ UInt64(steps))
    }

    /// The first vblank after `now` on the reported rhythm (a period on, before any).
    private func nextVblank(after now: MonotonicInstant) -> MonotonicInstant {
        latestVblank(atOrBefore: now).time + refreshPeriod
    }

    /// A sequence for a presentation reported without one: the last one plus the periods between.
    private func countedSequence(at time: MonotonicInstant) -> UInt64 {
        guard let last = lastVblank else { return 1 }
        let p = refreshPeriod.value
        let (elapsed, overflow) = time.nanoseconds.subtractingReportingOverflow(last.time.nanoseconds)
        guard !overflow, elapsed > 0 else { return last.sequence &+ 1 }
        let periods = elapsed / p + (elapsed % p >= p - p / 2 ? 1 : 0)
        return last.sequence &+ UInt64(max(1, periods))
    }
}

/// Why a fed source cannot be made.
public enum FedSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The refresh period is outside ``FedFrameSource/periods``.
    case invalidPeriod(Nanoseconds)

    public var description: String {
        switch self {
        case .invalidPeriod(let period):
            "a fed source needs the display's exact refresh period, from 100 us to 10 s "
                + "(got \(period.value) ns): take it from the mode timings"
        }
    }
}
