import DisplayLinkCore
import FrameSchedulers
import Testing

/// Virtual time: nanoseconds after an arbitrary origin of 1 s.
let origin: Int64 = 1_000_000_000
let ms: Int64 = 1_000_000
func t(_ nanoseconds: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: origin &+ nanoseconds) }

/// Drives a ``WaylandRefreshScheduler`` like the shell does, on virtual time, and records what it
/// emits and what the compositor reported.
struct SchedulerScript {
    typealias Refresh = WaylandRefreshScheduler.Refresh
    var scheduler: WaylandRefreshScheduler
    var refreshes: [Refresh] = []
    var delivered: [PresentationFeedback] = []
    /// Every presentation time reported (in any feedback).
    var reported: Set<Int64> = []
    /// Outstanding feedback: refresh index → slot.
    var slotOfFrame: [UInt64: Int] = [:]
    var watchdogActions: [WaylandRefreshScheduler.WatchdogAction] = []

    init(
        usesPresentation: Bool = true, advertised: Nanoseconds = Nanoseconds(16_666_667),
        stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = nil
    ) {
        scheduler = WaylandRefreshScheduler(
            configuration: .init(
                usesPresentation: usesPresentation, stallTimeout: stallTimeout,
                fallbackTickInterval: fallbackTickInterval),
            advertisedPeriod: advertised)
    }

    var events: [RefreshEvent] { refreshes.map(\.event) }
    var timestamps: [Int64] { refreshes.map { $0.event.timestamp.nanoseconds - origin } }
    var sequences: [UInt64] { refreshes.map { $0.event.sequence ?? 0 } }
    var targets: [Int64] { refreshes.map { ($0.event.targetTimestamp?.nanoseconds ?? 0) - origin } }
    var provenances: [TimestampProvenance] { refreshes.map(\.event.provenance) }

    /// Whether each refresh's target draws (commits content), as a link on a surface does.
    var draws = true
    /// When set, each frame is committed this long after its refresh and the scheduler told the
    /// time (``WaylandRefreshScheduler/frameCommitted(at:)``); nil: told only that it was.
    var commitAfter: Int64?
    /// Refreshes whose frames take this long instead of ``commitAfter`` (a slow frame), by index.
    var slowFrames: [Int: Int64] = [:]

    /// When each refresh's callback started (its arrival, or its planned start under low
    /// latency), when it arrived, and when its frame was committed (with ``commitAfter``).
    var starts: [Int64] = []
    var arrivals: [Int64] = []
    /// How late the timer runs the planned start of refresh N (0: on time).
    var wakeDelay: (Int) -> Int64 = { _ in 0 }
    /// When each refresh's frame was presented, by refresh index.
    var presentedTimes: [UInt64: Int64] = [:]
    var commits: [Int64] = []

    private mutating func record(_ refresh: Refresh?, at time: Int64) {
        guard let refresh else { return }
        refreshes.append(refresh)
        let planned = scheduler.plannedStart(for: refresh, now: t(time))
        let start = planned.map { $0.nanoseconds - origin + wakeDelay(refreshes.count - 1) } ?? time
        starts.append(start)
        arrivals.append(time)
        scheduler.callbackStarted(at: t(start), plannedFor: planned)
        if draws {
            if let drawn = slowFrames[refreshes.count - 1] ?? commitAfter {
                commits.append(start + drawn)
                scheduler.frameCommitted(at: t(start + drawn))
            } else {
                scheduler.contentCommitted()
            }
        }
        if let slot = refresh.feedbackSlot {
            // A slot given up by the scheduler: its old frame's feedback will never be matched.
            for (frame, old) in slotOfFrame where old == slot { slotOfFrame[frame] = nil }
            slotOfFrame[refresh.index] = slot
        }
    }

    /// A link starts wanting refreshes at `time`; the start refresh runs at once (as if the main
    /// queue ran it immediately). Returns whether a start was scheduled.
    @discardableResult
    mutating func start(at time: Int64) -> Bool {
        let scheduled = scheduler.demandChanged(true, at: t(time))
        if scheduled { record(scheduler.startDue(at: t(time)), at: time) }
        return scheduled
    }

    mutating func stop(at time: Int64) {
        _ = scheduler.demandChanged(false, at: t(time))
    }

    /// A frame callback arrives alone in its batch.
    @discardableResult
    mutating func callback(at time: Int64) -> Refresh? {
        scheduler.frameCallbackDone(at: t(time))
        let refresh = scheduler.eventsDispatched()
        record(refresh, at: time)
        return refresh
    }

    /// Feedback for the frame drawn in refresh `frame`: presented at `time`, received at `received`.
    mutating func presented(
        frame: UInt64, at time: Int64, received: Int64? = nil, sequence: UInt64 = 0,
        refresh: Nanoseconds = Nanoseconds(16_666_667), flags: PresentationFlags = [.vsync]
    ) {
        guard let slot = slotOfFrame.removeValue(forKey: frame) else { return }
        reported.insert(origin &+ time)
        presentedTimes[frame] = time
        if let feedback = scheduler.presented(
            slot: slot, at: t(time), receivedAt: t(received ?? time + ms),
            sequence: sequence, advertisedRefresh: refresh, flags: flags)
        {
            delivered.append(feedback)
        }
    }

