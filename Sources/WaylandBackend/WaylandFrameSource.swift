import DisplayLinkCore
import Dispatch
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
/// `wp_presentation`, callback arrival times are the estimate. `targetTimestamp` comes from the
/// measured period and the learned presentation depth (``PresentationTimeline``); never from the
/// callback's `ms` argument, which compositors fill inconsistently.
///
/// When callbacks stop (surface hidden, feedback lost), a watchdog notices after
/// ``Configuration/stallTimeout``; it can tick the links at a low rate (``timerFallback``
/// provenance), and the first refresh after callbacks return is marked as following a stall.
/// While no link is active, nothing is requested and no timer runs.
@MainActor
public final class WaylandFrameSource: FrameSource {
    public struct Configuration: Sendable {
        /// No callback for this long means the compositor stopped pacing us.
        public var stallTimeout = Nanoseconds(500_000_000)
        /// While stalled, tick the links this often with `timerFallback` provenance (nil: don't).
        public var fallbackTickInterval: Nanoseconds?
        public init(stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = nil) {
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
        }
    }

    public let dispatcher = RefreshDispatcher()
    public let window: WaylandWindow
    public let configuration: Configuration
    /// What the source has learned about presentation times.
    public private(set) var timeline: PresentationTimeline
    /// `wl_surface.frame` requests sent (for tests: a paused link sends none).
    public private(set) var frameRequestCount = 0
    /// Commits made by the source itself because no target drew.
    public private(set) var emptyCommitCount = 0
    /// Whether callbacks have stopped arriving.
    public private(set) var isStalled = false
    /// The last error of the connection, once it failed.
    public private(set) var error: WaylandError?
    /// Presentation feedback events received (presented or discarded).
    public private(set) var feedbackCount = 0

    private var connection: WaylandConnection { window.connection }
    private let usesPresentation: Bool
    private var frameCallback: OpaquePointer?
    private var callbackArrival: MonotonicInstant?
    private var committedDuringDispatch = false
    private var lastActivity: MonotonicInstant = .zero
    private var lastDeliveredPresentation: MonotonicInstant?
    private var lastTimestamp: MonotonicInstant?
    private var returningFromStall = false
    private var startPending = false
    private var watchdog: DispatchSourceTimer?
    private var clockOffset = ClockOffset.identity
    private var clockDomain: ClockDomain = .monotonic

    /// Outstanding presentation feedbacks: the proxy, the refresh whose frame it reports on, and
    /// the newest presentation known when that frame was drawn. Fixed capacity, no allocation.
    private struct PendingFeedback {
        var proxy: OpaquePointer?
        var refreshIndex: UInt64 = 0
        var knownAtDraw: MonotonicInstant?
    }
    private var pending: ContiguousArray<PendingFeedback>

    public init(window: WaylandWindow, configuration: Configuration = Configuration()) {
        self.window = window
        self.configuration = configuration
        let advertised = window.outputs.first?.advertisedPeriod
            ?? window.connection.outputs.first?.advertisedPeriod ?? .zero
        timeline = PresentationTimeline(advertisedPeriod: advertised)
        usesPresentation = window.connection.hasPresentationTime
        pending = ContiguousArray(repeating: PendingFeedback(), count: 16)
        if let clock = window.connection.presentationClock {
            clockDomain = clock
            clockOffset = PresentationClock.offset(for: clock)
        }
        dispatcher.onDemandChange = { [weak self] wanted in self?.demandChanged(wanted) }
        window.connection.addAfterDispatchHandler { [weak self] in self?.afterDispatch() }
        window.connection.addErrorHandler { [weak self] failure in self?.connectionFailed(failure) }
        error = window.connection.error
    }

    isolated deinit {
        stopWatchdog()
        destroyPendingRequests()
    }

    /// Tells the source the surface was committed during this refresh (the EGL window's swap
    /// calls it), so it does not commit an empty frame.
    public func noteCommit() {
        committedDuringDispatch = true
    }

    // MARK: Demand

    private func demandChanged(_ wanted: Bool) {
        guard error == nil else { return }
        if wanted {
            lastActivity = MonotonicInstant.now()
            startWatchdog()
            // Start with a refresh now, from the main queue (not inside the link's init or
            // setter): the first frame maps the surface, and the compositor paces from there.
            guard frameCallback == nil, !startPending else { return }
            startPending = true
            DispatchQueue.main.async { [weak self] in
                MainActor.assumeIsolated {
                    guard let self else { return }
                    self.startPending = false
                    guard self.dispatcher.wantsRefreshes, self.frameCallback == nil, self.error == nil else { return }
                    self.runRefresh(arrival: MonotonicInstant.now(), firstAfterStart: true)
                }
            }
        } else {
            stopWatchdog()
        }
    }

