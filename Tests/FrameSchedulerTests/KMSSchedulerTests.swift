import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

/// The DRM/KMS decisions on virtual time, through a real RefreshDispatcher and DisplayLink:
/// exact values, then invariants under random render times, late flips, wraps and demand toggles.
@MainActor
@Suite("KMS frame scheduler on virtual time")
struct KMSSchedulerTests {
    let period = Nanoseconds(16_683_217)  // 640x480@59.94: htotal 800, vtotal 525, 25.175 MHz
    let fast = Nanoseconds(2_000_000)

    /// Every frame from `from` on: a vblank timestamp the kernel reported with its sequence,
    /// delta = the timestamp difference, missed = sequence step − 1, exact duration.
    func expectConsistent(_ h: KMSHarness, from first: Int = 2, sourceLocation: SourceLocation = #_sourceLocation) {
        for i in first..<h.frames.count {
            let a = h.frames[i - 1], b = h.frames[i]
            #expect(h.kernelVblanks[b.sequence] == b.timestamp, "frame \(i)", sourceLocation: sourceLocation)
            #expect(b.provenance == .hardwareVBlank, sourceLocation: sourceLocation)
            #expect(b.duration == period, sourceLocation: sourceLocation)
            #expect(b.sequence > a.sequence, "frame \(i)", sourceLocation: sourceLocation)
            #expect(b.delta == b.timestamp - a.timestamp, "frame \(i)", sourceLocation: sourceLocation)
            #expect(b.missedFrames == Int(b.sequence - a.sequence) - 1, "frame \(i)", sourceLocation: sourceLocation)
        }
        #expect(h.violations.isEmpty, "\(h.violations)", sourceLocation: sourceLocation)
    }

    /// `callbacks` run with frame 10 missing its vblank (drawn in a period and 3 ms), every other
    /// frame drawn in 2 ms.
    func runWithFrame10Late(callbacks: Int) -> KMSHarness {
        let h = KMSHarness(period: period)
        h.renderTime = { [period] n in n == 10 ? period + Nanoseconds(3_000_000) : Nanoseconds(2_000_000) }
        h.start()
        h.run(callbacks: callbacks)
        return h
    }

    /// Starts `s` at `t` and presents its first frame, which sets the mode.
    func startAndSetMode(
        _ s: inout KMSFrameScheduler, at t: MonotonicInstant,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var started = false
        if case .dispatch = s.start(now: t, refreshIndex: 0) { started = true }
        try #require(started, "no start refresh", sourceLocation: sourceLocation)
        #expect(s.frameSubmitted(now: t + fast) == .setMode, sourceLocation: sourceLocation)
    }

    @Test(
        """
        start-up: frame 0 is an estimate with no sequence; the first vblank after the mode set is a restart; then one sequence space, no \
        misses
        """)
    func startUp() {
        let h = KMSHarness(period: period, firstSequence: 426)
        h.start()
        h.run(callbacks: 5)
        #expect(h.frames.count == 5)
        // Frame 0: before the mode set, at the start time, no kernel sequence.
        #expect(h.events[0].sequence == nil)
        #expect(h.events[0].provenance == .frameCallbackEstimate)
        #expect(h.events[0].timestamp == h.origin + Nanoseconds(4_000_000))
        #expect(h.actions.first == .setMode)
        // Frame 1: the first vblank after the mode set (vblank 1), a restart: zero delta, no misses.
        #expect(h.events[1].sequence == 427)
        #expect(h.events[1].followsStall)
        #expect(h.frames[1].timestamp == h.time(ofVblank: 1))
        #expect(h.frames[1].delta == .zero)
        #expect(h.frames[1].missedFrames == 0)
        // The mode-set frame is presented at that vblank.
        #expect(h.presented[h.frames[0].refreshIndex]?.time == h.time(ofVblank: 1))
        #expect(h.presented[h.frames[0].refreshIndex]?.sequence == 427)
        // Then one per vblank, consecutive kernel sequences, no misses, no restarts.
        for i in 2..<5 {
            #expect(h.frames[i].sequence == 426 + UInt64(i))
            #expect(h.frames[i].missedFrames == 0)
            #expect(h.frames[i].delta == period)
            #expect(!h.events[i].followsStall)
        }
        expectConsistent(h)
    }

