import DisplayLinkCore
import Dispatch
import FrameSchedulers
import Logging
internal import CWayland
internal import CWaylandClient

/// A frame source paced by `wl_surface.frame` callbacks, with `wp_presentation` feedback as the
/// truth about when frames were shown.
///
/// Each refresh: request the next frame callback and a presentation feedback, dispatch to the
/// links (a target that draws swaps, which commits both), and if nothing was committed, commit
/// the empty state so the link keeps ticking. The frame callback, never a blocking swap or a
/// sleep, paces the loop (render with swap interval 0).
///
/// Timestamps: the newest presentation time known when the callback is handled, converted from
/// the compositor's presentation clock into `CLOCK_MONOTONIC`. The refresh is handled after the
/// whole batch of events it arrived with, so feedback that came in the same batch counts. If no
/// new presentation arrived since the last callback (feedback late or lost), the timestamp is
/// extrapolated on the measured rhythm and marked `frameCallbackEstimate`; without
/// `wp_presentation`, callback arrival times are the estimate. Timestamps strictly increase, also
/// when late feedback turns out earlier than an extrapolated timestamp (see
/// ``WaylandRefreshScheduler`` for the rules), and every refresh carries a sequence that strictly
/// increases. `targetTimestamp` comes from the measured period and the learned presentation depth
/// (the scheduler's `RhythmEstimator`); never from the callback's `ms` argument, which compositors fill
/// inconsistently.
///
/// Newer compositors' timing protocols are used when the connection bound them (each is optional):
/// with `wp_commit_timing_manager_v1` and ``Configuration/usesCommitTiming`` (the default) every refresh's commit carries a timestamp half a period
/// before its target (``WaylandRefreshScheduler/Refresh/commitTarget``), so a frame is never shown
/// before the vblank it was computed for; if the compositor holds timed commits instead of
/// presenting them (mutter 48 headless), the source notices within a few periods plus one
/// watchdog interval, releases the held frame and falls back to untimed commits for good
/// (``isCommitTimingFallenBack``, one warning naming the option); with a preferred rate below
/// the refresh, timed commits a whole link interval ahead replace the callbacks no link would use
/// (see ``WaylandRefreshScheduler``); with `wp_fifo_manager_v1` every compositor-paced commit sets a
/// FIFO barrier and waits for the previous one, while timer fallback ticks (hidden, stalled) set
/// none, so frames drawn then replace each other instead of queueing, and the client never
/// waits; with `xdg_wm_base` 6 the `suspended` state stops all
/// requests and the watchdog at once (``isSuspended``), and the first refresh after it follows a
/// stall (zero delta under `.zeroDelta`); only a surface's first frame is drawn while suspended
/// (it maps the surface: mutter 48 suspends a window left without a buffer for 3 s, and resumes
/// it only once it can show it). Presentation flags and commit targets travel with each
/// ``PresentationFeedback``. When the surface changes output, or its output's mode changes, the
/// rhythm is learned again at once.
///
/// When callbacks stop (surface hidden, feedback lost), a watchdog notices after
/// ``Configuration/stallTimeout``; it can tick the links at a low rate (``timerFallback``
/// provenance), and the first refresh after callbacks return is marked as following a stall.
/// While no link is active, nothing is requested and no timer runs.
///
/// Every decision (timestamp, sequence, target, provenance, stall, fallback tick, what to request)
/// is made by ``WaylandRefreshScheduler``, a pure value tested on virtual time; this class makes the
/// Wayland calls, reads the clock, converts presentation times, runs the timer and feeds it.
/// Logs (label `displaylink.wayland`, at `.debug` except the one `.warning` when commit timing
/// falls back: silent unless the program bootstraps a handler at that level) only on state changes, never per frame in the steady state: whether
/// `wp_presentation` is there and its clock, feedback given up and its slot reused, stalls, the
/// timer fallback and the resume, and the compositor going away.
@MainActor
public final class WaylandFrameSource: FrameSource {
    static let log = Logger(label: "displaylink.wayland")

