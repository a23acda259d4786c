import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

@MainActor
@Suite("KMS timer pacing (drivers without vblank) on virtual time")
struct KMSTimerPacerTests {
    let period = Nanoseconds(16_683_217)  // 640x480@59.94
    let start = MonotonicInstant(nanoseconds: 5_000_000_000)

    func tick(_ k: Int64) -> MonotonicInstant { start + Nanoseconds(k * 16_683_217) }

    @Test(
        """
        a mode set that takes 40 periods (first buffers under emulation): the next tick is the newest passed, a restart with no invented \
        misses
        """
    )
    func slowModeSet() {
        let h = KMSTimerHarness(period: period, start: start)
        h.renderTime = { $0 == 0 ? Nanoseconds(period.value * 40 + 5_000_000) : Nanoseconds(2_000_000) }
        h.start()
        h.run(callbacks: 4)
        #expect(h.events.map(\.timestamp) == [0, 40, 41, 42].map { tick($0) })
        #expect(h.frames[1].delta == .zero && h.frames[1].missedFrames == 0)
        #expect(h.frames[2].delta == period && h.frames[3].delta == period)
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test(
        """
        back from another VT: a flip that completed unseen and a held frame are forgotten, so the next frame flips at its tick (it was \
        held for ever)
        """
    )
    func sessionResumed() {
        var pacer = KMSTimerPacer(period: period)
        guard pacer.start(now: tick(0), refreshIndex: 0) != nil else { Issue.record("no first refresh"); return }
        #expect(pacer.frameSubmitted(now: tick(0) + Nanoseconds(1_000_000)) == .setMode)
        _ = pacer.timerFired(now: tick(1), refreshIndex: 1)
        #expect(pacer.frameSubmitted(now: tick(1) + Nanoseconds(1_000_000)) == .hold(discarding: nil))  // for tick 2
        #expect(pacer.timerFired(now: tick(2), refreshIndex: 2).flipHeld)
        #expect(pacer.frameSubmitted(now: tick(2) + Nanoseconds(1_000_000)) == .hold(discarding: nil))
        // Away: the flip completes while the session is disabled (only the buffers move on) and
        // the shell drops the held frame; back, it sets the mode again.
        pacer.stopped()
        pacer.sessionResumed()
        #expect(pacer.flipping == nil && pacer.held == nil)
        _ = pacer.timerFired(now: tick(300), refreshIndex: 3)
        #expect(pacer.frameSubmitted(now: tick(300) + Nanoseconds(1_000_000)) == .hold(discarding: nil))
        #expect(pacer.timerFired(now: tick(301), refreshIndex: 4).flipHeld)
        #expect(pacer.flipping == 3)
        // Without it the frame would be held behind a flip that never completes.
        var stuck = KMSTimerPacer(period: period)
        _ = stuck.start(now: tick(0), refreshIndex: 0)
        _ = stuck.frameSubmitted(now: tick(0) + Nanoseconds(1_000_000))
        _ = stuck.timerFired(now: tick(1), refreshIndex: 1)
        _ = stuck.frameSubmitted(now: tick(1) + Nanoseconds(1_000_000))
        _ = stuck.timerFired(now: tick(2), refreshIndex: 2)  // flips frame 1, which never completes
        _ = stuck.frameSubmitted(now: tick(2) + Nanoseconds(1_000_000))
        stuck.stopped()
        _ = stuck.timerFired(now: tick(300), refreshIndex: 3)
        #expect(
            stuck.frameSubmitted(now: tick(300) + Nanoseconds(1_000_000))
                == .hold(discarding: PresentationFeedback(refreshIndex: 2, outcome: .discarded)))
        #expect(!stuck.timerFired(now: tick(301), refreshIndex: 4).flipHeld)
    }

