import Dispatch
import DisplayLinkCore
import SystemPackage
internal import FrameSchedulers

/// Refreshes from the kernel's vblank events: each page flip's completion (or a queued vblank
/// event when nothing was drawn) brings the next callback; a late frame's successor starts at
/// once. Every decision is ``KMSFrameScheduler``'s; this class makes the kernel calls it asks for.
@MainActor
final class VblankPacing: RefreshPacing {
    private unowned let display: DRMDisplay
    private var scheduler: KMSFrameScheduler
    /// Runs ``startNextFrame()`` on the main queue when data is added: made once, so a late
    /// frame's early start allocates nothing (a block given to `DispatchQueue.main.async` is
    /// allocated on every call).
    private var startNextSource: DispatchSourceUserDataAdd?
    private var nextCallbackPending = false
    private var lastFlipSequence32: UInt32?
    /// Frames in flight as last logged, and whether idle ticks (nothing drawn) are running.
    private var loggedDepth = 1
    private var idling = false

    /// Runs a callback planned to start later (low latency): made once, so planning one
    /// allocates nothing; the refresh it runs, and when it was planned to start.
    private var delayTimer: MainQueueTimer?
    private var delayedEvent: (event: RefreshEvent, planned: MonotonicInstant)?

    init(display: DRMDisplay, period: Nanoseconds, latency: LatencyPolicy) {
        self.display = display
        scheduler = KMSFrameScheduler(period: period)
        scheduler.latency = latency
        if latency == .lowLatency {
            delayTimer = MainQueueTimer { [weak self] in self?.runDelayedCallback() }
        }
        let source = DispatchSource.makeUserDataAddSource(queue: .main)
        source.setEventHandler { [weak self] in
            onMainActor(self) { $0?.startNextFrame() }
        }
        startNextSource = source
        source.resume()
    }

    var kind: KMSPacing { .vblank }
    var isModeSet: Bool { scheduler.isModeSet }
    private var dispatcher: RefreshDispatcher { display.dispatcher }

    func sequence(extending sequence32: UInt32) -> UInt64 {
        KMSFrameScheduler.extend(sequence32, after: scheduler.lastSequence)
    }

    func stop() {
        startNextSource?.cancel()
        startNextSource = nil
        delayTimer?.cancel()
        delayTimer = nil
        delayedEvent = nil
    }

    func displayFailed() { scheduler.stop() }
    func sessionDisabled() { scheduler.cancelCurrentVblank() }
    func sessionResumed() { scheduler.sessionResumed() }

    // MARK: Frames

    func submit(_ buffer: ScanoutBuffer) throws(DRMError) {
        let action = scheduler.frameSubmitted(now: MonotonicInstant.now())
        if scheduler.pipeline.depth != loggedDepth { logDepthChange() }
        if idling {
            idling = false
            DRMDisplay.log.debug("idle ticks end: frames flip again")
        }
        switch action {
        case .setMode:
            try display.setMode(with: buffer)
            queueVblank()
        case .hold(let discarded):
            // Not reached with a frame already held: no callback runs while one is.
            if display.buffers.hold(buffer), let discarded { dispatcher.deliver(discarded) }
        case .flip:
            _ = try flip(buffer)
        case .flipAndStartNext:
            if try flip(buffer) { startNextFrameSoon() }
        }
    }

    /// Queues the flip; false when the kernel refused it as busy (`EBUSY`: a commit of the CRTC
    /// is still pending, none of this display's). That frame is dropped, not the display: its
    /// feedback says discarded, and the callback, ending as one that drew nothing, asks for the
    /// next vblank's event (outside a callback, the one queued when it drew nothing is on its way).
    private func flip(_ buffer: ScanoutBuffer) throws(DRMError) -> Bool {
        do {
            try display.queueFlip(buffer)
            return true
        } catch {
            guard case .kernel(_, .resourceBusy) = error else { throw error }
            display.flipRefusedAsBusy()
            if let feedback = scheduler.flipRefused() { dispatcher.deliver(feedback) }
            return false
        }
    }