    public struct Configuration: Sendable {
        /// No callback for this long means the compositor stopped pacing us.
        public var stallTimeout = Nanoseconds(500_000_000)
        /// While stalled, tick the links this often with `timerFallback` provenance (nil: don't).
        public var fallbackTickInterval: Nanoseconds?
        /// Give each commit its target time when the compositor offers commit timing (false: the
        /// connection may have bound it, but this source does not use it). On by default, made
        /// safe by ``fallsBackFromHeldCommits``: mutter 48 applies a timed commit only in a stage
        /// frame whose target time has reached the commit's, and when its frame clock has no
        /// presentation prediction (a headless virtual monitor never has one) it schedules the
        /// frame for a timed commit about one system uptime away; so once nothing else on the
        /// output repaints (the window's map animation ends), the window's timed commits would
        /// wait indefinitely.
        public var usesCommitTiming = true
        /// When timed commits are held (no callback ``WaylandRefreshScheduler/heldCommitPeriods``
        /// periods after a commit's target, while the compositor answers two `wl_display.sync`
        /// probes sent after it: see ``WaylandRefreshScheduler``), release the held frame with one
        /// commit timed a period ahead and use untimed commits from then on
        /// (``WaylandFrameSource/isCommitTimingFallenBack``, one warning). False: keep timed
        /// commits whatever the compositor does (for measuring a compositor; mutter 48 and 50
        /// headless then freeze the window unless something else repaints).
        public var fallsBackFromHeldCommits = true
        /// Use commit timing when every output the window is on (or, before it is on one, every
        /// output of the connection) is one of mutter's virtual monitors
        /// (``WaylandOutput/isMutterVirtualMonitor``: headless and remote desktop sessions).
        /// False, the default: there mutter 48 and 50 hold a timed commit made while nothing else
        /// repaints, and mutter 50 sometimes holds the commits that would release it too (under
        /// load, for good), so frames are committed untimed as without the protocol.
        public var usesCommitTimingOnVirtualMonitors = false
        public init(stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = nil,
                    usesCommitTiming: Bool = true, fallsBackFromHeldCommits: Bool = true,
                    usesCommitTimingOnVirtualMonitors: Bool = false) {
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.usesCommitTiming = usesCommitTiming
            self.fallsBackFromHeldCommits = fallsBackFromHeldCommits
            self.usesCommitTimingOnVirtualMonitors = usesCommitTimingOnVirtualMonitors
        }
    }

