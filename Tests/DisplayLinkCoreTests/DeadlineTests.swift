import DisplayLinkCore
import Testing

@Suite("the submit deadline reaches the link")
@MainActor
struct DeadlineTests {
    static let p = Nanoseconds(16_666_667)
    static let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)

    /// Each callback's frame and `value` of the link, for a link on a scripted source that
    /// dispatches `events`.
    func callbacks<Value>(_ events: [RefreshEvent], _ value: @escaping (DisplayLink) -> Value) -> ([DisplayFrame], [Value]) {
        let source = ScriptedSource()
        var frames: [DisplayFrame] = []
        var values: [Value] = []
        let link = DisplayLink(source: source, target: source) { _, link in
            frames.append(link.frame)
            values.append(value(link))
        }
        for event in events { source.dispatcher.dispatch(event) }
        _ = link
        return (frames, values)
    }

    @Test("a source's deadline for its own target is the frame's and the link's; none for a target the core made up")
    func passedThrough() {
        let (p, t0) = (Self.p, Self.t0)
        let deadline = FrameDeadline(time: t0 + p * 2 - Nanoseconds(7_000_000), lead: Nanoseconds(7_000_000), provenance: .bracketed)
        let (frames, deadlines) = callbacks(
            [
                RefreshEvent(timestamp: t0, refreshPeriod: p, provenance: .presentationFeedback),
                RefreshEvent(
                    timestamp: t0 + p, refreshPeriod: p, targetTimestamp: t0 + p * 2, provenance: .presentationFeedback,
                    deadline: deadline),
                // A target not after the timestamp is the core's to replace, and the deadline with it.
                RefreshEvent(
                    timestamp: t0 + p * 2, refreshPeriod: p, targetTimestamp: t0 + p * 2, provenance: .presentationFeedback,
                    deadline: deadline)
            ], \.deadline)
        #expect(frames.map(\.deadline) == [nil, deadline, nil])
        #expect(deadlines == [nil, deadline.time.seconds, nil])
    }

    @Test("a source's render estimate is the frame's and the link's, whatever the target; nil when the source gives none")
    func renderEstimatePassedThrough() {
        let (p, t0) = (Self.p, Self.t0)
        let estimate = Nanoseconds(2_500_000)
        let (frames, estimates) = callbacks(
            [
                RefreshEvent(timestamp: t0, refreshPeriod: p, provenance: .presentationFeedback),
                RefreshEvent(
                    timestamp: t0 + p, refreshPeriod: p, targetTimestamp: t0 + p * 2, provenance: .presentationFeedback,
                    renderEstimate: estimate),
                // The program's render time does not depend on the target: kept when the core makes one up.
                RefreshEvent(timestamp: t0 + p * 2, refreshPeriod: p, provenance: .presentationFeedback, renderEstimate: estimate)
            ], \.renderEstimate)
        #expect(frames.map(\.renderEstimate) == [nil, estimate, estimate])
        #expect(estimates == [nil, 0.0025, 0.0025])
    }
}