    private func logDepthChange() {
        loggedDepth = scheduler.pipeline.depth
        if loggedDepth == 2 {
            DRMDisplay.log.debug(
                """
                frames in flight 1→2: a frame missed its vblank; the next is drawn while the flip is pending \
                (one more period of latency)
                """)
        } else {
            DRMDisplay.log.debug(
                "frames in flight 2→1: \(FlipPipeline.fastFramesToReturn) frames in a row submitted within ¾ period of their vblank")
        }
    }

    /// The vblank this frame was meant for has passed: run the callback for that vblank (read
    /// from the kernel) from the event loop, so the next frame is drawn while this one's flip is
    /// pending.
    ///
    /// Only for the vblank right after the late frame's own: its flip was queued after that
    /// one, so it cannot have completed yet. A later vblank may already carry the flip's
    /// completion, still unread; then its event brings the next callback instead.
    private func startNextFrameSoon() {
        guard !nextCallbackPending, let startNextSource else { return }
        nextCallbackPending = true
        startNextSource.add(data: 1)
    }

    private func startNextFrame() {
        nextCallbackPending = false
        guard display.isRunning, display.sessionActive, dispatcher.wantsRefreshes, scheduler.wantsCurrentVblank,
            let current = display.crtc.currentVblank()
        else {
            scheduler.cancelCurrentVblank()
            return
        }
        // After the read: an event waiting may be the flip completing at this very vblank.
        let eventPending = display.crtc.hasPendingEvent
        display.diagnostics.record(.init(sequence: current.sequence, time: current.time, kind: .current))
        if let event = scheduler.currentVblank(
            sequence: current.sequence, at: current.time, eventPending: eventPending,
            refreshIndex: dispatcher.nextRefreshIndex, now: MonotonicInstant.now())
        {
            runCallback(event)
        }
    }

    // MARK: Refreshes

    func demandChanged(_ wanted: Bool) {
        guard wanted, display.isRunning, display.sessionActive, !scheduler.isWaitingForEvent else { return }
        display.requestStart()
    }

    func startRefreshes() {
        // A start supersedes a planned callback still waiting for its time (demand went off and
        // on again meanwhile): its refresh would be dispatched besides the new one.
        if delayedEvent != nil {
            delayedEvent = nil
            delayTimer?.cancel()
        }
        // Before the mode set: the CRTC's current vblank, if it is running (a console on it).
        var current: (sequence: UInt64, time: MonotonicInstant)?
        if !scheduler.isModeSet, let vblank = display.crtc.currentVblank(), vblank.time.nanoseconds > 0 {
            display.diagnostics.record(.init(sequence: vblank.sequence, time: vblank.time, kind: .current))
            current = vblank
        }
        switch scheduler.start(now: MonotonicInstant.now(), refreshIndex: dispatcher.nextRefreshIndex, currentVblank: current) {
        case .none: break
        case .queueVblank: queueVblank()  // a vblank event restarts the rhythm
        case .dispatch(let event): runCallback(event)  // nothing on screen yet: its frame sets the mode
        }
    }

    /// Queues a vblank event for the next vblank (the scheduler already counts it as on its way).
    private func queueVblank() {
        guard display.sessionActive else { return }
        guard let refusal = display.crtc.queueVblank(token: display.eventToken) else {
            display.diagnostics.idleTicks += 1
            return
        }
        if refusal == .notSupported || refusal == .invalidArgument {
            // The mode is set, so the CRTC is on: the driver has no vblank events.
            display.vblankRefusal = refusal
            display.switchToTimerPacing(reason: "drmCrtcQueueSequence refused (\(refusal))")
        } else if !display.lostMasterToSeat(refusal) {
            display.fail(.kernel(operation: "drmCrtcQueueSequence", errno: refusal))
        }
    }

