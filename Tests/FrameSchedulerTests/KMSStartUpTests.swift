import DisplayLinkCore
import FrameSchedulers
import Testing

/// Start-up on a CRTC that is already running (a console on it): frame 0 is the kernel's current
/// vblank, in the same sequence space as the vblanks after the mode set, and the first vblank
/// after the mode set is a restart (no misses invented for the time the mode set took).
@MainActor
@Suite("KMS start-up on a running CRTC")
struct KMSStartUpTests {
    let period = Nanoseconds(16_683_217)

    @Test(
        """
        frame 0 is the current vblank (kernel sequence and time, hardware provenance); the first vblank after the mode set restarts in the \
        same space; then misses are sequence steps
        """
    )
    func startOnRunningCRTC() {
        let origin = MonotonicInstant(nanoseconds: 7_000_000_000)
        var s = KMSFrameScheduler(period: period)
        let now = origin + Nanoseconds(3_000_000)
        guard case .dispatch(let e0) = s.start(now: now, refreshIndex: 0, currentVblank: (1876, origin)) else {
            Issue.record("no start refresh")
            return
        }
        #expect(e0.timestamp == origin && e0.sequence == 1876 && e0.provenance == .hardwareVBlank)
        #expect(e0.targetTimestamp == origin + period)
        #expect(s.frameSubmitted(now: now + Nanoseconds(1_000_000)) == .setMode)
        // The mode set took 6 periods (first buffers); its vblank event is at 1882.
        let v1 = origin + period * 6
        let out = s.vblankEvent(sequence: 1882, at: v1)
        #expect(out.next == .callback)
        #expect(out.feedback == PresentationFeedback(refreshIndex: 0, outcome: .presented(at: v1, sequence: 1882)))
        let e1 = s.beginCallback(refreshIndex: 1, now: v1 + Nanoseconds(500_000))
        #expect(e1.sequence == 1882 && e1.timestamp == v1 && e1.followsStall && e1.provenance == .hardwareVBlank)
    }

    @Test("a CRTC that is off (no current vblank): frame 0 is an estimate at now with no sequence, as before")
    func startOnOffCRTC() {
        var s = KMSFrameScheduler(period: period)
        let now = MonotonicInstant(nanoseconds: 9_000_000_000)
        guard case .dispatch(let e0) = s.start(now: now, refreshIndex: 0, currentVblank: nil) else {
            Issue.record("no start refresh")
            return
        }
        #expect(e0.timestamp == now && e0.sequence == nil && e0.provenance == .frameCallbackEstimate)
    }

    @Test("a current vblank later than now (a clock the kernel does not share) is not trusted: the estimate")
    func futureVblankIgnored() {
        var s = KMSFrameScheduler(period: period)
        let now = MonotonicInstant(nanoseconds: 9_000_000_000)
        guard case .dispatch(let e0) = s.start(now: now, refreshIndex: 0, currentVblank: (5, now + period)) else {
            Issue.record("no start refresh")
            return
        }
        #expect(e0.provenance == .frameCallbackEstimate && e0.sequence == nil)
    }
}
