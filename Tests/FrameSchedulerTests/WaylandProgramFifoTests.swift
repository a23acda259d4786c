import DisplayLinkCore
import FrameSchedulers
import Testing

/// Low latency on a surface whose program's stack (Mesa's Vulkan WSI in FIFO mode) makes its own
/// FIFO barrier: each commit waits until the one before it was presented. The library sets no
/// barrier and no commit time of its own, so nothing holds a commit until its target.
@Suite("Wayland low latency under the program's own FIFO")
struct WaylandProgramFifoTests {
    static let period: Int64 = 16_666_667

    struct Run {
        var script: SchedulerScript
        /// The vblank each frame was shown at.
        var shown: [Int64]
    }

    /// A kwin-like compositor (vblanks every ``period`` from 0) and a program whose commits carry
    /// a FIFO barrier: a commit is applied when the one before it was presented (at once when it
    /// was already), and shown at the first vblank whose latch, `latch` before it, comes at or
    /// after that; its frame callback comes at that latch and its feedback at the vblank. The
    /// first commit maps the window: it is shown no earlier than `mapping` after it. The frame
    /// callback of refresh k in `lateCallbacks` comes that much after its latch. The program draws
    /// for `render`; with `contentBefore` the surface had content before the link's first frame.
    static func run(
        latch: Int64 = 3 * ms, render: Int64 = 200_000, mapping: Int64 = 100 * ms, frames: Int = 60,
        lateCallbacks: [Int: Int64] = [:], contentBefore: Bool = false
    ) -> Run {
        var script = SchedulerScript()
        if contentBefore { script.scheduler.contentCommitted() }
        script.scheduler.latency = .lowLatency
        script.commitAfter = render
        script.start(at: 0)
        var shown: [Int64] = []
        var feedback: [(frame: UInt64, at: Int64)] = []
        for k in 0..<frames {
            guard let committed = script.commits.last else { break }
            let applied = max(committed, shown.last ?? committed)
            let earliest = k == 0 ? committed + mapping : applied + latch
            let vblank = (earliest + period - 1) / period * period
            shown.append(vblank)
            // Feedback is received 0.1 ms after its vblank: what came before the callback first.
            let called = vblank - latch + (lateCallbacks[k] ?? 0)
            while let first = feedback.first, first.at + 100_000 <= called {
                script.presented(frame: first.frame, at: first.at, received: first.at + 100_000)
                feedback.removeFirst()
            }
            script.callback(at: called)
            feedback.append((UInt64(k), vblank))
        }
        for f in feedback { script.presented(frame: f.frame, at: f.at, received: f.at + 100_000) }
        return Run(script: script, shown: shown)
    }

    static func target(_ refresh: WaylandRefreshScheduler.Refresh) -> Int64 {
        (refresh.event.targetTimestamp?.nanoseconds ?? 0) - origin
    }

    /// The refreshes from `from` on (all but the last) whose frames were shown a vblank or more
    /// before their targets.
    static func earlyRefreshes(_ run: Run, from: Int = 0) -> [Int] {
        (from..<run.script.refreshes.count - 1).filter { run.shown[$0] <= target(run.script.refreshes[$0]) - period / 2 }
    }

