import DisplayLinkCore
import FrameSchedulers

/// A simulated KMS display on virtual time around a ``KMSFrameScheduler``, doing what the
/// `DRMDisplay` shell does, with a real ``RefreshDispatcher`` and ``DisplayLink``.
///
/// Vblank `k` is at `origin + k·period` with the 64-bit sequence `firstSequence + k`. A page flip
/// queued at time `q` completes at the first vblank after `q` (plus `flipDelay` whole periods); a
/// queued vblank event arrives at the first vblank after it was queued. The link's callback
/// "renders" for `renderTime(n)` (virtual time passes) and presents, unless `draws(n)` is false.
@MainActor
final class KMSHarness: FrameSource {
    let dispatcher = RefreshDispatcher()
    let period: Nanoseconds
    let origin: MonotonicInstant
    let firstSequence: UInt64
    var scheduler: KMSFrameScheduler
    var now: MonotonicInstant
    var link: DisplayLink?

    /// The renderer: time from the callback's start to the present, and whether it draws (by callback number).
    var renderTime: (Int) -> Nanoseconds = { _ in Nanoseconds(2_000_000) }
    /// How late the timer runs the planned start of callback N (0: on time).
    var wakeDelay: (Int) -> Nanoseconds = { _ in .zero }
    var draws: (Int) -> Bool = { _ in true }
    /// Whether a callback before the mode set draws whatever `draws` says (false: it always draws,
    /// so the mode is set by the first callback).
    var mayDrawNothingFirst = false
    /// A renderer that presents no earlier than this long after its callback's vblank.
    var presentAfterVblank: Nanoseconds?
    /// Time the callback goes on after presenting (recording, bookkeeping).
    var afterPresent = Nanoseconds.zero
    /// Extra whole periods the kernel takes to complete the n-th flip.
    var flipDelay: (Int) -> Int = { _ in 0 }
    /// Called at the start of each callback, before rendering (e.g. to pause the link), with the
    /// harness itself, so that the closure needs no reference to it: the harness keeps the closure,
    /// and a closure that kept the harness would leak both.
    var onCallback: ((KMSHarness, Int, DisplayLink) -> Void)?

    /// What came out: the scheduler's refreshes, the link's frames, the feedback, and the vblanks
    /// the simulated kernel reported (sequence → time).
    private(set) var events: [RefreshEvent] = []
    private(set) var frames: [DisplayFrame] = []
    private(set) var presented: [UInt64: (time: MonotonicInstant, sequence: UInt64?)] = [:]
    private(set) var kernelVblanks: [UInt64: MonotonicInstant] = [:]
    private(set) var actions: [KMSFrameScheduler.SubmitAction] = []
    private(set) var flips = 0
    private(set) var vblankEventsQueued = 0
    private(set) var depths: [Int] = []
    /// When each callback started (later than its event under the low-latency policy).
    private(set) var callbackStarts: [MonotonicInstant] = []
    /// The planned starts under the low-latency policy, by the index in ``events`` of the
    /// refresh planned (callbacks that started at once have none).
    private(set) var plannedStarts: [Int: MonotonicInstant] = [:]
    /// The render budget and wake-up allowance each planned start was made with.
    private(set) var plannedWith: [Int: (budget: Nanoseconds, allowance: Nanoseconds)] = [:]
    /// Requests the legacy KMS API would refuse (a second pending flip or event).
    private(set) var violations: [String] = []

    private var pendingFlip: Int64?  // vblank index
    private var pendingVblank: Int64?  // vblank index
    private var startRequested = false
    private var startNextRequested = false
    /// When the scheduler asked to be started again (a callback before the mode set drew nothing).
    private var startAgainAt: MonotonicInstant?
    private var startAgainIndex: UInt64 = 0
    /// How many times it asked.
    private(set) var startsAgain = 0

    init(
        period: Nanoseconds = Nanoseconds(16_683_217), firstSequence: UInt64 = 1000,
        origin: MonotonicInstant = MonotonicInstant(nanoseconds: 5_000_000_000), startOffset: Nanoseconds = Nanoseconds(4_000_000)
    ) {
        self.period = period
        self.origin = origin
        self.firstSequence = firstSequence
        scheduler = KMSFrameScheduler(period: period)
        now = origin + startOffset
        dispatcher.onDemandChange = { [weak self] wanted in if wanted { self?.startRequested = true } }
    }

    func time(ofVblank k: Int64) -> MonotonicInstant { origin + period * Int(k) }

    /// The callbacks from `first` on (all but the last) whose frames were shown after their targets.
    func lateFrames(from first: Int) -> [Int] {
        (first..<max(first, frames.count - 1)).filter { k in
            presented[frames[k].refreshIndex].map { $0.time > frames[k].targetTimestamp } ?? false
        }
    }
    func sequence(ofVblank k: Int64) -> UInt64 { firstSequence &+ UInt64(k) }
    /// How late the kernel handles each vblank (its counter and events change then; the times it
    /// reports are the vblanks' own).
    var kernelLag = Nanoseconds.zero
    /// The first vblank the kernel handles after `t`, and the last it handled at or before it.
    func vblank(after t: MonotonicInstant) -> Int64 { (t - kernelLag - origin).value / period.value + 1 }
    func vblank(atOrBefore t: MonotonicInstant) -> Int64 { (t - kernelLag - origin).value / period.value }

