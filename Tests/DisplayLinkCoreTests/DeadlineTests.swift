import DisplayLinkCore
import Testing

@Suite("the submit deadline reaches the link")
@MainActor
struct DeadlineTests {
    @Test("a source's deadline for its own target is the frame's and the link's; none for a target the core made up")
    func passedThrough() {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        var deadlines: [Double?] = []
        let link = DisplayLink(source: source, target: source) { _, link in
            frames.append(link.frame)
            deadlines.append(link.deadline)
        }
        let p = Nanoseconds(16_666_667)
        let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
        let deadline = FrameDeadline(time: t0 + p * 2 - Nanoseconds(7_000_000), lead: Nanoseconds(7_000_000), provenance: .bracketed)
        source.dispatcher.dispatch(RefreshEvent(timestamp: t0, refreshPeriod: p, provenance: .presentationFeedback))
        source.dispatcher.dispatch(
            RefreshEvent(
                timestamp: t0 + p, refreshPeriod: p, targetTimestamp: t0 + p * 2, provenance: .presentationFeedback,
                deadline: deadline))
        // A target not after the timestamp is the core's to replace, and the deadline with it.
        source.dispatcher.dispatch(
            RefreshEvent(
                timestamp: t0 + p * 2, refreshPeriod: p, targetTimestamp: t0 + p * 2, provenance: .presentationFeedback,
                deadline: deadline))
        #expect(frames.map(\.deadline) == [nil, deadline, nil])
        #expect(deadlines == [nil, deadline.time.seconds, nil])
        _ = link
    }
}
