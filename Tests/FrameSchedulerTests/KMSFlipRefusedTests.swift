import DisplayLinkCore
import FrameSchedulers
import Testing

/// A flip the kernel refuses as busy (`EBUSY`), on virtual time: the frame is dropped, nothing is
/// waited for, and the callback's end asks for the next vblank's event.
@Suite("KMS frame scheduler: a flip refused as busy")
struct KMSFlipRefusedTests {
    let period = Nanoseconds(16_683_217)

    @Test("the refused frame is discarded, no event is awaited, the callback ends with a vblank event queued; a second refusal is nothing")
    func refusedFlip() throws {
        var s = KMSFrameScheduler(period: period)
        let t = MonotonicInstant(nanoseconds: 1_000_000_000)
        guard case .dispatch = s.start(now: t, refreshIndex: 0) else {
            Issue.record("no start refresh")
            return
        }
        #expect(s.frameSubmitted(now: t + Nanoseconds(2_000_000)) == .setMode)
        #expect(s.callbackEnded(wantsRefreshes: true) == .none)
        #expect(s.vblankEvent(sequence: 1, at: t + period).next == .callback)
        let vblank = s.beginCallback(refreshIndex: 1, now: t + period + Nanoseconds(1_000_000))
        #expect(vblank.sequence == 1)
        #expect(s.frameSubmitted(now: t + period + Nanoseconds(3_000_000)) == .flip)
        #expect(s.isWaitingForEvent)
        #expect(s.flipRefused() == PresentationFeedback(refreshIndex: 1, outcome: .discarded))
        #expect(s.flipping == nil && !s.isWaitingForEvent)
        #expect(s.callbackEnded(wantsRefreshes: true) == .queueVblank)
        #expect(s.flipRefused() == nil)
        // The next vblank brings the next callback, one period on, its frame flipped as usual.
        #expect(s.vblankEvent(sequence: 2, at: t + period * 2).next == .callback)
        let next = s.beginCallback(refreshIndex: 2, now: t + period * 2 + Nanoseconds(1_000_000))
        #expect(next.timestamp == t + period * 2 && next.provenance == .hardwareVBlank)
        #expect(s.frameSubmitted(now: t + period * 2 + Nanoseconds(3_000_000)) == .flip)
    }
}
