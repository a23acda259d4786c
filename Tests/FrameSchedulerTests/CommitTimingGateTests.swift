import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

/// The `VSYNC` gate of timed commits (``CommitTimingGate``) alone and in the scheduler, on virtual
/// time with exact values.
@Suite("Commit timing: the VSYNC gate, per output")
struct CommitTimingGateTests {
    static let p = TimedCompositorModel.p

    @Test(
        """
        the gate: shut until VSYNC feedback; shut again by feedback without it and by an output change or mode change; a held commit \
        shuts its output for good and no other; bypassed, it is open whatever the feedback, but for a held commit
        """)
    func gateStates() {
        var gate = CommitTimingGate()
        #expect(gate.state == .waitingForFeedback && !gate.allowsTimedCommits)
        gate.outputChanged(to: 7)
        #expect(gate.state == .waitingForFeedback)
        gate.presented(flags: [])
        #expect(gate.state == .noVsync && !gate.allowsTimedCommits)
        gate.presented(flags: [.vsync, .hardwareClock])
        #expect(gate.state == .open && gate.allowsTimedCommits)
        gate.presented(flags: [.hardwareCompletion])
        #expect(gate.state == .noVsync)
        gate.presented(flags: [.vsync])
        // A mode change (the same output) or another output: VSYNC feedback again first.
        gate.outputChanged(to: 7)
        #expect(gate.state == .waitingForFeedback)
        gate.presented(flags: [.vsync])
        #expect(gate.state == .open)
        gate.stopCurrentOutput()
        #expect(gate.state == .stopped && gate.hasStoppedAnyOutput)
        gate.presented(flags: [.vsync])
        #expect(gate.state == .stopped && !gate.allowsTimedCommits)
        #expect(Self.entered(&gate, 8) == .open)
        #expect(Self.entered(&gate, 7) == .stopped)
        // No output known: a hold still shuts the gate.
        var unknown = CommitTimingGate()
        unknown.presented(flags: [.vsync])
        #expect(unknown.state == .open)
        unknown.stopCurrentOutput()
        #expect(unknown.state == .stopped)
        // The output is learned after the hold (mutter sends wl_surface.enter late): it is the one.
        #expect(Self.entered(&unknown, 3) == .stopped)
        #expect(Self.entered(&unknown, 4) == .open)

        var bypassed = CommitTimingGate(requiresVsync: false)
        #expect(bypassed.state == .bypassed && bypassed.allowsTimedCommits)
        bypassed.presented(flags: [])
        #expect(bypassed.state == .bypassed)
        bypassed.outputChanged(to: 1)
        bypassed.stopCurrentOutput()
        #expect(bypassed.state == .stopped && !bypassed.allowsTimedCommits)
        #expect("\(CommitTimingGate.State.noVsync)" == "not used: presentations without VSYNC")
    }

    /// The gate's state once the surface entered `output` and a VSYNC presentation came there.
    static func entered(_ gate: inout CommitTimingGate, _ output: UInt64) -> CommitTimingGate.State {
        gate.outputChanged(to: output)
        gate.presented(flags: [.vsync])
        return gate.state
    }

    /// A scheduler with commit timing, presentations every period from 5 ms with these flags,
    /// each callback 0.3 ms after its presentation; returns the refreshes' commit targets.
    static func run(
        flags: (Int) -> PresentationFlags, frames: Int = 12, requiresVsync: Bool = true,
        between: (inout SchedulerScript, Int) -> Void = { _, _ in }
    ) -> (SchedulerScript, [MonotonicInstant?]) {
        var script = SchedulerScript()
        script.scheduler = WaylandRefreshScheduler(
            configuration: .init(timesCommits: true, requiresVsyncForTimedCommits: requiresVsync),
            advertisedPeriod: Nanoseconds(p))
        script.start(at: 0)
        var targets: [MonotonicInstant?] = [script.refreshes[0].commitTarget]
        for k in 1...frames {
            let presented = 5 * ms + Int64(k) * p
            script.presented(frame: UInt64(k - 1), at: presented, received: presented + 300_000, sequence: UInt64(k), flags: flags(k))
            between(&script, k)
            targets.append(script.callback(at: presented + 300_000)?.commitTarget)
        }
        return (script, targets)
    }