    public let dispatcher = RefreshDispatcher()
    public let window: WaylandWindow
    public let configuration: Configuration
    /// The source's decisions (timestamps, sequences, targets, stalls, requests), as a pure value.
    public private(set) var scheduler: WaylandRefreshScheduler
    /// What the source has learned about presentation times.
    public var timeline: PresentationTimeline { scheduler.timeline }
    /// `wl_surface.frame` requests sent (for tests: a paused link sends none).
    public var frameRequestCount: Int { scheduler.frameRequestCount }
    /// Commits made by the source itself because no target drew.
    public private(set) var emptyCommitCount = 0
    /// Whether callbacks have stopped arriving.
    public var isStalled: Bool { scheduler.isStalled }
    /// The last error of the connection, once it failed.
    public private(set) var error: WaylandError?
    /// Presentation feedback events received (presented or discarded).
    public var feedbackCount: Int { scheduler.feedbackCount }
    /// Whether a `wl_surface.frame` request is outstanding (the compositor owes us a callback).
    public var hasOutstandingFrameRequest: Bool { scheduler.hasOutstandingFrameCallback }
    /// Presentation feedback requests the compositor has not answered yet.
    public var outstandingFeedbackCount: Int { scheduler.outstandingFeedbackCount }
    /// Whether the watchdog timer is armed (only while a link wants refreshes).
    public var isWatchdogArmed: Bool { watchdog != nil }
    /// Whether a start refresh is scheduled on the main queue.
    public var isStartPending: Bool { scheduler.isStartPending }
    /// Whether the compositor suspended the window (nothing is requested, no timer runs).
    public var isSuspended: Bool { scheduler.isSuspended }
    /// The timing protocols this source uses (``WaylandConnection/timingProtocols``, without
    /// commit timing when the configuration turned it off or it fell back).
    public var timingProtocolsInUse: [String] {
        connection.timingProtocols.filter { usesCommitTiming || !$0.hasPrefix("wp_commit_timing") }
    }
    /// Whether commits carry target times now (`wp_commit_timer_v1.set_timestamp`): bound,
    /// configured, and not fallen back.
    public var usesCommitTiming: Bool { scheduler.usesCommitTimingNow }
    /// Whether timed commits were found held and this source fell back to untimed commits for
    /// good (see ``Configuration/fallsBackFromHeldCommits``).
    public var isCommitTimingFallenBack: Bool { scheduler.isCommitTimingFallenBack }
    /// Whether the compositor offers commit timing and the configuration asked for it (whether
    /// or not it fell back since).
    public var isCommitTimingConfigured: Bool { scheduler.configuration.usesCommitTiming }
    /// Whether the window was on mutter's virtual monitors only when the source was made (see
    /// ``Configuration/usesCommitTimingOnVirtualMonitors``).
    public let isOnVirtualMonitor: Bool
    /// Commit timing's state for reports: `in use`, `fell back` (the compositor held timed
    /// commits), `not used on a virtual monitor`, `off` (by configuration) or `not offered`.
    public var commitTimingState: String {
        if isCommitTimingFallenBack { return "fell back" }
        if usesCommitTiming { return "in use" }
        guard window.commitTimer != nil else { return "not offered" }
        return configuration.usesCommitTiming && isOnVirtualMonitor ? "not used on a virtual monitor" : "off"
    }
    /// Commits made to release a held timed commit (0 while none was held; more than 1 when a
    /// release was held too).
    public private(set) var releaseCommitCount = 0
    /// `wl_display.sync` probes sent by the held-commit rule, and answers received.
    public var heldCommitProbeCount: UInt64 { scheduler.probesSent }
    /// Refreshes whose commit was timed a whole link interval ahead (a preferred rate below the
    /// refresh; see ``WaylandRefreshScheduler``), and the index of the first of them.
    public private(set) var stridedRefreshCount = 0
    public private(set) var firstStridedRefreshIndex: UInt64?
    /// Commits given a target time, and FIFO barriers set (for tests).
    public private(set) var timedCommitCount = 0
    public private(set) var fifoBarrierCount = 0
    /// Times the rhythm was forgotten because the surface's output or its mode changed.
    public private(set) var outputChangeCount = 0

    private var connection: WaylandConnection { window.connection }
    private var frameCallback: OpaquePointer?
    private var committedDuringDispatch = false
    private var watchdog: DispatchSourceTimer?
    /// The held-commit rule's one-shot timer (made once), and whether it is armed.
    private var heldCommitTimer: DispatchSourceTimer?
    private var isHeldCommitTimerArmed = false
    /// Whether the surface was on an output at some point (leaving every output then means hidden).
    private var hasBeenOnOutput = false
    private var clockOffset = ClockOffset.identity
    private var clockDomain: ClockDomain = .monotonic
    /// The feedback proxies, by the scheduler's slot. Fixed capacity, no allocation per frame.
    private var feedbackProxies: ContiguousArray<OpaquePointer?>
    /// Feedback requests given up because the compositor never answered them (their slot reused).
    public private(set) var lostFeedbackCount = 0
    /// Whether the current stall was logged (its fallback ticks, its end).
    private var stallLogged = false
    /// The output whose rhythm is being learned, and its advertised period.
    private var currentOutput: ObjectIdentifier?
    private var currentAdvertised: Nanoseconds

