import DisplayLinkCore
import FrameSchedulers

/// A compositor with a vblank grid on virtual time that either honours commit targets or holds
/// timed commits the way mutter 48 headless does, driving a ``WaylandRefreshScheduler`` like the
/// shell: commits queue per surface in order; a "stage frame" at a vblank applies, from the head,
/// every commit that is untimed or whose target is not after that vblank, and stops at the first
/// one that is; the last applied frame with feedback is presented at the vblank (earlier ones
/// discarded), and the callback (if an applied commit asked for one) arrives with the feedback a
/// little after it.
///
/// Stage frames: an untimed commit made with nothing queued wakes the next vblank. A timed
/// commit, when honoured, wakes the first vblank at or after its target, and not before the
/// compositor got to it (`lateness` whole periods after it was made). When holding (``holds``, after ``honouredBeforeHolding`` timed commits, which the
/// map animation's repaints let through): a timed commit due at once (target not after the time
/// it is made) or made while another commit is queued wakes the next vblank (mutter's frame clock
/// reschedules then), any other one wakes nothing (its frame is scheduled about an uptime away).
struct TimedCompositorModel {
    static let p: Int64 = 16_666_667
    /// Vblanks at `phase + j·p`.
    let phase: Int64 = 5 * ms
    let holds: Bool
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

    init(holds: Bool, honouredBeforeHolding: Int = 0, commitTiming: Bool = true, fallsBack: Bool = true,
         watchdogInterval: Int64 = 500 * ms, watchdogPhase: Int64 = 0, fallbackTick: Int64? = nil) {
        self.holds = holds
        self.honouredBeforeHolding = honouredBeforeHolding
        self.watchdogInterval = watchdogInterval
        self.watchdogPhase = watchdogPhase
        script.scheduler = WaylandRefreshScheduler(
            configuration: .init(stallTimeout: Nanoseconds(watchdogInterval),
                                 fallbackTickInterval: fallbackTick.map { Nanoseconds($0) },
                                 usesCommitTiming: commitTiming, fallsBackFromHeldCommits: fallsBack),
            advertisedPeriod: Nanoseconds(Self.p))
    }

    func vblank(after time: Int64) -> Int64 {
        let j = (time - phase) / Self.p + 1
        return phase + max(0, j) * Self.p
    }

    func vblank(atOrAfter time: Int64) -> Int64 { vblank(after: time - 1) }

    mutating func commit(_ refresh: WaylandRefreshScheduler.Refresh) {
        let target = refresh.commitTarget.map { $0.nanoseconds - origin }
        var c = Commit(frame: refresh.feedbackSlot != nil ? refresh.index : nil, target: target, madeAt: now,
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
        guard let target = c.target else {
            return queue.isEmpty ? vblank(after: c.madeAt) : nil
        }
        timedCommits += 1
        if !holds || timedCommits <= honouredBeforeHolding {
            // Late processing (a busy compositor): ready only some periods after the commit.
            let late = lateness[stageFrames % lateness.count] * Self.p
            return max(vblank(atOrAfter: target), vblank(after: c.madeAt + late))
        }
        if target <= c.madeAt || !queue.isEmpty { return vblank(after: c.madeAt) }
        if firstHeldTarget == nil { firstHeldTarget = target }
        return nil
    }

    /// Runs until `end` (virtual ns after the origin).
    mutating func run(until end: Int64) {
        script.scheduler.linkFrameInterval = linkInterval
        script.start(at: 0)
        if let refresh = script.refreshes.last { commit(refresh) }
        var nextWatchdog = watchdogPhase + watchdogInterval
        while now < end {
            let stage = queue.compactMap(\.wakeAt).min()
            if let stage, stage <= nextWatchdog {
                now = stage
                stageFrame(at: stage)
            } else {
                now = nextWatchdog
                nextWatchdog += watchdogInterval
                let before = script.refreshes.count
                switch script.watchdog(at: now) {
                case .commitTimingFallback(let release):
                    fallbackAt = now
                    self.release(at: release.nanoseconds - origin)
                case .fallbackTick:
                    commit(script.refreshes[before])
                default: break
                }
            }
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
                script.presented(frame: frame, at: v, received: received,
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
