import Dispatch
import DisplayLinkCore
import Glibc
import KernelCall
internal import FrameSchedulers
internal import CDRM

/// Refreshes from a `CLOCK_MONOTONIC` timer at the mode's exact period, for drivers without vblank
/// events (``DRMQuirks/noVblankEvents``): timestamps are the timer's schedule (`timer-fallback`
/// provenance), at most one flip per period. Every decision is ``KMSTimerPacer``'s.
@MainActor
final class TimerPacing: RefreshPacing {
    private unowned let display: DRMDisplay
    private var pacer: KMSTimerPacer
    private var timerFD: Int32 = -1
    private var timerSource: DispatchSourceRead?
    /// Feedback decided while a frame was submitted, delivered after the callback returns.
    private var pendingFeedback: PresentationFeedback?

    init(display: DRMDisplay, period: Nanoseconds, modeSet: Bool) {
        self.display = display
        pacer = KMSTimerPacer(period: period, modeSet: modeSet)
    }

    var kind: KMSPacing { .timer }
    var isModeSet: Bool { pacer.isModeSet }
    private var dispatcher: RefreshDispatcher { display.dispatcher }

    func sequence(extending sequence32: UInt32) -> UInt64 { UInt64(sequence32) }
    func displayFailed() {}
    /// The timer is not armed again while another VT has the display.
    func sessionDisabled() { pacer.stopped() }
    func sessionResumed() { pacer.sessionResumed() }
    func vblankEvent(sequence: UInt64, time: MonotonicInstant) {
        display.diagnostics.record(.init(sequence: sequence, time: time, kind: .vblank))
    }

    func stop() {
        timerSource?.cancel()
        timerSource = nil
        if timerFD >= 0 { close(timerFD) }
        timerFD = -1
    }

    func demandChanged(_ wanted: Bool) {
        guard display.isRunning, display.sessionActive else { return }
        guard wanted else {
            refreshesStopped()
            return
        }
        // A timer armed before (its expiry queued while refreshes were not wanted, or while another
        // VT had the display) may bring a refresh before the start runs: then it does not run.
        display.requestStart()
    }

    func startRefreshes() {
        if let event = pacer.start(now: MonotonicInstant.now(), refreshIndex: dispatcher.nextRefreshIndex) {
            runCallback(event)
        } else {
            armTimer()
        }
    }

    /// Nobody wants refreshes: no more callbacks, but a held frame is still shown at its tick (the
    /// timer fires once more for it).
    private func refreshesStopped() {
        if pacer.stopped() { armTimer() }
    }

    /// Arms the timer for the pacer's next tick, aimed early by its learned lateness (absolute,
    /// `CLOCK_MONOTONIC`).
    private func armTimer() {
        guard display.isRunning, let deadline = pacer.aimTimer(now: MonotonicInstant.now()) else { return }
        if timerFD < 0 {
            do {
                timerFD = try KernelCall.value { timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
            } catch {
                display.fail(.kernel(operation: "timerfd_create(CLOCK_MONOTONIC)", errno: error))
                return
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: timerFD, queue: .main)
            source.setEventHandler { [weak self] in
                onMainActor(self) { $0?.timerFired() }
            }
            timerSource = source
            source.resume()
        }
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(deadline.nanoseconds / 1_000_000_000)
        spec.it_value.tv_nsec = Int(deadline.nanoseconds % 1_000_000_000)
        if let refusal = KernelCall.status({ timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) }) {
            display.fail(.kernel(operation: "timerfd_settime", errno: refusal))
        }
    }

    private func timerFired() {
        var expirations: UInt64 = 0
        _ = read(timerFD, &expirations, 8)
        guard display.isRunning, display.sessionActive else { return }
        let now = MonotonicInstant.now()
        guard dispatcher.wantsRefreshes else {
            // Paused after presenting: the held frame is flipped at its tick, and nothing more.
            switch pacer.timerFiredWhileStopped(now: now) {
            case .flipHeld: flipHeldBuffer(decidedAt: now)
            case .armAgain: armTimer()
            case .idle: break
            }
            return
        }
        let tick = pacer.timerFired(now: now, refreshIndex: dispatcher.nextRefreshIndex)
        if tick.flipHeld { flipHeldBuffer(decidedAt: now) }
        if let event = tick.event {
            runCallback(event)
        } else {
            armTimer()  // woke before the tick
        }
    }

    private func runCallback(_ event: RefreshEvent) {
        dispatcher.dispatch(event)
        pacer.callbackReturned()
        if let feedback = pendingFeedback {
            pendingFeedback = nil
            dispatcher.deliver(feedback)
        }
        guard display.isRunning else { return }
        if dispatcher.wantsRefreshes { armTimer() } else { refreshesStopped() }
    }

    func submit(_ buffer: ScanoutBuffer) throws(DRMError) {
        let now = MonotonicInstant.now()
        switch pacer.frameSubmitted(now: now) {
        case .setMode:
            try display.setMode(with: buffer)
            pendingFeedback = pacer.modeSet(at: MonotonicInstant.now())
        case .flip:
            do { try display.queueFlip(buffer, decidedAt: now) } catch {
                guard case .kernel(_, .resourceBusy) = error else { throw error }
                // Busy (a commit of the CRTC still pending): this frame is dropped; the timer goes on.
                display.flipRefusedAsBusy()
                pendingFeedback = pacer.flipRefused()
            }
        case .hold(let discarded):
            if display.buffers.hold(buffer), let discarded { pendingFeedback = discarded }
        }
    }

    private func flipHeldBuffer(decidedAt time: MonotonicInstant) {
        guard let next = display.buffers.takeHeld() else { return }
        do { try display.queueFlip(next, decidedAt: time) } catch {
            guard case .kernel(_, .resourceBusy) = error else {
                display.fail(error)
                return
            }
            display.flipRefusedAsBusy()
            if let feedback = pacer.flipRefused() { dispatcher.deliver(feedback) }
        }
    }

    func flipCompleted(sequence32: UInt32, time: MonotonicInstant) {
        display.diagnostics.flipsCompleted += 1
        display.diagnostics.record(.init(sequence: 0, time: time, kind: .flip))
        display.buffers.flipCompleted()
        let now = MonotonicInstant.now()
        let completion = pacer.flipCompleted(at: time, now: now)
        // The completed flip's feedback first: a held frame refused as busy is the newer one.
        if let feedback = completion.feedback { dispatcher.deliver(feedback) }
        if completion.flipHeld { flipHeldBuffer(decidedAt: now) }
    }
}
