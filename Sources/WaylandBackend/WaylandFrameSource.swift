import DisplayLinkCore
import Dispatch
import FrameSchedulers
import Logging
internal import CWayland
internal import CWaylandClient

// This file holds the source's state, its setting up and its teardown. The rest lives in
// extensions, one job a file: the configuration (+Configuration), carrying out refreshes
// (+Refresh), frame callbacks and presentation feedback (+Feedback), suspension and outputs
// (+WindowChanges), stalls and failure (+Stalls), and held timed commits (+HeldCommits).

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
/// `WaylandRefreshScheduler` for the rules), and every refresh carries a sequence that strictly
/// increases. `targetTimestamp` comes from the measured period and the learned presentation depth
/// (the scheduler's `RhythmEstimator`); never from the callback's `ms` argument, which compositors
/// fill inconsistently.
///
/// Newer compositors' timing protocols are used when the connection bound them (each is optional):
/// with `wp_commit_timing_manager_v1` and ``Configuration/allowsCommitTiming`` (the default) a
/// refresh's commit carries a timestamp 0.5 ms before its target while the feedback on the
/// window's output carries `VSYNC` (`WaylandRefreshScheduler.Refresh.commitTarget`,
/// ``Configuration/requiresVsyncForTimedCommits``), so a frame is never shown before the vblank it
/// was computed for; if the compositor holds a timed commit instead of presenting it (mutter on an
/// idle stage), the source notices three periods past its target, releases the held frame (on
/// mutter with a commit on the window's 1×1 subsurface) and stops timed commits on that output for
/// good (``isCommitTimingFallenBack``, one warning naming the option); with a preferred rate below the refresh, timed commits a whole
/// link interval ahead replace the callbacks no link would use (see `WaylandRefreshScheduler`);
/// with `wp_fifo_manager_v1` every compositor-paced commit sets a FIFO barrier and waits for the
/// previous one, while timer fallback ticks (hidden, stalled) set none, so frames drawn then
/// replace each other instead of queueing, and the client never waits; with `xdg_wm_base` 6 the
/// `suspended` state stops all requests and the watchdog at once (``isSuspended``), and the first
/// refresh after it follows a stall (zero delta under `.zeroDelta`); only a surface's first frame
/// is drawn while suspended (it maps the surface: mutter 48 suspends a window left without a
/// buffer, and resumes it only once it can show it). Presentation flags and commit targets
/// travel with each `PresentationFeedback`. When the surface changes output, or its output's
/// mode changes, the rhythm is learned again at once.
///
/// When callbacks stop (surface hidden, feedback lost), a watchdog notices after
/// ``Configuration/stallTimeout``; it can tick the links at a low rate (`timerFallback`
/// provenance), and the first refresh after callbacks return is marked as following a stall.
/// While no link is active, nothing is requested and no timer runs.
///
/// Every decision (timestamp, sequence, target, provenance, stall, fallback tick, what to request)
/// is made by `WaylandRefreshScheduler`, a pure value tested on virtual time; this class makes the
/// Wayland calls, reads the clock, converts presentation times, runs the timer and feeds it.
/// Logs (label `displaylink.wayland`, at `.debug` except the one `.warning` when commit timing
/// falls back: silent unless the program bootstraps a handler at that level) only on state
/// changes, never per frame in the steady state: whether `wp_presentation` is there and its
/// clock, feedback given up and its slot reused, stalls, the timer fallback and the resume, and
/// the compositor going away.
@MainActor
public final class WaylandFrameSource: FrameSource {
    static let log = Logger(label: "displaylink.wayland")

