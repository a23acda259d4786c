import DisplayLinkCore
import FrameSchedulers

/// A compositor with a vblank grid on virtual time that either honours commit targets or holds
/// timed commits the way mutter 48 or mutter 50 headless does, driving a ``WaylandRefreshScheduler``
/// like the shell (its held-commit timer at ``WaylandRefreshScheduler/heldCommitCheckTime``):
/// commits queue per surface in order; a "stage frame" at a vblank applies, from the head,
/// every commit that is untimed or whose target is not after that vblank, and stops at the first
/// one that is; the last applied frame with feedback is presented at the vblank (earlier ones
/// discarded), and the callback (if an applied commit asked for one) arrives with the feedback a
/// little after it.
///
/// Stage frames: an untimed commit made with nothing queued wakes the next vblank. A timed
/// commit, when honoured, wakes the first vblank at or after its target, and not before the
/// compositor got to it (`lateness` whole periods after it was made: a busy compositor reads
/// requests late). When holding (``holds``, after ``honouredBeforeHolding`` timed
/// commits, which the map animation's repaints let through), a timed commit made with nothing
/// queued wakes nothing (its frame is never scheduled); one made while another is queued wakes
/// the first vblank at or after its target when that is in the future (both mutters' frame
/// clocks schedule a frame for it), and, when due at once, the next vblank on mutter 48
/// (``Holding/mutter48``) but nothing on mutter 50 (``Holding/mutter50``: it is queued behind the
/// held one without waking the clock).
struct TimedCompositorModel {
    static let p: Int64 = 16_666_667
    /// Vblanks at `phase + j·p`.
    let phase: Int64 = 5 * ms
    let holds: Bool
    enum Holding { case mutter48, mutter50 }
    var holding = Holding.mutter48
    /// How many future-timed commits made behind a held one are held themselves (mutter 50, now
    /// and then): each wakes the next vblank, which applies the held commit before it, and then
    /// waits at the head of the queue with nothing to wake it.
    var releasesToHold = 0
    /// Release with a commit due at once, as c0c6cd3 did (the scheduler's release time ignored).
    var releasesDueNow = false
    let honouredBeforeHolding: Int
    /// Per stage frame: whole periods a honouring compositor takes to get to a commit (0 … 2), and the callback
    /// delivery latency after the vblank.
    var lateness: [Int64] = [0]
    var latencies: [Int64] = [300_000]
    let watchdogInterval: Int64
    let watchdogPhase: Int64
    var linkInterval = 1
    var countsSequence = true

    struct Commit {
        var frame: UInt64?
        var target: Int64?
        var madeAt: Int64
        var requestsCallback: Bool
        var wakeAt: Int64?
    }

    var script = SchedulerScript()
    var queue: [Commit] = []
    var now: Int64 = 0
    var timedCommits = 0
    var stageFrames = 0
    /// Refresh index → vblank it was presented at; the release commits made; when the fallback happened.
    var presentedAt: [UInt64: Int64] = [:]
    var releases: [Int64] = []
    var fallbackAt: Int64?
    /// The target of the first timed commit held (made while holding, not due at once, nothing queued).
    var firstHeldTarget: Int64?
    var callbackTimes: [Int64] = []
    /// When the compositor has read every request made so far (requests are read in order).
    var readUpTo: Int64 = 0
    /// The scheduler's held-commit timer (armed as the shell arms it: when idle).
    var heldTimer: Int64?

    init(
        holds: Bool, honouredBeforeHolding: Int = 0, commitTiming: Bool = true, fallsBack: Bool = true,
        watchdogInterval: Int64 = 500 * ms, watchdogPhase: Int64 = 0, fallbackTick: Int64? = nil
    ) {
        self.holds = holds
        self.honouredBeforeHolding = honouredBeforeHolding
        self.watchdogInterval = watchdogInterval
        self.watchdogPhase = watchdogPhase
        script.scheduler = WaylandRefreshScheduler(
            configuration: .init(
                stallTimeout: Nanoseconds(watchdogInterval),
                fallbackTickInterval: fallbackTick.map { Nanoseconds($0) },
                timesCommits: commitTiming, fallsBackFromHeldCommits: fallsBack),
            advertisedPeriod: Nanoseconds(Self.p))
    }

    func vblank(after time: Int64) -> Int64 {
        let j = (time - phase) / Self.p + 1
        return phase + max(0, j) * Self.p
    }