    // MARK: The refresh

    private func afterDispatch() {
        guard let arrival = callbackArrival else { return }
        callbackArrival = nil
        guard dispatcher.wantsRefreshes else { return }
        runRefresh(arrival: arrival, firstAfterStart: false)
    }

    private func runRefresh(arrival: MonotonicInstant, firstAfterStart: Bool) {
        lastActivity = arrival
        let followsStall = returningFromStall || isStalled
        isStalled = false
        returningFromStall = false

        let timestamp: MonotonicInstant
        let provenance: TimestampProvenance
        var sequence: UInt64?
        if usesPresentation, let latest = timeline.latest, latest != lastDeliveredPresentation {
            timestamp = latest
            provenance = .presentationFeedback
            sequence = timeline.latestSequence
            lastDeliveredPresentation = latest
        } else if usesPresentation, let estimate = timeline.extrapolatedPresentation(now: arrival),
                  estimate > (lastTimestamp ?? .zero) {
            timestamp = estimate
            provenance = .frameCallbackEstimate
        } else if !usesPresentation && !firstAfterStart {
            timeline.recordPresentation(at: arrival)
            timestamp = arrival
            provenance = .frameCallbackEstimate
        } else {
            timestamp = max(arrival, (lastTimestamp ?? .zero) + Nanoseconds(1))
            provenance = .frameCallbackEstimate
        }
        // Refreshes are counted from timestamps only once the period is measured: an advertised
        // refresh (weston headless: 16.7 ms, presenting every ~26 ms) would invent missed frames.
        if sequence == nil && !timeline.isPeriodMeasured {
            sequence = dispatcher.lastSequence &+ 1
        }
        lastTimestamp = timestamp

        requestNextFrame()
        committedDuringDispatch = false
        let event = RefreshEvent(
            timestamp: timestamp,
            sequence: sequence,
            refreshPeriod: timeline.period,
            targetTimestamp: timeline.predictTarget(now: arrival),
            provenance: provenance,
            followsStall: followsStall && !firstAfterStart
        )
        dispatcher.dispatch(event)
        guard error == nil else { return }
        if !committedDuringDispatch {
            // Nothing drawn: commit the frame request alone so the compositor keeps pacing us.
            wl_surface_commit(window.surface)
            emptyCommitCount += 1
        }
        // EGL may have read events for our queue while swapping: handle them, then flush.
        connection.dispatchPending()
    }

    private func requestNextFrame() {
        guard frameCallback == nil else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let callback = wl_surface_frame(window.surface)
        wl_callback_add_listener(callback, WaylandFrameSource.callbackListener, me)
        frameCallback = callback
        frameRequestCount += 1
        guard usesPresentation, let presentation = connection.presentation else { return }
        // The feedback reports on the frame drawn in the refresh about to be dispatched.
        guard let slot = pending.firstIndex(where: { $0.proxy == nil }) else { return }
        let feedback = wp_presentation_feedback(presentation, window.surface)
        wp_presentation_feedback_add_listener(feedback, WaylandFrameSource.feedbackListener, me)
        pending[slot] = PendingFeedback(proxy: feedback, refreshIndex: dispatcher.nextRefreshIndex,
                                        knownAtDraw: timeline.latest)
    }

    // MARK: Events

    private func frameDone(_ callback: OpaquePointer?) {
        wl_callback_destroy(callback)
        if callback == frameCallback { frameCallback = nil }
        // Handled after the whole batch: presentation feedback in the same batch counts.
        callbackArrival = MonotonicInstant.now()
    }