    public let dispatcher = RefreshDispatcher()
    /// The surface paced: the library's window, or the program's surface.
    let paced: any PacedSurface
    public let configuration: Configuration
    /// The source's decisions (timestamps, sequences, targets, stalls, requests), as a pure value.
    public internal(set) var scheduler: WaylandRefreshScheduler
    /// What the source has learned about presentation times.
    public var timeline: PresentationTimeline { scheduler.timeline }
    /// `wl_surface.frame` requests sent (for tests: a paused link sends none).
    public var frameRequestCount: Int { scheduler.frameRequestCount }
    /// Commits made by the source itself because no target drew.
    public internal(set) var emptyCommitCount = 0
    /// Whether callbacks have stopped arriving.
    public var isStalled: Bool { scheduler.isStalled }
    /// The last error of the connection, once it failed.
    public internal(set) var error: WaylandError?
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
    /// commit timing when the configuration turned it off or it fell back, and without FIFO on a
    /// surface whose program keeps it).
    public var timingProtocolsInUse: [String] {
        connection.timingProtocols.filter { name in
            if name.hasPrefix("wp_commit_timing") { return isTimingCommits }
            // The program's surface keeps its FIFO when the program (its graphics stack) holds it.
            if name.hasPrefix("wp_fifo") { return paced.fifo != nil }
            return true
        }
    }
    /// Whether commits carry target times (`wp_commit_timer_v1.set_timestamp`): bound,
    /// configured, and not fallen back.
    public var isTimingCommits: Bool { scheduler.isTimingCommits }
    /// Whether timed commits were found held and this source fell back to untimed commits for
    /// good (see ``Configuration/fallsBackFromHeldCommits``).
    public var isCommitTimingFallenBack: Bool { scheduler.isCommitTimingFallenBack }
    /// Commit timing's state for reports: the `VSYNC` gate's on the current output
    /// (`CommitTimingGate.State`: `in use (VSYNC feedback)`, `waiting for VSYNC feedback`, `not
    /// used: presentations without VSYNC`, `stopped: a timed commit was held`, …), `off` (by
    /// configuration), `left to the program` (offered, and the program's surface keeps its
    /// commit timer) or `not offered`.
    public var commitTimingState: String {
        guard paced.commitTimer != nil else {
            return connection.commitTimingManager != nil && !paced.commitsItself ? "left to the program" : "not offered"
        }
        guard configuration.allowsCommitTiming else { return "off" }
        return scheduler.commitTimingGate.state.description
    }
    /// Whether the window has the 1×1 subsurface whose commit releases a timed commit mutter
    /// holds (the library's window on mutter with commit timing allowed and offered), and the
    /// releases it made.
    public var hasReleaseSubsurface: Bool { releaser != nil }
    public var subsurfaceReleaseCount: Int { releaser?.releaseCount ?? 0 }
    /// The library's window's release subsurface (nil: none, or the program's surface).
    var releaser: HeldCommitReleaser? { (paced as? WaylandWindow)?.heldCommitReleaser }
    /// Commits made to release a held timed commit (0 while none was held; more than 1 when a
    /// release was held too).
    public internal(set) var releaseCommitCount = 0
    /// Refreshes whose commit was timed a whole link interval ahead (a preferred rate below the
    /// refresh; see `WaylandRefreshScheduler`), and the index of the first of them.
    public internal(set) var stridedRefreshCount = 0
    public internal(set) var firstStridedRefreshIndex: UInt64?
    /// Commits given a target time, and FIFO barriers set (for tests).
    public internal(set) var timedCommitCount = 0
    public internal(set) var fifoBarrierCount = 0
    /// Times the rhythm was forgotten because the surface's output or its mode changed.
    public internal(set) var outputChangeCount = 0
    /// Feedback requests given up because the compositor never answered them (their slot reused).
    public internal(set) var lostFeedbackCount = 0

    var connection: WaylandConnection { paced.connection }
    var frameCallback: OpaquePointer?
    var committedDuringDispatch = false
    var watchdog: DispatchSourceTimer?
    /// The held-commit rule's one-shot timer (made once), and whether it is armed.
    var heldCommitTimer: MainQueueTimer?
    /// Under low latency, the timer that performs a refresh at its planned start, and that refresh.
    var delayTimer: MainQueueTimer?
    var delayedRefresh: WaylandRefreshScheduler.Refresh?
    var delayedStart = MonotonicInstant.zero
    /// Refreshes performed at a planned start later than their frame event (low latency).
    public internal(set) var delayedRefreshCount = 0
    var isHeldCommitTimerArmed = false
    /// Whether the surface was on an output at some point (leaving every output then means hidden).
    var hasBeenOnOutput = false
    var clockOffset = ClockOffset.identity
    var clockDomain: ClockDomain = .monotonic
    /// The feedback proxies, by the scheduler's slot. Fixed capacity, no allocation per frame.
    var feedbackProxies: ContiguousArray<OpaquePointer?>
    /// Whether the current stall was logged (its fallback ticks, its end).
    var stallLogged = false
    /// The output whose rhythm is being learned, and its advertised period.
    var currentOutput: ObjectIdentifier?
    var currentAdvertised: Nanoseconds
    /// On the program's surface: the latest refresh's requests, until the program's commit
    /// (``willCommit()``) sends them or a tick withdraws them; the tick's timer and the refresh
    /// it is for; refreshes in a row without a commit, and whether that was warned about.
    var stashedRefresh: WaylandRefreshScheduler.Refresh?
    var uncommittedTimer: MainQueueTimer?
    var uncommittedIndex: UInt64 = 0
    var refreshesWithoutCommit = 0
    /// Whether a commit timestamp was set on the program's surface that no announced commit has
    /// applied yet.
    var timestampPending = false
    var commitHookWarned = false
    /// Called once instead of the source's own warning when ``missingCommitHookRefreshes``
    /// refreshes in a row passed without a commit through ``willCommit()`` (a wrapper names its own
    /// hook in its warning).
    public var onCommitHookMissing: (() -> Void)?
    /// Whether the surface is the program's (``willCommit()`` announces its commits).
    public var isProgramSurface: Bool { !paced.commitsItself }
    /// What its handlers were registered as, with the window and the connection.
    private var handlerIDs = (suspended: 0, outputs: 0, afterDispatch: 0, error: 0)