    func start() {
        let link = DisplayLink(source: self, target: self) { harness, link in harness.callback(link) }
        link.presentationHandler = { [weak self] feedback in
            if case .presented(let at, let sequence) = feedback.outcome { self?.presented[feedback.refreshIndex] = (at, sequence) }
        }
        self.link = link
    }

    /// Runs until the link has had `count` callbacks (or nothing more happens, or `until` passes).
    func run(callbacks count: Int, until limit: MonotonicInstant? = nil) {
        var steps = 0
        while frames.count < count, steps < 100_000 {
            steps += 1
            if let limit, now >= limit { return }
            if startRequested {
                startRequested = false
                guard dispatcher.wantsRefreshes else { continue }
                switch scheduler.start(now: now, refreshIndex: dispatcher.nextRefreshIndex) {
                case .none: break
                case .queueVblank: queueVblank()
                case .dispatch(let event): runCallback(event)
                }
                continue
            }
            if startNextRequested {
                startNextRequested = false
                guard dispatcher.wantsRefreshes, scheduler.wantsCurrentVblank else { scheduler.cancelCurrentVblank(); continue }
                let k = vblank(atOrBefore: now)
                kernelVblanks[sequence(ofVblank: k)] = time(ofVblank: k)
                if let event = scheduler.currentVblank(
                    sequence: sequence(ofVblank: k), at: time(ofVblank: k),
                    eventPending: pendingFlip.map { $0 <= k } ?? false,
                    refreshIndex: dispatcher.nextRefreshIndex, now: now)
                {
                    runCallback(event)
                }
                continue
            }
            if let at = startAgainAt, pendingFlip == nil, pendingVblank == nil {
                startAgainAt = nil
                now = max(now, at)
                guard dispatcher.wantsRefreshes, dispatcher.nextRefreshIndex == startAgainIndex, !scheduler.isModeSet else { continue }
                if case .dispatch(let event) = scheduler.start(now: now, refreshIndex: dispatcher.nextRefreshIndex) {
                    runCallback(event)
                }
                continue
            }
            // The next kernel event.
            if let f = pendingFlip, pendingVblank.map({ f <= $0 }) ?? true {
                pendingFlip = nil
                now = max(now, time(ofVblank: f) + kernelLag)
                let seq = sequence(ofVblank: f)
                kernelVblanks[seq] = time(ofVblank: f)
                let outcome = scheduler.flipCompleted(sequence32: UInt32(truncatingIfNeeded: seq), at: time(ofVblank: f))
                if outcome.flipHeld { queueFlip() }
                follow(outcome)
            } else if let v = pendingVblank {
                pendingVblank = nil
                now = max(now, time(ofVblank: v) + kernelLag)
                let seq = sequence(ofVblank: v)
                kernelVblanks[seq] = time(ofVblank: v)
                follow(scheduler.vblankEvent(sequence: seq, at: time(ofVblank: v)))
            } else {
                return  // nothing on its way
            }
        }
    }

    /// Lets virtual time pass with nothing happening (e.g. while paused).
    func advance(by span: Nanoseconds) { now = now + span }

    private func follow(_ outcome: KMSFrameScheduler.EventOutcome) {
        if let feedback = outcome.feedback { dispatcher.deliver(feedback) }
        guard dispatcher.wantsRefreshes else { return }
        switch outcome.next {
        case .none: break
        case .queueVblank:
            scheduler.idleVblankQueued()
            queueVblank()
        case .callback:
            let event = scheduler.beginCallback(refreshIndex: dispatcher.nextRefreshIndex, now: now)
            if let planned = scheduler.plannedStart(for: event, now: now) {
                plannedStarts[events.count] = planned
                plannedWith[events.count] = (scheduler.planningBudget ?? .zero, scheduler.wakeAllowance)
                now = planned + wakeDelay(callbackStarts.count)  // the shell's timer fires then
                scheduler.callbackStarted(at: now, plannedFor: planned)
            }
            runCallback(event)
        }
    }

    private func runCallback(_ event: RefreshEvent) {
        events.append(event)
        dispatcher.dispatch(event)
        switch scheduler.callbackEnded(wantsRefreshes: dispatcher.wantsRefreshes) {
        case .none: break
        case .queueVblank: queueVblank()
        case .startAgain(let at):
            startsAgain += 1
            startAgainAt = at
            startAgainIndex = dispatcher.nextRefreshIndex
        }
    }

    private func queueVblank() {
        if pendingVblank != nil || pendingFlip != nil { violations.append("a vblank queued while an event is on its way at \(now)") }
        pendingVblank = vblank(after: now)
        vblankEventsQueued += 1
    }

    private func queueFlip() {
        if pendingFlip != nil { violations.append("a second flip queued while one is pending at \(now)") }
        flips += 1
        pendingFlip = vblank(after: now) + Int64(max(0, flipDelay(flips)))
    }

    private func callback(_ link: DisplayLink) {
        let n = frames.count
        frames.append(link.frame)
        callbackStarts.append(now)
        onCallback?(self, n, link)
        guard draws(n) || (!scheduler.isModeSet && !mayDrawNothingFirst) else { return }
        now = now + renderTime(n)
        if let delay = presentAfterVblank { now = max(now, link.frame.timestamp + delay) }
        let action = scheduler.frameSubmitted(now: now)
        actions.append(action)
        depths.append(scheduler.pipeline.depth)
        switch action {
        case .setMode: queueVblank()
        case .flip: queueFlip()
        case .flipAndStartNext:
            queueFlip()
            startNextRequested = true
        case .hold: break
        }
        now = now + afterPresent
    }
}
