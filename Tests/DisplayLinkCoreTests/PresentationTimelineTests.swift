import DisplayLinkCore
import Testing

@Suite("Presentation timeline (the newest presentation)")
struct PresentationTimelineTests {
    func at(_ ms: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((ms * 1_000_000).rounded())) }

    @Test("keeps the newest presentation and its sequence; a reordered older one is counted, not kept")
    func newestKept() {
        var t = PresentationTimeline(advertisedPeriod: Nanoseconds(16_666_667))
        #expect(t.latest == nil && t.presentationCount == 0)
        t.recordPresentation(at: at(100), sequence: 7)
        t.recordPresentation(at: at(125), sequence: 8)
        t.recordPresentation(at: at(110), sequence: 9)
        #expect(t.latest == at(125))
        #expect(t.latestSequence == 8)
        #expect(t.presentationCount == 3)
    }

    @Test("an advertised refresh replaces the advertised period; 0 (unknown or variable) leaves it")
    func advertisedPeriod() {
        var t = PresentationTimeline(advertisedPeriod: Nanoseconds(16_666_667))
        t.recordPresentation(at: at(0), advertisedRefresh: Nanoseconds(8_333_333))
        #expect(t.advertisedPeriod.value == 8_333_333)
        t.recordPresentation(at: at(10), advertisedRefresh: .zero)
        #expect(t.advertisedPeriod.value == 8_333_333)
    }
}