    /// A source for the library's own window: it commits the empty state itself when no link drew.
    public convenience init(window: WaylandWindow, configuration: Configuration = Configuration()) {
        self.init(paced: window, configuration: configuration)
    }

    /// A source for a `wl_surface` the program owns (`surface`, a `wl_surface *` of the borrowed
    /// `connection`'s display, see ``WaylandConnection/init(borrowing:options:)``). The program
    /// calls ``willCommit()`` right before each call that commits the surface; the source never
    /// commits it. `usesFifo` and `usesCommitTiming`: the program leaves the surface's
    /// `wp_fifo_v1` and `wp_commit_timer_v1` to the library (the protocols allow one of each per
    /// surface, and a graphics stack may hold them: false unless the program knows they are free).
    public convenience init(
        programSurface surface: OpaquePointer, connection: WaylandConnection, usesFifo: Bool = false,
        usesCommitTiming: Bool = false, configuration: Configuration = Configuration()
    ) throws(WaylandError) {
        let foreign = try ForeignSurface(
            connection: connection, surface: surface, usesFifo: usesFifo, usesCommitTiming: usesCommitTiming)
        self.init(paced: foreign, configuration: configuration)
    }

    init(paced: any PacedSurface, configuration: Configuration) {
        self.paced = paced
        self.configuration = configuration
        let advertised =
            paced.outputs.first?.advertisedPeriod
            ?? paced.connection.outputs.first?.advertisedPeriod ?? .zero
        currentOutput = paced.outputs.first.map { ObjectIdentifier($0) }
        currentAdvertised = advertised
        let timesCommits = configuration.allowsCommitTiming && paced.commitTimer != nil
        scheduler = WaylandRefreshScheduler(
            configuration: .init(
                usesPresentation: paced.connection.hasPresentationTime,
                stallTimeout: configuration.stallTimeout,
                fallbackTickInterval: configuration.fallbackTickInterval,
                timesCommits: timesCommits,
                fallsBackFromHeldCommits: configuration.fallsBackFromHeldCommits,
                requiresVsyncForTimedCommits: configuration.requiresVsyncForTimedCommits),
            advertisedPeriod: advertised)
        if let first = paced.outputs.first { scheduler.outputChanged(to: first.gateKey, advertisedPeriod: advertised) }
        // mutter holds a timed commit made while its stage is idle, and a commit on a subsurface
        // releases it: the library's window gets one wherever it may time commits on mutter.
        if timesCommits, paced.connection.isMutter, let window = paced as? WaylandWindow {
            window.makeHeldCommitReleaser()
        }
        scheduler.latency = configuration.latency
        feedbackProxies = ContiguousArray(repeating: nil, count: WaylandRefreshScheduler.feedbackCapacity)
        if let clock = paced.connection.presentationClock {
            clockDomain = clock
            clockOffset = PresentationClock.offset(for: clock)
        }
        logTiming(advertised: advertised, timesCommits: timesCommits)
        dispatcher.onDemandChange = { [weak self] wanted in self?.demandChanged(wanted) }
        handlerIDs.suspended = paced.addSuspendedHandler { [weak self] suspended in self?.suspendedChanged(suspended) }
        handlerIDs.outputs = paced.addOutputsChangedHandler { [weak self] in self?.outputsChanged() }
        if paced.isSuspended { _ = scheduler.suspendedChanged(true, at: MonotonicInstant.now()) }
        handlerIDs.afterDispatch = paced.connection.addAfterDispatchHandler { [weak self] in self?.afterDispatch() }
        handlerIDs.error = paced.connection.addErrorHandler { [weak self] failure in self?.connectionFailed(failure) }
        error = paced.connection.error
        if error != nil { scheduler.connectionFailed() }
        if configuration.latency == .lowLatency {
            delayTimer = MainQueueTimer { [weak self] in self?.runDelayedRefresh() }
        }
    }