    public init(window: WaylandWindow, configuration: Configuration = Configuration()) {
        self.window = window
        self.configuration = configuration
        let advertised = window.outputs.first?.advertisedPeriod
            ?? window.connection.outputs.first?.advertisedPeriod ?? .zero
        currentOutput = window.outputs.first.map { ObjectIdentifier($0) }
        currentAdvertised = advertised
        let outputs = window.outputs.isEmpty ? window.connection.outputs : window.outputs
        isOnVirtualMonitor = !outputs.isEmpty && outputs.allSatisfy(\.isMutterVirtualMonitor)
        let timesCommits = configuration.usesCommitTiming && window.commitTimer != nil
            && (configuration.usesCommitTimingOnVirtualMonitors || !isOnVirtualMonitor)
        scheduler = WaylandRefreshScheduler(
            configuration: .init(usesPresentation: window.connection.hasPresentationTime,
                                 stallTimeout: configuration.stallTimeout,
                                 fallbackTickInterval: configuration.fallbackTickInterval,
                                 usesCommitTiming: timesCommits,
                                 fallsBackFromHeldCommits: configuration.fallsBackFromHeldCommits),
            advertisedPeriod: advertised)
        feedbackProxies = ContiguousArray(repeating: nil, count: WaylandRefreshScheduler.feedbackCapacity)
        if let clock = window.connection.presentationClock {
            clockDomain = clock
            clockOffset = PresentationClock.offset(for: clock)
            WaylandFrameSource.log.debug("wp_presentation: presentation times on \(clock.description), converted to CLOCK_MONOTONIC (offset \(clockOffset.nanoseconds) ns ± \(clockOffset.uncertainty) ns)")
        } else if window.connection.hasPresentationTime {
            WaylandFrameSource.log.debug("wp_presentation bound but the compositor named no clock: presentation times taken as CLOCK_MONOTONIC")
        } else {
            WaylandFrameSource.log.debug("no wp_presentation: timestamps are estimates from frame callback arrival times (provenance frameCallbackEstimate)")
        }
        WaylandFrameSource.log.debug("advertised refresh period \(advertised) (targets use the measured period once known)")
        WaylandFrameSource.log.debug("timing protocols in use: \(window.connection.timingProtocols.joined(separator: ", "))\(window.commitTimer != nil && !configuration.usesCommitTiming ? " (commit timing bound, not used by configuration)" : "")")
        if configuration.usesCommitTiming && window.commitTimer != nil && !timesCommits {
            WaylandFrameSource.log.debug("commit timing not used: the window is on mutter's virtual monitors, which hold timed commits (WaylandFrameSource.Configuration.usesCommitTimingOnVirtualMonitors: true uses it anyway)")
        }
        dispatcher.onDemandChange = { [weak self] wanted in self?.demandChanged(wanted) }
        handlerIDs.suspended = window.addSuspendedHandler { [weak self] suspended in self?.suspendedChanged(suspended) }
        handlerIDs.outputs = window.addOutputsChangedHandler { [weak self] in self?.outputsChanged() }
        if window.isSuspended { _ = scheduler.suspendedChanged(true, at: MonotonicInstant.now()) }
        handlerIDs.afterDispatch = window.connection.addAfterDispatchHandler { [weak self] in self?.afterDispatch() }
        handlerIDs.error = window.connection.addErrorHandler { [weak self] failure in self?.connectionFailed(failure) }
        error = window.connection.error
        if error != nil { scheduler.connectionFailed() }
    }

    isolated deinit {
        stopWatchdog()
        heldCommitTimer?.cancel()
        destroyPendingRequests()
        // Its handlers go with it (a long-lived connection would otherwise run one more no-op
        // after every dispatch for each frame source it ever had).
        window.removeSuspendedHandler(handlerIDs.suspended)
        window.removeOutputsChangedHandler(handlerIDs.outputs)
        window.connection.removeAfterDispatchHandler(handlerIDs.afterDispatch)
        window.connection.removeErrorHandler(handlerIDs.error)
    }

    /// What its handlers were registered as, with the window and the connection.
    private var handlerIDs = (suspended: 0, outputs: 0, afterDispatch: 0, error: 0)

    /// Tells the source the surface was committed with a frame (the EGL window's swap calls it):
    /// during a refresh it then commits no empty frame, and from the first one on the surface
    /// has content, so a suspension holds back start refreshes too.
    public func noteCommit() {
        committedDuringDispatch = true
        scheduler.contentCommitted()
    }

