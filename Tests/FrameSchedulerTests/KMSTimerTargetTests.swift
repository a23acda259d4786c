import DisplayLinkCore
import FrameSchedulers
import Testing

/// Targets from the render time, and a timer aimed by its lateness.
extension KMSTimerPacerTests {
    /// Whole periods from tick 0 to `time` (exact on the grid).
    func ticks(_ time: MonotonicInstant) -> Int64 { (time - start).value / period.value }

    @Test(
        """
        frames of 17.5 ms (a period and a bit): once the render time is known each targets two ticks ahead, the tick between brings \
        no callback, and each is shown exactly at its target with one missed refresh
        """
    )
    func framesLongerThanAPeriod() {
        let h = KMSTimerHarness(period: period, start: start)
        h.renderTime = { _ in Nanoseconds(17_500_000) }
        h.start()
        h.run(callbacks: 14)
        // Frame 0 sets the mode (17.5 ms: past tick 1); frame 1 has no render time yet and is
        // flipped late, when submitted; from frame 2 the targets are two ticks ahead.
        #expect(h.frames.map { ticks($0.timestamp) } == [0, 1] + (1...12).map { Int64($0) * 2 })
        #expect(h.frames.map { ticks($0.targetTimestamp) } == [1, 2] + (2...13).map { Int64($0) * 2 })
        #expect(h.presented[h.frames[1].refreshIndex] == tick(0) + Nanoseconds(35_000_000))
        // The first timer wake teaches its lateness (0.3 ms); after it, every frame is shown at
        // its target exactly.
        #expect(h.presented[h.frames[2].refreshIndex] == tick(4) + Nanoseconds(300_000))
        for i in 3..<12 {
            #expect(h.presented[h.frames[i].refreshIndex] == h.frames[i].targetTimestamp, "frame \(i)")
            #expect(h.frames[i].missedFrames == 1 && h.frames[i].delta == period * 2, "frame \(i)")
        }
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test(
        """
        one 40 ms frame among 2 ms ones: it is shown when submitted (nothing predicted it), the next is planned for it at once (three \
        ticks ahead), the plan comes back to every tick within 18 periods as the estimate decays once per tick planned over, and every \
        planned frame is shown at its target
        """
    )
    func oneSlowFrame() {
        let h = KMSTimerHarness(period: period, start: start)
        h.renderTime = { $0 == 6 ? Nanoseconds(40_000_000) : Nanoseconds(2_000_000) }
        h.start()
        h.run(callbacks: 40)
        #expect(h.presented[h.frames[6].refreshIndex] == h.callbackTimes[6] + Nanoseconds(40_000_000))
        let offsets = h.frames.map { ticks($0.targetTimestamp) - ticks($0.timestamp) }
        #expect(offsets[..<7].allSatisfy { $0 == 1 })
        #expect(offsets[7] == 3)
        #expect(zip(offsets[7...], offsets[8...]).allSatisfy { $0 >= $1 }, "\(offsets)")
        // The estimate decays once per tick a frame was planned over: back to every tick after
        // 18 periods (eight frames), not after 17 frames over 38 periods as with one step a frame.
        #expect(Array(offsets[7..<15]) == [3, 3, 2, 2, 2, 2, 2, 2], "\(offsets)")
        #expect(offsets[15...].allSatisfy { $0 == 1 }, "\(offsets)")
        for i in 7..<38 { #expect(h.presented[h.frames[i].refreshIndex] == h.frames[i].targetTimestamp, "frame \(i)") }
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test("a 200 ms stall is planned for as four periods at most")
    func stallIsCapped() {
        let h = KMSTimerHarness(period: period, start: start)
        h.renderTime = { $0 == 6 ? Nanoseconds(200_000_000) : Nanoseconds(2_000_000) }
        var estimateAfterStall: Nanoseconds?
        h.onCallback = { h, n, _ in if n == 7 { estimateAfterStall = h.pacer.renderTime.estimate } }
        h.start()
        h.run(callbacks: 10)
        #expect(h.frames.map { ticks($0.targetTimestamp) - ticks($0.timestamp) }[7] == 4)
        #expect(estimateAfterStall == period * 4)  // the sample was capped
    }

    @Test("a timer that wakes 10 ms late is aimed a quarter period early at most: flips land 10 ms less a quarter period after the tick")
    func allowanceIsCapped() {
        let h = KMSTimerHarness(period: period, start: start)
        h.wakeLag = { _ in Nanoseconds(10_000_000) }
        h.start()
        h.run(callbacks: 8)
        let quarter = Nanoseconds(period.value / 4)
        #expect(h.pacer.wakeAllowance == quarter)
        for i in 3..<6 {
            #expect(h.presented[h.frames[i].refreshIndex] == h.frames[i].targetTimestamp + Nanoseconds(10_000_000) - quarter)
        }
    }

    @Test("a frame presented outside a callback (after the callback returned) teaches no render time and is held for the next tick")
    func presentOutsideCallback() {
        var pacer = KMSTimerPacer(period: period)
        _ = pacer.start(now: tick(0), refreshIndex: 0)
        #expect(pacer.frameSubmitted(now: tick(0) + Nanoseconds(2_000_000)) == .setMode)
        pacer.callbackReturned()
        let event = pacer.timerFired(now: tick(1), refreshIndex: 1).event
        #expect(event?.targetTimestamp == tick(2))
        #expect(pacer.frameSubmitted(now: tick(1) + Nanoseconds(2_000_000)) == .hold(discarding: nil))
        #expect(pacer.renderTime.estimate == Nanoseconds(2_000_000))
        pacer.callbackReturned()
        // Long after, outside any callback: no 89-period sample, held for the tick after the last.
        #expect(pacer.timerFired(now: tick(2), refreshIndex: 2).flipHeld)
        pacer.callbackReturned()
        _ = pacer.flipCompleted(at: tick(2), now: tick(2))
        let action = pacer.frameSubmitted(now: tick(2) + Nanoseconds(period.value / 2))
        #expect(action == .hold(discarding: nil))
        #expect(pacer.renderTime.estimate == Nanoseconds(2_000_000))
    }
}
