import DisplayLinkCore
import Testing

@Suite("Presentation timeline (period and target prediction)")
struct PresentationTimelineTests {
    func at(_ ms: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((ms * 1_000_000).rounded())) }

    @Test("advertised refresh until three intervals are measured, then the median interval")
    func periodFromMeasurements() {
        var t = PresentationTimeline(advertisedPeriod: Nanoseconds(16_666_667))
        t.recordPresentation(at: at(100))
        t.recordPresentation(at: at(125.5))
        #expect(t.period.value == 16_666_667)
        #expect(!t.isPeriodMeasured)
        t.recordPresentation(at: at(151))
        t.recordPresentation(at: at(176.4))
        #expect(t.isPeriodMeasured)
        #expect(t.period.value == 25_500_000)
    }

    @Test("one late frame does not move the median; a missed refresh without sequence is ignored")
    func robustToOutliers() {
        var t = PresentationTimeline()
        var ms = 0.0
        for interval in [10.0, 10, 10, 10, 13, 10, 10, 20, 10] {
            ms += interval
            t.recordPresentation(at: at(ms))
        }
        #expect(t.period.value == 10_000_000)
    }

    @Test("sequence steps divide the interval exactly")
    func sequenceSteps() {
        var t = PresentationTimeline()
        t.recordPresentation(at: at(0), sequence: 10)
        t.recordPresentation(at: at(20), sequence: 12)
        t.recordPresentation(at: at(30), sequence: 13)
        t.recordPresentation(at: at(60), sequence: 16)
        #expect(t.period.value == 10_000_000)
    }

    @Test("depth is learned: weston headless presents two periods after the newest known presentation")
    func depthLearned() {
        var t = PresentationTimeline()
        for i in 0..<5 { t.recordPresentation(at: at(Double(i) * 25)) }
        #expect(t.predictTarget(now: at(110)).nanoseconds == at(125).nanoseconds)  // depth 1 until learned
        t.recordOutcome(knownAtDraw: at(50), presentedAt: at(100))
        t.recordOutcome(knownAtDraw: at(75), presentedAt: at(125))
        #expect(t.depth == 2)
        #expect(t.predictTarget(now: at(110)).nanoseconds == at(150).nanoseconds)
        // A prediction never lies in the past.
        #expect(t.predictTarget(now: at(170)).nanoseconds == at(175).nanoseconds)
    }

    @Test("extrapolation lands on the rhythm's last presentation before now")
    func extrapolation() {
        var t = PresentationTimeline()
        for i in 0..<4 { t.recordPresentation(at: at(Double(i) * 10)) }
        #expect(t.extrapolatedPresentation(now: at(57))?.nanoseconds == at(50).nanoseconds)
    }
}