    @Test(
        """
        callbacks before the first frame that draw nothing: the next comes one period later, an estimate, until one draws and sets the mode
        """)
    func nothingDrawnBeforeModeSet() {
        let h = KMSHarness(period: period, firstSequence: 426)
        h.mayDrawNothingFirst = true
        h.draws = { $0 >= 3 }  // assets load during the first three callbacks
        h.renderTime = { _ in Nanoseconds(1_000_000) }
        h.start()
        h.run(callbacks: 8)
        #expect(h.frames.count == 8)
        #expect(h.startsAgain == 3)
        let t0 = h.origin + Nanoseconds(4_000_000)
        // Three estimates a period apart (each started at the previous one's timestamp + period).
        #expect(h.events.prefix(4).map(\.timestamp) == [t0, t0 + period, t0 + period * 2, t0 + period * 3])
        #expect(h.events.prefix(4).allSatisfy { $0.sequence == nil && $0.provenance == .frameCallbackEstimate })
        #expect(h.frames.prefix(4).map(\.delta) == [.zero, period, period, period])
        #expect(h.actions.first == .setMode)
        // From the mode set on, vblanks as always: no more restarts, timestamps never back.
        #expect(h.events.dropFirst(4).allSatisfy { $0.provenance == .hardwareVBlank })
        #expect(zip(h.frames, h.frames.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
        #expect(h.violations.isEmpty)
    }