    /// Logs what timing the source has to work with (once, when it is made).
    private func logTiming(advertised: Nanoseconds, timesCommits: Bool) {
        let log = WaylandFrameSource.log
        if let clock = paced.connection.presentationClock {
            log.debug(
                """
                wp_presentation: presentation times on \(clock.description), converted to CLOCK_MONOTONIC \
                (offset \(clockOffset.nanoseconds) ns ± \(clockOffset.uncertainty) ns)
                """)
        } else if paced.connection.hasPresentationTime {
            log.debug("wp_presentation bound but the compositor named no clock: presentation times taken as CLOCK_MONOTONIC")
        } else {
            log.debug(
                """
                no wp_presentation: timestamps are estimates from frame callback arrival times \
                (provenance frameCallbackEstimate)
                """)
        }
        log.debug("advertised refresh period \(advertised) (targets use the measured period once known)")
        log.debug(
            """
            timing protocols in use: \(paced.connection.timingProtocols.joined(separator: ", "))\
            \(paced.commitTimer != nil && !configuration.allowsCommitTiming ? " (commit timing bound, not used by configuration)" : "")
            """)
        if timesCommits && configuration.requiresVsyncForTimedCommits {
            log.debug(
                """
                commit timing: commits are timed while the presentation feedback on the window's output carries VSYNC \
                (WaylandFrameSource.Configuration.requiresVsyncForTimedCommits)
                """)
        }
    }

    isolated deinit {
        stopWatchdog()
        heldCommitTimer?.cancel()
        delayTimer?.cancel()
        uncommittedTimer?.cancel()
        destroyPendingRequests()
        // Its handlers go with it (a long-lived connection would otherwise run one more no-op
        // after every dispatch for each frame source it ever had).
        paced.removeSuspendedHandler(handlerIDs.suspended)
        paced.removeOutputsChangedHandler(handlerIDs.outputs)
        paced.connection.removeAfterDispatchHandler(handlerIDs.afterDispatch)
        paced.connection.removeErrorHandler(handlerIDs.error)
    }

    /// Stops for good, now: timers, outstanding requests, and on the program's surface the
    /// library's objects on it (its surface wrapper, FIFO and commit-timing objects); the links
    /// are invalidated. Safe inside a callback (what runs after it finds the surface gone).
    public func close() {
        stopWatchdog()
        heldCommitTimer?.cancel()
        delayTimer?.cancel()
        uncommittedTimer?.cancel()
        stashedRefresh = nil
        delayedRefresh = nil
        destroyPendingRequests()
        frameCallback = nil
        for index in feedbackProxies.indices { feedbackProxies[index] = nil }
        (paced as? ForeignSurface)?.destroy()
        dispatcher.invalidateAll()
    }

    /// The program's surface was suspended (its xdg_toplevel's `suspended` state, or the toolkit's
    /// occluded one) or resumed: as the `suspended` state of the library's own window, no requests
    /// and no timer while suspended. Does nothing on the library's own window (the compositor tells it).
    public func setProgramSurfaceSuspended(_ suspended: Bool) {
        (paced as? ForeignSurface)?.setSuspended(suspended)
    }

    /// Tells the source the surface was committed with a frame (the EGL window's swap calls it):
    /// during a refresh it then commits no empty frame; from the first one on the surface has
    /// content, so a suspension holds back start refreshes too; and the commit's time, against
    /// the frame's presentation, teaches the deadline.
    public func noteCommit() {
        committedDuringDispatch = true
        scheduler.frameCommitted(at: MonotonicInstant.now())
    }
}

// Observed: mutter 48 suspends a window left without a buffer for 3 s, so a first frame held
// back by the suspension would never come, nor would the resume.