    @Test(
        """
        Mesa's FIFO on kwin (latch 3 ms, callbacks at the latch, 0.2 ms to draw), the first commit shown 100 ms later (the window \
        mapped): that frame's miss teaches no deadline, so from refresh 5 (the period measured) each callback starts at the 8 ms \
        prior less the budget (1.2 ms) and the 2 ms wake allowance, 11.2 ms before its target, and every frame is shown at its \
        target. (Counted, the miss kept a 16.5 ms lower bound: a 17.97 ms bracketed lead, every callback starting at its arrival, \
        19.67 ms before its frame was shown, as under throughput.)
        """)
    func mappingMissTeachesNoDeadline() {
        let run = Self.run(frames: 60)
        #expect(invariantViolations(run.script).isEmpty)
        #expect(run.shown[0] == 116_666_669 && Self.target(run.script.refreshes[0]) == 16_666_667)
        for k in 5..<run.script.refreshes.count - 1 {
            let refresh = run.script.refreshes[k]
            let target = Self.target(refresh)
            #expect(
                refresh.event.deadline == FrameDeadline(time: t(target - 8 * ms), lead: Nanoseconds(8 * ms), provenance: .prior),
                "refresh \(k)")
            #expect(run.script.starts[k] == target - 11_200_000, "refresh \(k)")
            #expect(run.shown[k] == target, "refresh \(k)")
        }
    }

    @Test(
        """
        the same, the surface with content before the link's first frame (its miss counted: a 17.97 ms bracketed lead, callbacks \
        start at their arrivals), and refresh 20's frame callback 4 ms late, after its vblank: refreshes 21 and 22 start late for \
        targets a period too far, the program's FIFO queue empty, and their frames are shown a vblank early; that vblank's lead \
        (4.3 ms) is learned, and from refresh 23 every frame is shown at its target, each callback starting 7.5 ms before it. \
        (Counted at the target's lead, the early frames taught nothing: every frame from refresh 21 on was shown a vblank early, \
        4.5 ms after its callback's start.)
        """)
    func earlyPresentationTeachesItsLead() {
        let run = Self.run(frames: 60, lateCallbacks: [20: 4 * ms], contentBefore: true)
        #expect(invariantViolations(run.script).isEmpty)
        #expect(Self.earlyRefreshes(run, from: 2) == [21, 22])
        for k in 5...20 {
            let refresh = run.script.refreshes[k]
            #expect(refresh.event.deadline?.lead == Nanoseconds(17_966_667) && refresh.event.deadline?.provenance == .bracketed)
            #expect(run.script.starts[k] == run.script.arrivals[k] && run.shown[k] == Self.target(refresh), "refresh \(k)")
        }
        #expect(run.shown[21] == 466_666_676 && Self.target(run.script.refreshes[21]) == 483_333_343)
        for k in 23..<run.script.refreshes.count - 1 {
            let refresh = run.script.refreshes[k]
            let target = Self.target(refresh)
            #expect(
                refresh.event.deadline
                    == FrameDeadline(time: t(target - 4_300_000), lead: Nanoseconds(4_300_000), provenance: .sufficient),
                "refresh \(k)")
            #expect(run.script.starts[k] == target - 7_500_000, "refresh \(k)")
            #expect(run.shown[k] == target, "refresh \(k)")
        }
    }
}

@Suite("the submit deadline from a presentation before its target")
struct EarlyPresentationDeadlineTests {
    @Test(
        """
        a frame shown a period before its target made that vblank: its lead counts to its presentation (3.33 ms, not the 20 ms \
        to its target), below the lead that missed (16 ms), which is forgotten; one shown less than half a period early counts \
        to its target; one shown before its submission teaches nothing
        """)
    func earlyPresentationLead() {
        let p = Nanoseconds(16_666_667)
        func at(_ n: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: n) }
        var learner = SubmitDeadlineLearner()
        learner.prior = Nanoseconds(8 * ms)
        learner.record(submitted: at(0), target: at(16 * ms), presented: at(16 * ms + p.value), period: p)  // missed at 16 ms
        learner.record(submitted: at(100 * ms), target: at(120 * ms), presented: at(120 * ms), period: p)  // made at 20 ms
        #expect(learner.lead?.lead == Nanoseconds(18 * ms) && learner.lead?.provenance == .bracketed)
        // Committed 20 ms before its target, shown a period early: 3_333_333 ns after its commit.
        learner.record(submitted: at(200 * ms), target: at(220 * ms), presented: at(220 * ms - p.value), period: p)
        #expect(learner.sufficientLead == Nanoseconds(3_333_333))
        #expect(learner.insufficientLead == nil && learner.tooShortLead == nil)
        #expect(learner.lead?.lead == Nanoseconds(3_333_333) && learner.lead?.provenance == .sufficient)

        var close = SubmitDeadlineLearner()
        close.record(submitted: at(0), target: at(20 * ms), presented: at(20 * ms - p.value / 2 + 1), period: p)
        #expect(close.sufficientLead == Nanoseconds(20 * ms))
        var backwards = SubmitDeadlineLearner()
        backwards.record(submitted: at(50 * ms), target: at(70 * ms), presented: at(40 * ms), period: p)
        #expect(!backwards.hasOutcomes)
    }
}
