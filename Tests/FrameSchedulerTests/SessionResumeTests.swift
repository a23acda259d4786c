import DisplayLinkCore
import FrameSchedulers
import Testing

@Suite("KMS scheduler: the session paused (VT switched away) and resumed")
struct SessionResumeTests {
    let period = Nanoseconds(16_683_217)

    @Test(
        """
        after a resume with a flip and a held frame lost, start queues a vblank event and its callback is a restart at the kernel's \
        sequence
        """
    )
    func resumeRestarts() {
        var s = KMSFrameScheduler(period: period)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        guard case .dispatch = s.start(now: t0, refreshIndex: 0) else { Issue.record("no first callback"); return }
        #expect(s.frameSubmitted(now: t0 + Nanoseconds(1_000_000)) == .setMode)
        let v1 = t0 + period
        #expect(s.vblankEvent(sequence: 100, at: v1).next == .callback)
        let first = s.beginCallback(refreshIndex: 1, now: v1)
        #expect(first.sequence == 100)
        #expect(s.frameSubmitted(now: v1 + Nanoseconds(1_000_000)) == .flip)
        #expect(s.isWaitingForEvent && s.flipping != nil)

        // Paused with the flip's event lost; the shell set the mode again on return.
        s.sessionResumed()
        #expect(!s.isWaitingForEvent && s.flipping == nil && s.held == nil && !s.wantsCurrentVblank)
        #expect(s.isModeSet)
        let back = v1 + period * 300
        #expect(s.start(now: back, refreshIndex: 2) == .queueVblank)
        let v = back + Nanoseconds(5_000_000)
        #expect(s.vblankEvent(sequence: 405, at: v).next == .callback)
        let resumed = s.beginCallback(refreshIndex: 2, now: v)
        #expect(resumed.followsStall)
        #expect(resumed.sequence == 405)
        #expect(resumed.timestamp == v)
        #expect(resumed.provenance == .hardwareVBlank)
        // And the rhythm goes on as before: the next frame flips.
        #expect(s.frameSubmitted(now: v + Nanoseconds(1_000_000)) == .flip)
    }

    @Test("a resume before the first mode set leaves the start as it was: the next frame sets the mode")
    func resumeBeforeModeSet() {
        var s = KMSFrameScheduler(period: period)
        s.sessionResumed()
        let t0 = MonotonicInstant(nanoseconds: 2_000_000_000)
        guard case .dispatch(let event) = s.start(now: t0, refreshIndex: 0) else { Issue.record("no first callback"); return }
        #expect(event.sequence == nil)
        #expect(s.frameSubmitted(now: t0) == .setMode)
    }
}