    mutating func discarded(frame: UInt64) {
        guard let slot = slotOfFrame.removeValue(forKey: frame) else { return }
        if let feedback = scheduler.discarded(slot: slot) { delivered.append(feedback) }
    }

    @discardableResult
    mutating func watchdog(at time: Int64) -> WaylandRefreshScheduler.WatchdogAction {
        let action = scheduler.watchdog(now: t(time))
        watchdogActions.append(action)
        if case .fallbackTick(let refresh) = action { record(refresh, at: time) }
        return action
    }
}

/// The invariants every run must keep, as messages for what is broken (empty: all hold).
func invariantViolations(_ script: SchedulerScript) -> [String] {
    var problems: [String] = []
    var previous: RefreshEvent?
    for (i, refresh) in script.refreshes.enumerated() {
        let event = refresh.event
        if refresh.index != UInt64(i) { problems.append("refresh \(i): index \(refresh.index)") }
        if let previous {
            if event.timestamp <= previous.timestamp {
                problems.append("refresh \(i): timestamp \(event.timestamp.nanoseconds) after \(previous.timestamp.nanoseconds)")
            }
            if let s = event.sequence, let p = previous.sequence, s <= p {
                problems.append("refresh \(i): sequence \(s) after \(p)")
            }
        }
        if event.sequence == nil { problems.append("refresh \(i): no sequence") }
        if let target = event.targetTimestamp {
            if target <= event.timestamp {
                problems.append(
                    """
                    refresh \(i): target \(target.nanoseconds) not after \(event.timestamp.nanoseconds)
                    """)
            }
        } else {
            problems.append("refresh \(i): no target")
        }
        if event.provenance == .presentationFeedback && !script.reported.contains(event.timestamp.nanoseconds) {
            problems.append("refresh \(i): presentation-feedback timestamp \(event.timestamp.nanoseconds) never reported")
        }
        if event.refreshPeriod < WaylandRefreshScheduler.minimumPeriod {
            problems.append("refresh \(i): period \(event.refreshPeriod.value)")
        }
        previous = event
    }
    return problems
}

/// Runs `script`'s refreshes through the core (``CoreRun``) and checks the link's frames against
/// the invariants; returns the run for checks of its own.
@MainActor
func runThroughCore(_ script: SchedulerScript, sourceLocation: SourceLocation = #_sourceLocation) -> CoreRun {
    let core = CoreRun()
    core.run(script.events)
    #expect(core.violations.isEmpty, "\(core.violations)", sourceLocation: sourceLocation)
    return core
}

/// A frame source for the core alone: refresh events in, a real `RefreshDispatcher` and
/// `DisplayLink`, the link's frames out.
@MainActor
final class CoreRun: FrameSource {
    let dispatcher = RefreshDispatcher()
    var frames: [DisplayFrame] = []
    var followsStall: [Bool] = []
    private var link: DisplayLink?
    let stallPolicy: DisplayLink.StallPolicy

    init(stallPolicy: DisplayLink.StallPolicy = .zeroDelta) {
        self.stallPolicy = stallPolicy
        let link = DisplayLink(source: self, target: self) { run, link in run.frames.append(link.frame) }
        link.stallPolicy = stallPolicy
        self.link = link
    }

    func run(_ events: [RefreshEvent]) {
        for event in events {
            followsStall.append(event.followsStall)
            dispatcher.dispatch(event)
        }
    }

    /// The link's frames against the invariants (empty: all hold).
    var violations: [String] {
        var problems: [String] = []
        for (i, frame) in frames.enumerated() {
            if frame.targetTimestamp <= frame.timestamp { problems.append("frame \(i): target not after timestamp") }
            if frame.missedFrames < 0 { problems.append("frame \(i): missed \(frame.missedFrames)") }
            guard i > 0 else {
                if frame.delta != .zero { problems.append("frame 0: delta \(frame.delta.value)") }
                continue
            }
            let previous = frames[i - 1]
            // Equal only for an estimate (a source that will not go back with a time it got
            // wrong) or a restart (the vblank the last refresh had, taken up again).
            let exact = frame.provenance == .presentationFeedback || frame.provenance == .hardwareVBlank
            if frame.timestamp < previous.timestamp || (exact && !followsStall[i] && frame.timestamp == previous.timestamp) {
                problems.append("frame \(i): timestamp went back")
            }
            if frame.sequence <= previous.sequence { problems.append("frame \(i): sequence \(frame.sequence) after \(previous.sequence)") }
            if followsStall[i] {
                let expected = stallPolicy == .zeroDelta ? .zero : frame.timestamp - previous.timestamp
                if frame.delta != expected { problems.append("frame \(i): delta after a stall \(frame.delta.value)") }
                if frame.missedFrames != 0 { problems.append("frame \(i): missed after a stall \(frame.missedFrames)") }
            } else {
                if frame.delta != frame.timestamp - previous.timestamp { problems.append("frame \(i): delta \(frame.delta.value)") }
                let steps = frame.sequence &- previous.sequence
                if UInt64(frame.missedFrames) != steps &- 1 {
                    problems.append("frame \(i): missed \(frame.missedFrames) for \(steps) steps")
                }
            }
        }
        return problems
    }
}
