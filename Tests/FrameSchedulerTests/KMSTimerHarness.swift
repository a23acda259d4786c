import DisplayLinkCore
import FrameSchedulers

/// A simulated KMS driver without vblank events on virtual time around a ``KMSTimerPacer``,
/// doing what the `DRMDisplay` shell does in timer pacing, with a real ``RefreshDispatcher`` and
/// ``DisplayLink``. The timer fires `wakeLag(n)` after the deadline it was armed for (negative:
/// early); a flip submitted at `t` completes at `t + flipLatency(n)` (0: at once, as such drivers
/// do); the callback renders for `renderTime(n)` and presents unless `draws(n)` is false. A
/// callback or flip more than the pacer's largest wake allowance (a quarter period) before its
/// tick is a violation.
@MainActor
final class KMSTimerHarness: FrameSource {
    let dispatcher = RefreshDispatcher()
    var pacer: KMSTimerPacer
    var now: MonotonicInstant
    var link: DisplayLink?
    var renderTime: (Int) -> Nanoseconds = { _ in Nanoseconds(2_000_000) }
    var wakeLag: (Int) -> Nanoseconds = { _ in Nanoseconds(300_000) }
    var flipLatency: (Int) -> Nanoseconds = { _ in .zero }
    var draws: (Int) -> Bool = { _ in true }
    /// Called at the start of each callback with the harness itself, so that the closure needs no
    /// reference to it: the harness keeps the closure, and a closure that kept the harness would leak both.
    var onCallback: ((KMSTimerHarness, Int, DisplayLink) -> Void)?

    private(set) var events: [RefreshEvent] = []
    private(set) var frames: [DisplayFrame] = []
    /// When each callback ran (virtual time), parallel to `frames`.
    private(set) var callbackTimes: [MonotonicInstant] = []
    /// Times of the mode set and every flip submitted, and the period of the grid each counted for.
    private(set) var submissions: [MonotonicInstant] = []
    private(set) var flipPeriods: [UInt64] = []
    private(set) var presented: [UInt64: MonotonicInstant] = [:]
    private(set) var discarded: [UInt64] = []
    private(set) var timerWakes = 0
    private(set) var violations: [String] = []

    private var armed: MonotonicInstant?
    private var pendingFlip: MonotonicInstant?
    private var startRequested = false
    private var pendingFeedback: PresentationFeedback?

    init(period: Nanoseconds, start: MonotonicInstant) {
        pacer = KMSTimerPacer(period: period)
        now = start
        dispatcher.onDemandChange = { [weak self] wanted in
            if wanted { self?.startRequested = true } else { self?.pacer.stopped() }
        }
    }

    func start() {
        let link = DisplayLink(source: self, target: self) { harness, link in harness.callback(link) }
        link.presentationHandler = { [weak self] feedback in
            switch feedback.outcome {
            case .presented(let at, _): self?.presented[feedback.refreshIndex] = at
            case .discarded: self?.discarded.append(feedback.refreshIndex)
            }
        }
        self.link = link
    }

    /// Runs until the link has had `count` callbacks (or nothing more happens).
    func run(callbacks count: Int) {
        var steps = 0
        while frames.count < count, steps < 100_000 {
            steps += 1
            if startRequested {
                startRequested = false
                guard dispatcher.wantsRefreshes else { continue }
                if let event = pacer.start(now: now, refreshIndex: dispatcher.nextRefreshIndex) { runCallback(event) } else { arm() }
                continue
            }
            let wake = armed.map { $0 + wakeLag(timerWakes) }
            if let flip = pendingFlip, wake.map({ flip <= $0 }) ?? true {
                pendingFlip = nil
                now = max(now, flip)
                let completion = pacer.flipCompleted(at: flip, now: now)  // the event's time, read now
                if completion.flipHeld { submitFlip() }
                if let feedback = completion.feedback { dispatcher.deliver(feedback) }
            } else if let wake {
                armed = nil
                timerWakes += 1
                now = max(now, wake)
                guard dispatcher.wantsRefreshes else {
                    // As the shell: a frame held when the link paused is flipped at its tick.
                    switch pacer.timerFiredWhileStopped(now: now) {
                    case .flipHeld: submitFlip()
                    case .armAgain: arm()
                    case .idle: break
                    }
                    continue
                }
                let tick = pacer.timerFired(now: now, refreshIndex: dispatcher.nextRefreshIndex)
                if tick.flipHeld { submitFlip() }
                if let event = tick.event { runCallback(event) } else { arm() }
            } else {
                return
            }
        }
    }

    private func arm() { armed = pacer.aimTimer(now: now) }
    /// The largest wake allowance: how much earlier than its tick a wake may act.
    private var earliest: Nanoseconds { Nanoseconds(pacer.period.value / 4) }

    private func submitFlip() {
        if pendingFlip != nil { violations.append("a second flip submitted while one is pending at \(now)") }
        if let p = pacer.flipPeriod, now + earliest < pacer.time(ofTick: p) {
            violations.append("a flip at \(now) more than a quarter period before its tick \(pacer.time(ofTick: p))")
        }
        submissions.append(now)
        flipPeriods.append(pacer.flipPeriod ?? .max)
        pendingFlip = now + flipLatency(submissions.count)
    }

    private func runCallback(_ event: RefreshEvent) {
        if now + earliest < event.timestamp {
            violations.append("a callback at \(now) more than a quarter period before its tick \(event.timestamp)")
        }
        events.append(event)
        dispatcher.dispatch(event)
        pacer.callbackReturned()
        if let feedback = pendingFeedback {
            pendingFeedback = nil
            dispatcher.deliver(feedback)
        }
        if dispatcher.wantsRefreshes {
            arm()
        } else if pacer.stopped() {
            arm()  // the held frame is still shown at its tick
        }
    }

    private func callback(_ link: DisplayLink) {
        let n = frames.count
        frames.append(link.frame)
        callbackTimes.append(now)
        onCallback?(self, n, link)
        now = now + renderTime(n)
        guard draws(n) else { return }
        switch pacer.frameSubmitted(now: now) {
        case .setMode:
            submissions.append(now)
            pendingFeedback = pacer.modeSet(at: now)
        case .flip:
            submitFlip()
        case .hold(let stale):
            if let stale { pendingFeedback = stale }
        }
    }
}