    func flipCompleted(sequence32: UInt32, time: MonotonicInstant) {
        display.diagnostics.flipsCompleted += 1
        // Two flips cannot complete at one vblank: a counter that does not move is no counter.
        defer { lastFlipSequence32 = sequence32 }
        if lastFlipSequence32 == sequence32 {
            display.diagnostics.record(.init(sequence: UInt64(sequence32), time: time, kind: .flip))
            display.buffers.flipCompleted()
            display.switchToTimerPacing(reason: "two page flips completed at vblank \(sequence32)")
            return
        }
        let outcome = scheduler.flipCompleted(sequence32: sequence32, at: time)
        display.diagnostics.record(.init(sequence: scheduler.lastSequence, time: time, kind: .flip))
        // The flipped frame is on screen from this vblank; a held frame follows it at once.
        display.buffers.flipCompleted()
        if outcome.flipHeld, let next = display.buffers.takeHeld() {
            do { try display.queueFlip(next) } catch {
                guard case .kernel(_, .resourceBusy) = error else {
                    display.fail(error)
                    return
                }
                // The held frame is dropped; no event is on its way: the next vblank's brings
                // the next callback.
                display.flipRefusedAsBusy()
                // The flip just completed is the older frame: its feedback first.
                if let feedback = outcome.feedback { dispatcher.deliver(feedback) }
                if let feedback = scheduler.flipRefused() { dispatcher.deliver(feedback) }
                guard display.isRunning, display.sessionActive, dispatcher.wantsRefreshes else { return }
                scheduler.idleVblankQueued()
                queueVblank()
                return
            }
        }
        follow(outcome)
    }

    func vblankEvent(sequence: UInt64, time: MonotonicInstant) {
        display.diagnostics.record(.init(sequence: sequence, time: time, kind: .vblank))
        follow(scheduler.vblankEvent(sequence: sequence, at: time))
    }

    private func follow(_ outcome: KMSFrameScheduler.EventOutcome) {
        if let feedback = outcome.feedback { dispatcher.deliver(feedback) }
        guard display.isRunning, display.sessionActive, dispatcher.wantsRefreshes else { return }
        switch outcome.next {
        case .none: break
        case .queueVblank:
            scheduler.idleVblankQueued()
            queueVblank()
        case .callback:
            let now = MonotonicInstant.now()
            let event = scheduler.beginCallback(refreshIndex: dispatcher.nextRefreshIndex, now: now)
            if let start = scheduler.plannedStart(for: event, now: now), let delayTimer {
                // Low latency: the callback runs at its planned start (no flip is pending, so no
                // kernel event comes before it).
                delayedEvent = (event, start)
                delayTimer.schedule(at: start, now: now)
            } else {
                runCallback(event)
            }
        }
    }

    private func runDelayedCallback() {
        guard let (event, planned) = delayedEvent else { return }
        delayedEvent = nil
        guard display.isRunning, display.sessionActive else { return }
        scheduler.callbackStarted(at: MonotonicInstant.now(), plannedFor: planned)
        runCallback(event)
    }

    private func runCallback(_ event: RefreshEvent) {
        dispatcher.dispatch(event)
        guard display.isRunning, display.sessionActive else { return }
        switch scheduler.callbackEnded(wantsRefreshes: dispatcher.wantsRefreshes) {
        case .none:
            break
        case .startAgain(let time):
            startAgain(at: time)
        case .queueVblank:
            if !idling {
                idling = true
                DRMDisplay.log.debug("idle ticks start: nothing drawn, the next vblank is queued (drmCrtcQueueSequence) instead of a flip")
            }
            queueVblank()  // nothing drawn: tick on the next vblank without flipping
        }
    }

    /// Before the first frame was drawn: the next refresh starts at `time` (one period after the
    /// callback that drew nothing), unless another refresh ran first.
    private func startAgain(at time: MonotonicInstant) {
        let index = dispatcher.nextRefreshIndex
        let wait = max(0, (time - MonotonicInstant.now()).value)
        DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.dispatcher.nextRefreshIndex == index, self.display.isRunning, self.display.sessionActive,
                    self.dispatcher.wantsRefreshes, !self.scheduler.isModeSet
                else { return }
                if case .dispatch(let event) = self.scheduler.start(now: MonotonicInstant.now(), refreshIndex: index) {
                    self.runCallback(event)
                }
            }
        }
    }
}
