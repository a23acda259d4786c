import DisplayLinkCore
import FrameSchedulers
import Testing

/// The period while frames are presented less often than the display refreshes: a link at a
/// lower preferred rate (the refreshes it skips are empty commits whose feedback is discarded),
/// and a client slower than the display. Found on mutter 43 and 48 with a 30 Hz link on a 60 Hz
/// output: the period swung between 1 and 2 vblanks (`duration` alternating ≈17 and ≈33 ms).
@Suite("Wayland scheduler: the period at lower rates and with slow clients")
struct WaylandLowRateTests {
    static let p: Int64 = 16_666_667
    /// The compositor's vblanks.
    static func vblank(_ n: Int) -> Int64 { 20 * ms + Int64(n) * p }

    /// A link drawing every other refresh on a mutter-like compositor (depth 1): the callback for
    /// refresh r arrives 0.3 ms after vblank r−1; an even refresh's frame is presented at vblank r,
    /// an odd refresh's empty commit is discarded. `seq` for refresh r: `sequence(r)`.
    static func halfRate(refreshes: Int, sequence: (Int) -> UInt64) -> SchedulerScript {
        var script = SchedulerScript()
        script.start(at: 0)
        for r in 1..<refreshes {
            let previous = r - 1
            if previous % 2 == 0 {
                script.presented(
                    frame: UInt64(previous), at: vblank(previous), received: vblank(previous) + 300_000,
                    sequence: sequence(previous))
            } else {
                script.discarded(frame: UInt64(previous))
            }
            script.callback(at: vblank(r - 1) + 300_000)
        }
        return script
    }

    @Test(
        "half rate, seq counting the compositor's own frames (mutter 48 headless): the period stays one vblank",
        arguments: [false, true])
    func halfRateFrameCountingSeq(countsFrames: Bool) {
        // mutter 48 headless: seq + 1 per presented frame; a true vblank counter: seq = vblank.
        let script = Self.halfRate(refreshes: 40) { r in countsFrames ? UInt64(r / 2 + 1) : UInt64(r + 100) }
        for k in 3..<script.refreshes.count {
            #expect(script.refreshes[k].event.refreshPeriod.value == Self.p, "refresh \(k)")
        }
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("half rate without seq: the period stays one vblank")
    func halfRateNoSeq() {
        let script = Self.halfRate(refreshes: 40) { _ in 0 }
        for k in 3..<script.refreshes.count {
            #expect(script.refreshes[k].event.refreshPeriod.value == Self.p, "refresh \(k)")
        }
    }

    @Test("a client three vblanks slow (no seq): missed refreshes are not a new rhythm, the period stays the advertised one")
    func slowClient() {
        var script = SchedulerScript()
        script.start(at: 0)
        // Refresh k draws; its frame is presented 3 vblanks after the previous one.
        for k in 1..<30 {
            let shown = Self.vblank(3 * k)
            script.presented(frame: UInt64(k - 1), at: shown, received: shown + 300_000)
            script.callback(at: shown + 300_000)
        }
        for k in 0..<script.refreshes.count {
            #expect(script.refreshes[k].event.refreshPeriod.value == Self.p, "refresh \(k)")
        }
        #expect(invariantViolations(script).isEmpty, "\(invariantViolations(script))")
    }

    @Test("a real change of rhythm (1.5 advertised periods, weston headless) is still learned after eight rejections")
    func offGridRhythmStillLearned() {
        var script = SchedulerScript()
        script.start(at: 0)
        let q = Self.p * 3 / 2
        for k in 1..<30 {
            let shown = 20 * ms + Int64(k) * q
            script.presented(frame: UInt64(k - 1), at: shown, received: shown + 300_000)
            script.callback(at: shown + 300_000)
        }
        #expect(script.refreshes.last?.event.refreshPeriod.value == q)
    }
}