    @Test(
        """
        flips that complete at once: one callback per tick, timestamps exactly start + k·period, timer provenance, no sequence, exact \
        deltas, one flip per period; once the timer's lateness is learned each frame is shown exactly at its target
        """
    )
    func steady() {
        let h = KMSTimerHarness(period: period, start: start)
        h.start()
        h.run(callbacks: 10)
        #expect(h.frames.count == 10)
        #expect(h.events.map(\.timestamp) == (0..<10).map { tick($0) })
        #expect(h.events.allSatisfy { $0.provenance == .timerFallback && $0.sequence == nil && $0.refreshPeriod == period })
        #expect(h.events.map(\.targetTimestamp) == (1...10).map { tick($0) })
        // Tick 0 is the start; tick 1, the first after the mode set, starts the rhythm again.
        #expect(h.events[0].followsStall && h.events[1].followsStall && h.events.dropFirst(2).allSatisfy { !$0.followsStall })
        #expect(h.frames.map(\.delta) == [.zero, .zero] + Array(repeating: period, count: 8))
        #expect(h.frames.allSatisfy { $0.missedFrames == 0 && $0.provenance == .timerFallback && $0.duration == period })
        #expect(zip(h.frames, h.frames.dropFirst()).allSatisfy { $1.sequence == $0.sequence + 1 })
        // The mode set at frame 0's present; then each frame is held for its target tick and flipped
        // when the timer wakes for it, before that tick's callback. The timer wakes 0.3 ms after
        // the time it is aimed for: the first wake (for tick 1) teaches that, and from then on it is
        // aimed 0.3 ms early, so the flips and callbacks fall exactly on the ticks.
        #expect(h.pacer.wakeAllowance == Nanoseconds(300_000))
        #expect(h.callbackTimes == [tick(0), tick(1) + Nanoseconds(300_000)] + (2..<10).map { tick($0) })
        #expect(h.submissions == [tick(0) + Nanoseconds(2_000_000)] + (2..<10).map { tick($0) })
        // Frame 0 is on screen when the mode set returns; the others at their target.
        #expect(h.presented[0] == tick(0) + Nanoseconds(2_000_000))
        for i in 1..<8 { #expect(h.presented[h.frames[i].refreshIndex] == h.frames[i].targetTimestamp) }
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test("a timer that wakes 2.5 periods late: the newest tick passed, two missed, still on the grid; an early wake changes nothing")
    func lateAndEarlyWakes() {
        let h = KMSTimerHarness(period: period, start: start)
        h.wakeLag = { n in
            switch n {
            case 3: Nanoseconds(period.value * 5 / 2)
            case 5: Nanoseconds(-1_000_000)  // before the tick: no callback, armed again
            default: Nanoseconds(300_000)
            }
        }
        h.start()
        h.run(callbacks: 7)
        // Wakes 0,1,2 → ticks 1,2,3; wake 3 (late by 2.5 periods) → tick 6; wake 4 → 7; wake 5
        // early (no callback); wake 6 → 8.
        #expect(h.events.map(\.timestamp) == [0, 1, 2, 3, 6, 7, 8].map { tick($0) })
        #expect(h.frames[4].delta == period * 3 && h.frames[4].missedFrames == 2)
        #expect(h.frames[6].delta == period && h.frames[6].missedFrames == 0)
        #expect(h.timerWakes == 7)
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test(
        """
        flips that take 1.5 periods: a frame presented while one is pending is held, flipped in a later tick; at most one flip per tick; a \
        replaced held frame is discarded
        """
    )
    func slowFlips() {
        let h = KMSTimerHarness(period: period, start: start)
        h.flipLatency = { _ in Nanoseconds(period.value * 3 / 2) }
        h.start()
        h.run(callbacks: 12)
        #expect(h.events.map(\.timestamp) == (0..<12).map { tick($0) })  // the timer alone paces
        #expect(Set(h.flipPeriods).count == h.flipPeriods.count, "two flips in one period: \(h.flipPeriods)")
        #expect(h.submissions.count < h.frames.count)
        #expect(!h.discarded.isEmpty)
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test("paused and resumed: no callbacks while paused, the resume lands on the next tick of the same grid with a zero delta")
    func pauseResume() {
        let h = KMSTimerHarness(period: period, start: start)
        h.onCallback = { _, n, link in if n == 3 { link.isPaused = true } }
        h.start()
        h.run(callbacks: 4)
        #expect(h.frames.count == 4)
        h.run(callbacks: 5)
        #expect(h.frames.count == 4)  // paused: nothing more
        h.link?.isPaused = false
        h.run(callbacks: 6)
        #expect(h.events.map(\.timestamp) == [0, 1, 2, 3, 4, 5].map { tick($0) })
        #expect(h.events[4].followsStall && !h.events[5].followsStall)
        #expect(h.frames[4].delta == .zero && h.frames[5].delta == period)
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test("paused right after presenting: the held frame is still flipped at its target tick, and no callback runs until the resume")
    func pausedAfterPresenting() {
        let h = KMSTimerHarness(period: period, start: start)
        h.onCallback = { _, n, link in if n == 3 { link.isPaused = true } }  // pauses, then presents frame 3
        h.start()
        h.run(callbacks: 5)
        #expect(h.frames.count == 4)
        #expect(h.presented[h.frames[3].refreshIndex] == h.frames[3].targetTimestamp)
        #expect(h.pacer.held == nil && h.discarded.isEmpty)
        #expect(h.violations.isEmpty, "\(h.violations)")
    }

    @Test("a callback that draws nothing still ticks by the timer, with no flip")
    func idle() {
        let h = KMSTimerHarness(period: period, start: start)
        h.draws = { $0 == 0 }
        h.start()
        h.run(callbacks: 8)
        #expect(h.events.map(\.timestamp) == (0..<8).map { tick($0) })
        #expect(h.submissions.count == 1)  // the mode set only
    }

    @Test(
        """
        any wake lags, render times and flip latencies: every timestamp on the grid, one callback per tick at most and never more than a \
        quarter period before it, at most one flip per period of the grid, no frame shown more than a quarter period before its \
        target, delta and misses from the grid
        """
    )
    func invariants() async {
        // Wakes are never early here: an absolute CLOCK_MONOTONIC timerfd does not expire before its
        // deadline (a lag of -1 ns on every wake would re-arm the same deadline for ever; the
        // scripted test above checks that one early wake is harmless).
        await propertyCheck(
            count: 200, input: Gen.int64(in: 0...60_000_000).array(of: 1...20),
            Gen.int64(in: 0...40_000_000).array(of: 1...20), Gen.int64(in: 0...40_000_000).array(of: 1...20)
        ) { lags, renders, latencies in
            let h = KMSTimerHarness(period: period, start: start)
            h.wakeLag = { Nanoseconds(lags[$0 % lags.count]) }
            h.renderTime = { Nanoseconds(renders[$0 % renders.count]) }
            h.flipLatency = { Nanoseconds(latencies[$0 % latencies.count]) }
            h.start()
            h.run(callbacks: 60)
            #expect(h.frames.count == 60, "lags \(lags), renders \(renders), latencies \(latencies)")
            #expect(h.violations.isEmpty, "\(h.violations)")
            guard h.frames.count == 60 else { return }
            for (i, e) in h.events.enumerated() {
                #expect((e.timestamp - start).value % period.value == 0, "event \(i) off the grid")
                #expect(e.provenance == .timerFallback && e.sequence == nil)
            }
            // Frame 1 (the first tick after the mode set) restarts the rhythm.
            #expect(h.frames[1].delta == .zero && h.frames[1].missedFrames == 0)
            for i in 1..<h.frames.count {
                let a = h.frames[i - 1], b = h.frames[i]
                #expect(b.timestamp > a.timestamp)
                guard i >= 2 else { continue }
                #expect(b.delta == b.timestamp - a.timestamp)
                #expect(b.missedFrames == Int((b.timestamp - a.timestamp).value / period.value) - 1)
            }
            #expect(Set(h.flipPeriods).count == h.flipPeriods.count, "two flips in one period: \(h.flipPeriods)")
            // The same from the flips' times alone: a flip counts for the period its time plus at
            // most a quarter period is in, so flips two apart are more than ¾ period apart.
            let flips = Array(h.submissions.dropFirst())
            for i in flips.indices.dropLast(2) {
                #expect(flips[i + 2] - flips[i] > Nanoseconds(period.value * 3 / 4), "flips \(i) and \(i + 2)")
            }
            // No frame is shown more than the largest wake allowance before its target (frame 0
            // sets the mode at once).
            for f in h.frames.dropFirst() {
                guard let shown = h.presented[f.refreshIndex] else { continue }
                let target = f.targetTimestamp
                #expect(shown + Nanoseconds(period.value / 4) >= target, "frame \(f.refreshIndex)")
            }
            // Never faster than the period: callbacks ≤ ticks elapsed + 1.
            let elapsed = (h.callbackTimes.last! - start).value / period.value
            #expect(Int64(h.frames.count) <= elapsed + 1)
        }
    }
}