    @Test("flips on time: one frame in flight, target = timestamp + period, each frame presented at its target")
    func flipsOnTime() {
        let h = KMSHarness(period: period)
        h.start()
        h.run(callbacks: 200)
        #expect(h.frames.count == 200)
        for i in 2..<200 {
            let f = h.frames[i]
            #expect(f.targetTimestamp == f.timestamp + period)
            #expect(f.delta == period)
            #expect(f.missedFrames == 0)
        }
        for i in 1..<199 { #expect(h.presented[h.frames[i].refreshIndex]?.time == h.frames[i].targetTimestamp, "frame \(i)") }
        #expect(h.scheduler.pipeline.depth == 1)
        #expect(h.actions.dropFirst().allSatisfy { $0 == .flip })
        #expect(h.vblankEventsQueued == 1)  // only the mode set's
        expectConsistent(h)
    }

    @Test(
        """
        a frame that misses its vblank: two in flight from then on, the next callback at once, target +2 periods, the held frame flipped \
        at the completion
        """)
    func missSwitchesToTwoInFlight() {
        let h = runWithFrame10Late(callbacks: 40)
        // Frame 10 (at vblank 10) is presented 3 ms after vblank 11: flipped, and the next callback
        // runs at once for vblank 11 (no miss), two periods ahead.
        #expect(h.frames[10].sequence == h.sequence(ofVblank: 10))
        #expect(h.actions[10] == .flipAndStartNext)
        #expect(h.frames[11].sequence == h.sequence(ofVblank: 11))
        #expect(h.frames[11].timestamp == h.time(ofVblank: 11))
        #expect(h.frames[11].missedFrames == 0)
        #expect(h.frames[11].targetTimestamp == h.time(ofVblank: 13))
        #expect(h.actions[11] == .hold(discarding: nil))
        // Frame 10 lands one vblank late (12); the held frame 11 is flipped then and lands at 13, its target.
        #expect(h.presented[h.frames[10].refreshIndex]?.time == h.time(ofVblank: 12))
        #expect(h.presented[h.frames[11].refreshIndex]?.time == h.time(ofVblank: 13))
        // From then on one callback per vblank, each two periods ahead, each presented at its target.
        for i in 12..<38 {
            #expect(h.frames[i].sequence == h.sequence(ofVblank: Int64(i)))
            #expect(h.frames[i].targetTimestamp == h.frames[i].timestamp + period * 2, "frame \(i)")
            #expect(h.presented[h.frames[i].refreshIndex]?.time == h.frames[i].targetTimestamp, "frame \(i)")
            #expect(h.actions[i] == .hold(discarding: nil))
        }
        #expect(h.scheduler.pipeline.depth == 2)
        expectConsistent(h)
    }

    @Test("the kernel handles the vblank late: a frame late by our clock but not the kernel's does not start the next frame early")
    func lateVblankHandler() {
        let h = KMSHarness(period: period)
        h.kernelLag = Nanoseconds(5_000_000)  // each vblank handled 5 ms after its time
        // Frame 10's callback runs at vblank 10 + 5 ms; it presents 1 ms after vblank 11 (late by
        // our clock), before the kernel handled vblank 11, and goes on for 6 ms after presenting.
        h.renderTime = { [period] n in n == 10 ? period - Nanoseconds(4_000_000) : Nanoseconds(2_000_000) }
        h.afterPresent = Nanoseconds(6_000_000)
        h.start()
        h.run(callbacks: 40)
        #expect(h.actions[10] == .flipAndStartNext)
        // The flip completes at 11 after all (on time); when the current vblank is read (11) its
        // event is already waiting: no callback now (it would be drawn for 13 and shown at 12).
        #expect(h.presented[h.frames[10].refreshIndex]?.time == h.time(ofVblank: 11))
        #expect(h.frames[11].timestamp == h.time(ofVblank: 11))
        #expect(h.actions[11] == .flip)
        // Every frame is presented at its target, never a period early.
        for i in 1..<39 {
            let shown = h.presented[h.frames[i].refreshIndex]?.time
            #expect(shown == h.frames[i].targetTimestamp, "frame \(i)")
        }
        expectConsistent(h)
    }

    @Test("flips completing late by whole periods: the misses and delta say so, the feedback has the real vblank")
    func lateCompletions() {
        let h = KMSHarness(period: period)
        h.flipDelay = { n in n == 20 ? 2 : 0 }  // the 20th flip completes two vblanks late
        h.start()
        h.run(callbacks: 40)
        // Flip 20 is frame 20's (frame 0 set the mode). It completes at vblank 23 instead of 21.
        #expect(h.presented[h.frames[20].refreshIndex]?.time == h.time(ofVblank: 23))
        #expect(h.frames[21].sequence == h.sequence(ofVblank: 23))
        #expect(h.frames[21].missedFrames == 2)
        #expect(h.frames[21].delta == period * 3)
        #expect(h.frames[21].targetTimestamp == h.time(ofVblank: 24))
        expectConsistent(h)
    }

    @Test("a renderer slower than two periods: lateness learned once 16 flips are known, then every frame presented at its target")
    func latenessLearned() {
        let h = KMSHarness(period: period)
        h.presentAfterVblank = period * 2 + Nanoseconds(5_000_000)
        h.start()
        h.run(callbacks: 80)
        // Each frame is presented 2 periods + 5 ms after its vblank: flipped at the third vblank
        // after it, and the next callback runs then (every third vblank, two misses each).
        for i in 2..<80 {
            #expect(h.frames[i].sequence == h.frames[i - 1].sequence + 3)
            #expect(h.frames[i].missedFrames == 2)
        }
        // The frames in flight alone say 1 period ahead; the flips show 2 more, learned once 16
        // flips are known (frames 1 … 16): from frame 17 on the target is 3 periods ahead, exact.
        for i in 1..<17 { #expect(h.frames[i].targetTimestamp == h.frames[i].timestamp + period, "frame \(i)") }
        for i in 17..<80 { #expect(h.frames[i].targetTimestamp == h.frames[i].timestamp + period * 3, "frame \(i)") }
        for i in 1..<79 {
            #expect(h.presented[h.frames[i].refreshIndex]?.time == h.frames[i].timestamp + period * 3, "frame \(i)")
        }
        #expect(h.scheduler.lateness.median == 2)
        expectConsistent(h)
    }

    @Test("back to one frame in flight after 120 fast frames (one callback skipped to drain the held frame)")
    func returnsToOne() {
        let h = runWithFrame10Late(callbacks: 200)
        let twoAhead = h.frames.indices.filter { h.frames[$0].targetTimestamp == h.frames[$0].timestamp + period * 2 }
        // Frames 11 … 130 were drawn with two in flight: 120 fast frames; at the 120th's present
        // the pipeline returns to one.
        #expect(twoAhead.first == 11)
        #expect(twoAhead.last == 130)
        #expect(twoAhead.count == 120)
        // The drain costs one callback: frame 131 is two vblanks after frame 130, one miss.
        #expect(h.frames[131].sequence == h.frames[130].sequence + 2)
        #expect(h.frames[131].missedFrames == 1)
        for i in 131..<199 { #expect(h.frames[i].targetTimestamp == h.frames[i].timestamp + period) }
        #expect(h.presented[h.frames[10].refreshIndex]?.time == h.frames[10].targetTimestamp + period)  // the late one
        for i in 1..<199 where i != 10 {
            #expect(h.presented[h.frames[i].refreshIndex]?.time == h.frames[i].targetTimestamp, "frame \(i)")
        }
        #expect(h.scheduler.pipeline.depth == 1)
        expectConsistent(h)
    }

    @Test("ticks without drawing: a vblank event per refresh, no flips, consecutive sequences")
    func idleTicks() {
        let h = KMSHarness(period: period)
        h.draws = { $0 == 0 }
        h.start()
        h.run(callbacks: 50)
        #expect(h.flips == 0)
        #expect(h.vblankEventsQueued == 50)  // the mode set's, then one per callback
        for i in 2..<50 {
            #expect(h.frames[i].sequence == h.frames[i - 1].sequence + 1)
            #expect(h.frames[i].targetTimestamp == h.frames[i].timestamp + period)
        }
        expectConsistent(h)
    }

    @Test("idle ticks mixed with drawing: drawing resumes with a flip, no double events")
    func idleThenDraw() {
        let h = KMSHarness(period: period)
        h.draws = { $0 < 10 || $0 >= 20 }
        h.start()
        h.run(callbacks: 40)
        #expect(h.flips == 9 + 20)
        for i in 2..<40 { #expect(h.frames[i].sequence == h.frames[i - 1].sequence + 1, "frame \(i)") }
        expectConsistent(h)
    }

    @Test("the 32-bit flip sequence wraps: 64-bit sequences go on counting")
    func wrap() {
        let h = KMSHarness(period: period, firstSequence: 0xFFFF_FFF0)
        h.start()
        h.run(callbacks: 60)
        #expect(h.frames.last!.sequence == 0xFFFF_FFF0 + 59)
        #expect(h.frames.last!.sequence > 0xFFFF_FFFF)
        expectConsistent(h)
    }

    @Test("extending 32-bit sequences: across the wrap, and a late event from before it")
    func extend() {
        #expect(KMSFrameScheduler.extend(5, after: 4) == 5)
        #expect(KMSFrameScheduler.extend(0, after: 0xFFFF_FFFF) == 0x1_0000_0000)
        #expect(KMSFrameScheduler.extend(2, after: 0x1_FFFF_FFFE) == 0x2_0000_0002)
        #expect(KMSFrameScheduler.extend(0xFFFF_FFFF, after: 0x1_0000_0001) == 0x0_FFFF_FFFF)  // late, from before the wrap
        #expect(KMSFrameScheduler.extend(0xFFFF_FFFF, after: 0) == 0xFFFF_FFFF)  // nothing known: not below 0
        #expect(KMSFrameScheduler.extend(7, after: .max) == UInt64.max &+ 8 &- 0x1_0000_0000 &+ 0x1_0000_0000)  // no trap at the top
        #expect(KMSFrameScheduler.extend(0x8000_0000, after: 0) == 0x8000_0000)
    }

    @Test("a late flip event from before the wrap: the frame's sequence is before the wrap, the next callback after it")
    func lateEventBeforeWrap() throws {
        var s = KMSFrameScheduler(period: period)
        let t = MonotonicInstant(nanoseconds: 1_000_000_000)
        try startAndSetMode(&s, at: t)
        _ = s.vblankEvent(sequence: 0x1_0000_0002, at: t + period)
        let e1 = s.beginCallback(refreshIndex: 1, now: t + period)
        #expect(e1.sequence == 0x1_0000_0002)
        #expect(s.frameSubmitted(now: t + period + fast) == .flip)
        // The flip event says 0xFFFF_FFFF: from before the wrap (as after a vblank read of 0x1_0000_0002
        // raced ahead). It extends backwards, not 4 G ahead; as it goes back it starts a new space.
        let outcome = s.flipCompleted(sequence32: 0xFFFF_FFFF, at: t + period * 2)
        #expect(s.lastSequence == 0xFFFF_FFFF)
        #expect(outcome.next == .callback)
        let e2 = s.beginCallback(refreshIndex: 2, now: t + period * 2)
        #expect(e2.sequence == 0xFFFF_FFFF)
        #expect(e2.followsStall)
        #expect(e2.timestamp == t + period * 2)
    }

    @Test("restart after demand off and on: a queued vblank, followsStall, zero delta and no misses through a real link")
    func restart() {
        let h = KMSHarness(period: period)
        h.onCallback = { _, n, link in if n == 20 { link.isPaused = true } }
        h.start()
        h.run(callbacks: 21)
        h.run(callbacks: 22)  // frame 20's flip completes; no callback while paused
        #expect(h.frames.count == 21)
        h.advance(by: Nanoseconds(500_000_000))
        h.link?.isPaused = false
        h.run(callbacks: 30)
        let resumed = h.frames[21]
        #expect(h.events[21].followsStall)
        #expect(resumed.delta == .zero)
        #expect(resumed.missedFrames == 0)
        #expect(resumed.sequence > h.frames[20].sequence + 29)  // half a second later
        #expect(h.frames[22].delta == period)
        #expect(h.frames[22].missedFrames == 0)
        #expect(h.violations.isEmpty)
        expectConsistent(h, from: 22)
    }

    @Test("after a failure nothing more is decided: no callbacks, no requests")
    func failure() throws {
        var s = KMSFrameScheduler(period: period)
        let t = MonotonicInstant(nanoseconds: 1_000_000_000)
        try startAndSetMode(&s, at: t)
        s.stop()
        #expect(s.vblankEvent(sequence: 10, at: t + period).next == .none)
        #expect(s.flipCompleted(sequence32: 11, at: t + period * 2).next == .none)
        #expect(s.callbackEnded(wantsRefreshes: true) == .none)
        #expect(s.currentVblank(sequence: 11, at: t + period * 2, eventPending: false, refreshIndex: 1, now: t + period * 2) == nil)
    }

    // MARK: Properties

    /// One random run: render times (fast, near the period, beyond two periods), late flip
    /// completions, a kernel that handles vblanks late, a start near the 32-bit wrap, pauses.
    struct Scenario: Sendable, CustomStringConvertible {
        var renders: [Int64]  // ns, cycled
        var flipDelays: [Int]  // cycled
        var drawPattern: [Bool]  // cycled
        var pauses: [Int]  // callback numbers at which the link pauses for a while
        var firstSequence: UInt64
        var lagMicroseconds: Int64
        var frameInterval: Int
        var description: String {
            "renders \(renders) delays \(flipDelays) draws \(drawPattern) pauses \(pauses) first \(firstSequence) "
                + "lag \(lagMicroseconds) µs interval \(frameInterval)"
        }
    }

    static let scenarios = PropertyBased.zip(
        Gen.int64(in: 0...45_000_000).array(of: 1...12),
        Gen.int(in: 0...3).array(of: 1...8).map { $0.map { $0 == 3 ? 2 : ($0 == 2 ? 1 : 0) } },
        Gen.bool(0.8).array(of: 1...6),
        Gen.int(in: 2...150).array(of: 0...3),
        Gen.uint64(in: 0xFFFF_FF00...0xFFFF_FFFF),
        Gen.int64(in: 0...8_000),
        Gen.int(in: 1...3)
    ).map { Scenario(renders: $0, flipDelays: $1, drawPattern: $2, pauses: $3, firstSequence: $4, lagMicroseconds: $5, frameInterval: $6) }

    @Test("invariants under random render times, late completions, a late vblank handler, wraps, demand toggles and frame intervals")
    func invariants() async {
        await propertyCheck(count: 150, input: KMSSchedulerTests.scenarios) { scenario in
            let h = KMSHarness(period: period, firstSequence: scenario.firstSequence)
            h.kernelLag = Nanoseconds(scenario.lagMicroseconds * 1000)
            h.renderTime = { n in Nanoseconds(scenario.renders[n % scenario.renders.count]) }
            h.flipDelay = { n in scenario.flipDelays[n % scenario.flipDelays.count] }
            h.draws = { n in scenario.drawPattern[n % scenario.drawPattern.count] }
            let pauses = Set(scenario.pauses)
            var paused = false
            h.onCallback = { _, n, link in
                if pauses.contains(n) {
                    link.isPaused = true
                    paused = true
                }
            }
            h.start()
            h.link?.frameInterval = scenario.frameInterval
            var guardSteps = 0
            while h.frames.count < 160 && guardSteps < 400 {
                guardSteps += 1
                let before = h.frames.count
                h.run(callbacks: 160)
                if paused {
                    h.advance(by: Nanoseconds(Int64(40_000_000 + 7_000_000 * (before % 5))))
                    paused = false
                    h.link?.isPaused = false
                } else if h.frames.count == before {
                    break
                }
            }
            #expect(h.frames.count >= 160, "stalled after \(h.frames.count) callbacks")
            #expect(h.violations.isEmpty, "\(h.violations)")
            // The scheduler's refreshes.
            var lastSequence: UInt64?
            for (i, e) in h.events.enumerated() {
                if i > 0 { #expect(e.timestamp >= h.events[i - 1].timestamp, "event \(i)") }
                let ahead = (e.targetTimestamp ?? e.timestamp) - e.timestamp
                #expect(ahead > .zero, "event \(i)")
                #expect(ahead.value % period.value == 0, "event \(i): \(ahead.value) ns ahead")
                if let s = e.sequence {
                    if !e.followsStall, let last = lastSequence { #expect(s > last, "event \(i): \(last) → \(s)") }
                    lastSequence = s
                    #expect(h.kernelVblanks[s] == e.timestamp, "event \(i): not a kernel vblank")
                }
            }
            // Through the link.
            for i in 1..<h.frames.count {
                let a = h.frames[i - 1], b = h.frames[i]
                #expect(b.missedFrames >= 0)
                #expect(b.timestamp >= a.timestamp)
                if b.delta != .zero {
                    #expect(b.delta == b.timestamp - a.timestamp, "frame \(i)")
                    #expect(b.missedFrames == Int(b.sequence &- a.sequence) - b.frameInterval, "frame \(i)")
                } else {
                    #expect(b.missedFrames == 0)
                }
                #expect(b.duration == period)
            }
            // Presented frames: at a vblank the kernel reported, never before their timestamp + 1 period.
            for f in h.frames {
                guard let shown = h.presented[f.refreshIndex] else { continue }
                if let s = shown.sequence { #expect(h.kernelVblanks[s] == shown.time) }
                if f.provenance == .hardwareVBlank { #expect(shown.time >= f.timestamp + period, "frame \(f.refreshIndex)") }
            }
        }
    }

    /// Kernel input as it should never be: random 32- and 64-bit sequences (backwards, wrapped,
    /// repeated), times out of order, events nobody asked for, through the scheduler directly.

    @Test(
        """
        kernel values never trap and never break the outputs: timestamps never decrease, targets whole periods ahead, sequences forward \
        within a space
        """)
    func kernelNoiseNeverTraps() async {
        await propertyCheck(
            count: 300, input: Gen.int(in: 0...4).array(of: 1...200), Gen.uint64().array(of: 1...200),
            Gen.int64(in: -50_000_000...50_000_000).array(of: 1...200)
        ) { kinds, sequences, jitters in
            var s = KMSFrameScheduler(period: period)
            var now = MonotonicInstant(nanoseconds: 1_000_000_000)
            var events: [RefreshEvent] = []
            var refresh: UInt64 = 0
            func dispatch(_ e: RefreshEvent) {
                events.append(e)
                refresh += 1
                _ = s.frameSubmitted(now: now + Nanoseconds(1_000_000))
                _ = s.callbackEnded(wantsRefreshes: true)
            }
            if case .dispatch(let e) = s.start(now: now, refreshIndex: refresh) { dispatch(e) }
            for (i, kind) in kinds.enumerated() {
                let sequence = sequences[i % sequences.count]
                let time = now + Nanoseconds(jitters[i % jitters.count])  // may be before the last one
                now = now + period
                switch kind {
                case 0:
                    if s.flipCompleted(sequence32: UInt32(truncatingIfNeeded: sequence), at: time).next == .callback {
                        dispatch(s.beginCallback(refreshIndex: refresh, now: now))
                    }
                case 1:
                    if s.vblankEvent(sequence: sequence, at: time).next == .callback {
                        dispatch(s.beginCallback(refreshIndex: refresh, now: now))
                    }
                case 2:
                    if let e = s.currentVblank(
                        sequence: sequence, at: time, eventPending: sequence % 2 == 0,
                        refreshIndex: refresh, now: now)
                    {
                        dispatch(e)
                    }
                case 3:
                    if case .dispatch(let e) = s.start(now: now, refreshIndex: refresh) { dispatch(e) }
                default:
                    _ = s.frameSubmitted(now: time)
                }
            }
            var last: UInt64?
            for (i, e) in events.enumerated() {
                if i > 0 { #expect(e.timestamp >= events[i - 1].timestamp) }
                var heldAtPrevious = false
                if i > 0, let target = e.targetTimestamp, let before = events[i - 1].targetTimestamp {
                    // Targets never go back, restarts included (EasedScroll ended a scroll on vkms
                    // when a smaller learned lateness moved a target back by two periods, and
                    // failed its check when an off-grid timestamp moved one back by less).
                    #expect(target >= before, "event \(i): target \(target.nanoseconds) after \(before.nanoseconds)")
                    heldAtPrevious = target == before
                }
                let ahead = (e.targetTimestamp ?? e.timestamp) - e.timestamp
                #expect(ahead > .zero && (ahead.value % period.value == 0 || heldAtPrevious))
                if let seq = e.sequence {
                    if !e.followsStall, let last { #expect(seq > last, "event \(i): \(last) → \(seq)") }
                    last = seq
                }
            }
        }
    }
}