    private func presented(_ proxy: OpaquePointer?, seconds: UInt64, nanoseconds: UInt32,
                           refresh: UInt32, sequence: UInt64) {
        guard let slot = takePending(proxy) else { return }
        feedbackCount += 1
        let now = MonotonicInstant.now()
        if clockDomain != .monotonic, clockOffset.isStale(at: now) {
            clockOffset = PresentationClock.offset(for: clockDomain)
        }
        let raw = Int64(truncatingIfNeeded: seconds) &* 1_000_000_000 &+ Int64(nanoseconds)
        let time = clockOffset.monotonic(fromSource: raw)
        let vblank: UInt64? = sequence == 0 ? nil : sequence
        timeline.recordPresentation(at: time, sequence: vblank, advertisedRefresh: Nanoseconds(Int64(refresh)))
        timeline.recordOutcome(knownAtDraw: slot.knownAtDraw, presentedAt: time)
        dispatcher.deliver(PresentationFeedback(refreshIndex: slot.refreshIndex,
                                                outcome: .presented(at: time, sequence: vblank)))
    }

    private func discarded(_ proxy: OpaquePointer?) {
        guard let slot = takePending(proxy) else { return }
        feedbackCount += 1
        dispatcher.deliver(PresentationFeedback(refreshIndex: slot.refreshIndex, outcome: .discarded))
    }

    private func takePending(_ proxy: OpaquePointer?) -> PendingFeedback? {
        wp_presentation_feedback_destroy(proxy)
        guard let index = pending.firstIndex(where: { $0.proxy == proxy }) else { return nil }
        let entry = pending[index]
        pending[index] = PendingFeedback()
        return entry
    }

    // MARK: Stalls and failure

    private func startWatchdog() {
        guard watchdog == nil else { return }
        let interval = configuration.fallbackTickInterval ?? configuration.stallTimeout
        let timer = DispatchSource.makeTimerSource(queue: .main)
        let nanos = Int(clamping: interval.value)
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos),
                       leeway: .nanoseconds(nanos / 10))
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.watchdogFired() }
        }
        watchdog = timer
        timer.resume()
    }

    private func stopWatchdog() {
        watchdog?.cancel()
        watchdog = nil
    }

    private func watchdogFired() {
        guard error == nil, dispatcher.wantsRefreshes else { return }
        let now = MonotonicInstant.now()
        guard now - lastActivity >= configuration.stallTimeout else { return }
        if !isStalled {
            isStalled = true
            returningFromStall = true
        }
        guard configuration.fallbackTickInterval != nil else { return }
        // Keep the frame request outstanding so the compositor can resume pacing us.
        requestNextFrame()
        dispatcher.dispatch(RefreshEvent(timestamp: now, refreshPeriod: timeline.period,
                                         targetTimestamp: now + timeline.period, provenance: .timerFallback))
        connection.flush()
    }

    private func connectionFailed(_ failure: WaylandError) {
        error = failure
        stopWatchdog()
        frameCallback = nil
        for index in pending.indices { pending[index] = PendingFeedback() }
        dispatcher.invalidateAll()
    }

    private func destroyPendingRequests() {
        guard error == nil else { return }
        if let frameCallback { wl_callback_destroy(frameCallback) }
        frameCallback = nil
        for entry in pending where entry.proxy != nil { wp_presentation_feedback_destroy(entry.proxy) }
    }

    // MARK: Listener trampolines

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandFrameSource {
        Unmanaged<WaylandFrameSource>.fromOpaque(data!).takeUnretainedValue()
    }

    private nonisolated(unsafe) static let callbackListener = WaylandListeners.make(wl_callback_listener(
        done: { data, callback, _ in
            // The `ms` argument is deliberately ignored: see the type's notes.
            nonisolated(unsafe) let callback = callback
            let object = WaylandFrameSource.from(data)
            MainActor.assumeIsolated { object.frameDone(callback) }
        }
    ))

    private nonisolated(unsafe) static let feedbackListener = WaylandListeners.make(wp_presentation_feedback_listener(
        sync_output: { _, _, _ in },
        presented: { data, feedback, secondsHigh, secondsLow, nanoseconds, refresh, sequenceHigh, sequenceLow, _ in
            nonisolated(unsafe) let feedback = feedback
            let object = WaylandFrameSource.from(data)
                MainActor.assumeIsolated {
                object.presented(
                    feedback, seconds: UInt64(secondsHigh) << 32 | UInt64(secondsLow), nanoseconds: nanoseconds,
                    refresh: refresh, sequence: UInt64(sequenceHigh) << 32 | UInt64(sequenceLow))
            }
        },
        discarded: { data, feedback in
            nonisolated(unsafe) let feedback = feedback
            let object = WaylandFrameSource.from(data)
            MainActor.assumeIsolated { object.discarded(feedback) }
        }
    ))
}