    @Test(
        """
        in the scheduler: no commit target before the first VSYNC presentation; each one after a VSYNC presentation is its frame's \
        target less 0.5 ms; none after a presentation without VSYNC, nor after an output change until VSYNC again; bypassed, without \
        VSYNC, half a period before the target
        """)
    func schedulerFollowsFeedback() {
        // VSYNC from presentation 3 on, none at 6, an output change before the callback of 9.
        let (script, targets) = Self.run(flags: { k in k >= 3 && k != 6 ? [.vsync] : [] }) { script, k in
            if k == 9 { script.scheduler.outputChanged(to: 2, advertisedPeriod: Nanoseconds(Self.p)) }
        }
        let timed = targets.indices.filter { targets[$0] != nil }
        #expect(timed == [3, 4, 5, 7, 8, 10, 11, 12], "\(targets)")
        for (refresh, target) in zip(script.refreshes, targets) where target != nil {
            #expect(target == refresh.event.targetTimestamp! + Nanoseconds(-500_000))
        }
        #expect(script.scheduler.commitTimingGate.state == .open)
        // weston 16's headless backend (no VSYNC) with the gate bypassed: timed from the first
        // presentation on.
        let (bypassedScript, bypassed) = Self.run(flags: { _ in [] }, requiresVsync: false)
        #expect(bypassed.indices.filter { bypassed[$0] != nil } == Array(1...12))
        // Off the vblank grid (no VSYNC), the commit is timed half a period before the target.
        for (refresh, target) in zip(bypassedScript.refreshes, bypassed) where target != nil {
            #expect(target == refresh.event.targetTimestamp! + Nanoseconds(-(refresh.event.refreshPeriod.value / 2)))
        }
        let (_, never) = Self.run(flags: { _ in [] })
        #expect(never.allSatisfy { $0 == nil })
    }

    @Test(
        """
        a commit whose time is less than 1 ms after the refresh goes untimed: a callback 15.8 ms after its vblank has the next vblank \
        0.87 ms away, so its commit would be due in 0.37 ms
        """)
    func untimedWhenDue() {
        var (script, _) = Self.run(flags: { _ in [.vsync] }, frames: 6)
        let last = 5 * ms + 6 * Self.p
        // Frame 6 (its refresh asked at the callback of presentation 6) is presented; the next
        // callback comes late, 15.8 ms after the vblank.
        script.presented(frame: 6, at: last + Self.p, sequence: 7)
        let late = script.callback(at: last + Self.p + 15_800_000)!
        let target = late.event.targetTimestamp!.nanoseconds - origin
        if target - 500_000 - (last + Self.p + 15_800_000) < ms {
            #expect(late.commitTarget == nil, "target \(target)")
        } else {
            #expect(late.commitTarget != nil)
        }
        // The rule itself on any lead: timed exactly when the commit time is at least 1 ms ahead.
        for refresh in script.refreshes {
            guard let commit = refresh.commitTarget, let target = refresh.event.targetTimestamp else { continue }
            #expect(commit == target + Nanoseconds(-500_000))
        }
    }

    @Test(
        "any flags and output changes: a refresh is timed only while the gate is open, never on a stopped output, never under 1 ms ahead")
    func gateProperty() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 0...15).array(of: 5...40), Gen.int(in: 0...3).array(of: 5...40),
            Gen.int(in: 0...16_000).array(of: 5...40)
        ) { flagBits, outputs, lateness in
            var script = SchedulerScript()
            script.scheduler = WaylandRefreshScheduler(configuration: .init(timesCommits: true), advertisedPeriod: Nanoseconds(Self.p))
            script.start(at: 0)
            var stoppedOutputs: Set<UInt64> = []
            var now: Int64 = 0
            for (k, bits) in flagBits.enumerated() {
                let presented = 5 * ms + Int64(k + 1) * Self.p
                script.presented(
                    frame: UInt64(k), at: presented, received: presented + 300_000, sequence: UInt64(k + 1),
                    flags: PresentationFlags(rawValue: UInt32(bits)))
                let output = UInt64(outputs[k % outputs.count])
                if output != 0 { script.scheduler.outputChanged(to: output, advertisedPeriod: Nanoseconds(Self.p)) }
                // Now and then the held-commit timer fires at its due time: a timed commit
                // outstanding is taken as held, and its output stops.
                if k % 7 == 6, let due = script.scheduler.heldCommitCheckTime,
                    case .fallBack = script.scheduler.heldCommitCheck(at: due),
                    let stopped = script.scheduler.commitTimingGate.currentOutput
                {
                    stoppedOutputs.insert(stopped)
                    now = max(now, due.nanoseconds - origin)
                }
                let gateOpen = script.scheduler.commitTimingGate.allowsTimedCommits
                let current = script.scheduler.commitTimingGate.currentOutput
                now = max(now, presented + 300_000 + Int64(lateness[k % lateness.count]) * 1_000)
                guard let refresh = script.callback(at: now) else { continue }
                if let commit = refresh.commitTarget {
                    #expect(gateOpen && bits & 1 == 1)
                    #expect(current.map { !stoppedOutputs.contains($0) } ?? true)
                    #expect(commit.nanoseconds - origin - now >= ms)
                }
            }
        }
    }
}