    // MARK: Demand

    private func demandChanged(_ wanted: Bool) {
        let scheduleStart = scheduler.demandChanged(wanted, at: MonotonicInstant.now())
        if scheduler.wantsWatchdog { startWatchdog() } else { stopWatchdog() }
        guard scheduleStart else { return }
        scheduleStartRefresh()
    }

    /// Start with a refresh now, from the main queue (not inside the link's init or setter, or
    /// the configure handler): the first frame maps the surface, and the compositor paces from there.
    private func scheduleStartRefresh() {
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self, let refresh = self.scheduler.startDue(at: MonotonicInstant.now()) else { return }
                self.perform(refresh)
            }
        }
    }

    // MARK: Suspension and outputs

    private func suspendedChanged(_ suspended: Bool) {
        let scheduleStart = scheduler.suspendedChanged(suspended, at: MonotonicInstant.now())
        if scheduler.wantsWatchdog { startWatchdog() } else { stopWatchdog() }
        if suspended && !scheduler.hasCommittedContent {
            WaylandFrameSource.log.debug("suspended by the compositor before the first frame: the first frame is still drawn (it maps the window, so the compositor can show and resume it); then no requests and no timer until it resumes the window")
        } else {
            WaylandFrameSource.log.debug(suspended
                ? "suspended by the compositor: no requests and no timer until it resumes the window"
                : "resumed by the compositor (the next refresh follows a stall: delta 0 under .zeroDelta)")
        }
        if scheduleStart { scheduleStartRefresh() }
    }

    private func outputsChanged() {
        if !window.outputs.isEmpty { hasBeenOnOutput = true }
        let off = hasBeenOnOutput && window.outputs.isEmpty
        if off != scheduler.isOffAllOutputs {
            scheduler.surfaceLeftAllOutputs(off)
            armHeldCommitCheck()
        }
        let primary = window.outputs.first
        let identity = primary.map { ObjectIdentifier($0) }
        let advertised = primary?.advertisedPeriod ?? currentAdvertised
        defer {
            if identity != nil { currentOutput = identity }
            currentAdvertised = advertised
        }
        // The first enter of the output the source started from is no change.
        let isNewOutput = identity != nil && currentOutput != nil && identity != currentOutput
        guard isNewOutput || advertised != currentAdvertised else { return }
        outputChangeCount += 1
        scheduler.outputChanged(advertisedPeriod: advertised)
        WaylandFrameSource.log.debug("output or mode changed (advertised period \(advertised)): period and phase learned again")
    }

    // MARK: The refresh

    private func afterDispatch() {
        if scheduler.usesCommitTimingNow {
            // The links' common interval: a stride of timed commits replaces the wake-ups no link uses.
            scheduler.linkFrameInterval = dispatcher.commonFrameInterval(refreshPeriod: scheduler.period)
        }
        guard let refresh = scheduler.eventsDispatched() else { return }
        perform(refresh)
    }

    /// Sends the refresh's requests, dispatches it, and commits the empty state if no target drew.
    private func perform(_ refresh: WaylandRefreshScheduler.Refresh) {
        guard !window.isDestroyed else { return }
        if refresh.requestsFrameCallback { requestFrameCallback() }
        if let slot = refresh.feedbackSlot { requestFeedback(slot: slot) }
        if let target = refresh.commitTarget, let timer = window.commitTimer {
            setTimestamp(timer, target)
        }
        if refresh.stride > 1 {
            stridedRefreshCount += 1
            if firstStridedRefreshIndex == nil { firstStridedRefreshIndex = refresh.index }
        }
        if let fifo = window.fifo, refresh.setsFifoBarrier {
            // Applied with this refresh's commit: it waits until the previous one was presented
            // (or the compositor gave up on it, e.g. while hidden), and sets the next barrier.
            // Not before the first presentation (the surface is mapped by then), never on a timer tick.
            wp_fifo_v1_wait_barrier(fifo)
            wp_fifo_v1_set_barrier(fifo)
            fifoBarrierCount += 1
        }
        if stallLogged && refresh.event.provenance != .timerFallback {
            stallLogged = false
            WaylandFrameSource.log.debug("frame callbacks resumed after a stall (refresh \(refresh.index); delta 0 under .zeroDelta)")
        }
        committedDuringDispatch = false
        dispatcher.dispatch(refresh.event)
        // A target may have destroyed the window in its callback (closing its surface).
        guard error == nil, !window.isDestroyed else { return }
        if !committedDuringDispatch {
            // Nothing drawn: commit the frame request alone so the compositor keeps pacing us.
            wl_surface_commit(window.surface)
            emptyCommitCount += 1
            // Before the first frame with content no compositor answers it: tick on a timer.
            if let due = scheduler.refreshEndedWithoutContent() { schedulePreContentTick(at: due) }
        }
        armHeldCommitCheck()
        // EGL may have read events for our queue while swapping: handle them, then flush.
        connection.dispatchPending()
    }

    /// `wp_commit_timer_v1.set_timestamp` with `target` converted to the presentation clock.
    private func setTimestamp(_ timer: OpaquePointer, _ target: MonotonicInstant) {
        let raw = target.nanoseconds &- clockOffset.nanoseconds
        guard raw > 0 else { return }
        let seconds = UInt64(raw / 1_000_000_000)
        wp_commit_timer_v1_set_timestamp(timer, UInt32(truncatingIfNeeded: seconds >> 32),
                                         UInt32(truncatingIfNeeded: seconds), UInt32(raw % 1_000_000_000))
        timedCommitCount += 1
    }

    private func requestFrameCallback() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let callback = wl_surface_frame(window.surface)
        wl_callback_add_listener(callback, WaylandFrameSource.callbackListener, me)
        frameCallback = callback
    }

    private func requestFeedback(slot: Int) {
        guard let presentation = connection.presentation, feedbackProxies.indices.contains(slot) else { return }
        // A slot still holding a proxy was given up by the scheduler (that feedback never came).
        if let stale = feedbackProxies[slot] {
            wp_presentation_feedback_destroy(stale)
            lostFeedbackCount += 1
            // The first loss, then every 1000th: a compositor that never answers does not log per frame.
            if lostFeedbackCount == 1 || lostFeedbackCount % 1000 == 0 {
                WaylandFrameSource.log.debug("presentation feedback lost: slot \(slot) reused (\(lostFeedbackCount) lost so far); those frames' times are estimates")
            }
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let feedback = wp_presentation_feedback(presentation, window.surface)
        wp_presentation_feedback_add_listener(feedback, WaylandFrameSource.feedbackListener, me)
        feedbackProxies[slot] = feedback
    }

    // MARK: Events

    private func frameDone(_ callback: OpaquePointer?) {
        wl_callback_destroy(callback)
        if callback == frameCallback { frameCallback = nil }
        // Handled after the whole batch: presentation feedback in the same batch counts.
        scheduler.frameCallbackDone(at: MonotonicInstant.now())
    }

    private func presented(_ proxy: OpaquePointer?, seconds: UInt64, nanoseconds: UInt32,
                           refresh: UInt32, sequence: UInt64, flags: UInt32) {
        guard let slot = takeProxy(proxy) else { return }
        let now = MonotonicInstant.now()
        if clockDomain != .monotonic, clockOffset.isStale(at: now) {
            clockOffset = PresentationClock.offset(for: clockDomain)
        }
        let raw = Int64(truncatingIfNeeded: seconds) &* 1_000_000_000 &+ Int64(nanoseconds)
        let time = clockOffset.monotonic(fromSource: raw)
        guard let feedback = scheduler.presented(slot: slot, at: time, receivedAt: now, sequence: sequence,
                                                 advertisedRefresh: Nanoseconds(Int64(refresh)),
                                                 flags: PresentationFlags(rawValue: flags & 0xF)) else { return }
        dispatcher.deliver(feedback)
    }

    private func discarded(_ proxy: OpaquePointer?) {
        guard let slot = takeProxy(proxy), let feedback = scheduler.discarded(slot: slot) else { return }
        dispatcher.deliver(feedback)
    }

    /// Destroys a feedback proxy and returns its slot.
    private func takeProxy(_ proxy: OpaquePointer?) -> Int? {
        wp_presentation_feedback_destroy(proxy)
        guard let slot = feedbackProxies.firstIndex(where: { $0 == proxy }) else { return nil }
        feedbackProxies[slot] = nil
        return slot
    }

    // MARK: Stalls and failure

    private func startWatchdog() {
        guard watchdog == nil else { return }
        let nanos = Int(clamping: scheduler.watchdogInterval.value)
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
                       leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler { [weak self] in
            onMainActor(self) { $0?.watchdogFired() }
        }
        watchdog = timer
        timer.resume()
    }

    private func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
    }

    private func watchdogFired() {
        guard error == nil else { return }
        switch scheduler.watchdog(now: MonotonicInstant.now()) {
        case .nothing:
            break
        case .stalled:
            logStall(fallback: false)
        case .fallbackTick(let refresh):
            if !stallLogged { logStall(fallback: true) }
            perform(refresh)
        }
    }

    // MARK: Held timed commits

    /// Arms the held-commit timer for ``WaylandRefreshScheduler/heldCommitCheckTime`` unless it is
    /// armed already: an earlier arming fires, finds the frame answered, and re-arms for the
    /// outstanding one, so the timer is set at most once every few periods, not every frame.
    private func armHeldCommitCheck() {
        guard !isHeldCommitTimerArmed, error == nil, let due = scheduler.heldCommitCheckTime else { return }
        let timer: DispatchSourceTimer
        if let existing = heldCommitTimer {
            timer = existing
        } else {
            timer = DispatchSource.makeTimerSource(queue: .main)
            timer.setEventHandler { [weak self] in
                onMainActor(self) { $0?.heldCommitTimerFired() }
            }
            timer.schedule(deadline: .distantFuture)
            timer.resume()
            heldCommitTimer = timer
        }
        let wait = max(0, (due - MonotonicInstant.now()).value)
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: wait)), leeway: .milliseconds(1))
        isHeldCommitTimerArmed = true
    }

    private func heldCommitTimerFired() {
        isHeldCommitTimerArmed = false
        guard error == nil, !window.isDestroyed else { return }
        if scheduler.heldCommitCheck(at: MonotonicInstant.now()) == .probe {
            // Rare (a timed commit 4 periods late), so the connection's own round trip serves;
            // its answer holds the source weakly.
            connection.sync { [weak self] in self?.probeAnswered() }
            WaylandFrameSource.log.debug("a timed commit is \(WaylandRefreshScheduler.heldCommitPeriods) periods past its target with no frame callback: asking the compositor (probe \(scheduler.probesSent))")
        }
        armHeldCommitCheck()
    }

    private func probeAnswered() {
        guard error == nil, !window.isDestroyed else { return }
        if case .fallBack(let release) = scheduler.compositorAnswered(at: MonotonicInstant.now()) {
            releaseHeldCommit(at: release)
        }
        armHeldCommitCheck()
    }

    /// The next refresh at `time`, before the surface has content (see
    /// ``WaylandRefreshScheduler/refreshEndedWithoutContent()``), unless another came first.
    private func schedulePreContentTick(at time: MonotonicInstant) {
        let index = scheduler.nextRefreshIndex
        let wait = max(0, (time - MonotonicInstant.now()).value)
        DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.error == nil, !self.window.isDestroyed,
                      let refresh = self.scheduler.preContentTickDue(at: MonotonicInstant.now(), index: index) else { return }
                self.perform(refresh)
            }
        }
    }

    /// Timed commits are held: commit once, timed at `release` (a period ahead: a commit due at
    /// once behind the held one does not wake mutter 50's frame clock, one timed in the future
    /// does), so the held frame and its callback come through; from now on commits are untimed.
    private func releaseHeldCommit(at release: MonotonicInstant) {
        stallLogged = true
        let reason = scheduler.commitTimingFallbackReason ?? "timed commits are held"
        if releaseCommitCount > 0 {
            WaylandFrameSource.log.debug("the release commit was held as well: released again with a commit timed a period ahead (release \(releaseCommitCount + 1))")
        } else {
            WaylandFrameSource.log.warning("commit timing turned off for this surface: \(reason); released with one commit timed a period ahead, untimed commits from here on (WaylandFrameSource.Configuration.usesCommitTiming / DisplaySurface.Options.waylandCommitTiming: false avoids trying; fallsBackFromHeldCommits: false keeps timed commits)")
        }
        guard !window.isDestroyed, let timer = window.commitTimer else { return }
        setTimestamp(timer, release)
        wl_surface_commit(window.surface)
        releaseCommitCount += 1
        connection.dispatchPending()
    }

    private func logStall(fallback: Bool) {
        stallLogged = true
        let timeout = scheduler.configuration.stallTimeout
        if fallback, let interval = scheduler.configuration.fallbackTickInterval {
            WaylandFrameSource.log.debug("stalled: no frame callback for \(timeout) (window hidden or compositor not repainting); timer fallback ticks every \(interval)")
        } else {
            WaylandFrameSource.log.debug("stalled: no frame callback for \(timeout) (window hidden or compositor not repainting); waiting without ticking")
        }
    }

    private func connectionFailed(_ failure: WaylandError) {
        WaylandFrameSource.log.debug("the compositor connection failed: \(failure); links invalidated")
        error = failure
        scheduler.connectionFailed()
        stopWatchdog()
        heldCommitTimer?.cancel()
        heldCommitTimer = nil
        isHeldCommitTimerArmed = false
        frameCallback = nil
        for index in feedbackProxies.indices { feedbackProxies[index] = nil }
        dispatcher.invalidateAll()
    }

    private func destroyPendingRequests() {
        guard error == nil else { return }
        if let frameCallback { wl_callback_destroy(frameCallback) }
        frameCallback = nil
        for proxy in feedbackProxies where proxy != nil { wp_presentation_feedback_destroy(proxy) }
    }

    // MARK: Listener trampolines

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandFrameSource {
        Unmanaged<WaylandFrameSource>.fromOpaque(data!).takeUnretainedValue()
    }

    // Every frame passes through these two: `onMainActor` rather than `MainActor.assumeIsolated`,
    // which allocates on every call. They run inside the connection's
    // dispatch, which it makes on the main actor.
    private nonisolated(unsafe) static let callbackListener = WaylandListeners.make(wl_callback_listener(
        done: { data, callback, _ in
            // The `ms` argument is deliberately ignored: see the type's notes.
            onMainActor((WaylandFrameSource.from(data), callback)) { arguments in
                arguments.0.frameDone(arguments.1)
            }
        }
    ))

    private struct Presented {
        var source: WaylandFrameSource
        var feedback: OpaquePointer?
        var seconds: UInt64
        var nanoseconds: UInt32
        var refresh: UInt32
        var sequence: UInt64
        var flags: UInt32
    }

    private nonisolated(unsafe) static let feedbackListener = WaylandListeners.make(wp_presentation_feedback_listener(
        sync_output: { _, _, _ in },
        presented: { data, feedback, secondsHigh, secondsLow, nanoseconds, refresh, sequenceHigh, sequenceLow, flags in
            let presented = Presented(
                source: WaylandFrameSource.from(data), feedback: feedback,
                seconds: UInt64(secondsHigh) << 32 | UInt64(secondsLow), nanoseconds: nanoseconds, refresh: refresh,
                sequence: UInt64(sequenceHigh) << 32 | UInt64(sequenceLow), flags: flags)
            onMainActor(presented) { p in
                p.source.presented(p.feedback, seconds: p.seconds, nanoseconds: p.nanoseconds,
                                   refresh: p.refresh, sequence: p.sequence, flags: p.flags)
            }
        },
        discarded: { data, feedback in
            onMainActor((WaylandFrameSource.from(data), feedback)) { arguments in
                arguments.0.discarded(arguments.1)
            }
        }
    ))
}