    func vblank(atOrAfter time: Int64) -> Int64 { vblank(after: time - 1) }

    mutating func commit(_ refresh: WaylandRefreshScheduler.Refresh) {
        let target = refresh.commitTarget.map { $0.nanoseconds - origin }
        var c = Commit(
            frame: refresh.feedbackSlot != nil ? refresh.index : nil, target: target, madeAt: now,
            requestsCallback: refresh.requestsFrameCallback)
        c.wakeAt = wake(for: c)
        queue.append(c)
    }

    mutating func release(at time: Int64) {
        var c = Commit(frame: nil, target: time, madeAt: now, requestsCallback: false)
        c.wakeAt = wake(for: c)
        queue.append(c)
        releases.append(now)
    }

    mutating func wake(for c: Commit) -> Int64? {
        let readAt = read()
        guard let target = c.target else {
            return queue.isEmpty ? vblank(after: readAt) : nil
        }
        timedCommits += 1
        if !holds || timedCommits <= honouredBeforeHolding {
            return max(vblank(atOrAfter: target), vblank(after: readAt))
        }
        if queue.isEmpty {
            if target <= c.madeAt { return vblank(after: c.madeAt) }
            if firstHeldTarget == nil { firstHeldTarget = target }
            return nil
        }
        if target > c.madeAt {
            if releasesToHold > 0 {
                releasesToHold -= 1
                return vblank(after: c.madeAt)
            }
            return vblank(atOrAfter: target)
        }
        return holding == .mutter48 ? vblank(after: c.madeAt) : nil
    }

    /// When the compositor reads a request made now: late processing (a busy compositor) reads it
    /// only some periods after it was made, and never before the requests made earlier.
    mutating func read() -> Int64 {
        let late = lateness[stageFrames % lateness.count] * Self.p
        readUpTo = max(readUpTo, now + late)
        return readUpTo
    }

    mutating func armHeldTimer() {
        if heldTimer == nil, let due = script.scheduler.heldCommitCheckTime { heldTimer = max(now, due.nanoseconds - origin) }
    }

    /// Runs until `end` (virtual ns after the origin).
    mutating func run(until end: Int64) {
        script.scheduler.linkFrameInterval = linkInterval
        script.start(at: 0)
        if let refresh = script.refreshes.last { commit(refresh) }
        var nextWatchdog = watchdogPhase + watchdogInterval
        armHeldTimer()
        while now < end {
            let stage = queue.compactMap(\.wakeAt).min() ?? .max
            let held = heldTimer ?? .max
            if stage <= min(nextWatchdog, held) {
                now = stage
                stageFrame(at: stage)
            } else if held <= nextWatchdog {
                now = held
                heldTimer = nil
                if case .fallBack(let release) = script.scheduler.heldCommitCheck(at: t(now)) {
                    if fallbackAt == nil { fallbackAt = now }
                    self.release(at: releasesDueNow ? now : release.nanoseconds - origin)
                }
            } else {
                now = nextWatchdog
                nextWatchdog += watchdogInterval
                let before = script.refreshes.count
                if case .fallbackTick = script.watchdog(at: now) {
                    commit(script.refreshes[before])
                }
            }
            armHeldTimer()
        }
    }

    mutating func stageFrame(at v: Int64) {
        stageFrames += 1
        var applied: [Commit] = []
        while let head = queue.first, head.madeAt < v, head.target.map({ $0 <= v }) ?? true {
            applied.append(queue.removeFirst())
        }
        // Wakes consumed by this frame.
        for i in queue.indices where queue[i].wakeAt.map({ $0 <= v }) ?? false { queue[i].wakeAt = nil }
        guard !applied.isEmpty else { return }
        let received = v + latencies[stageFrames % latencies.count]
        let withFeedback = applied.compactMap(\.frame)
        for (i, frame) in withFeedback.enumerated() {
            if i == withFeedback.count - 1 {
                script.presented(
                    frame: frame, at: v, received: received,
                    sequence: countsSequence ? UInt64((v - phase) / Self.p) + 1 : 0)
                presentedAt[frame] = v
            } else {
                script.discarded(frame: frame)
            }
        }
        if applied.contains(where: \.requestsCallback) {
            now = received
            callbackTimes.append(received)
            script.scheduler.linkFrameInterval = linkInterval
            if let refresh = script.callback(at: received) { commit(refresh) }
        }
    }
}
