import DisplayLinkCore
import Testing
import WaylandBackend

@MainActor
@Suite("Wayland frame source under a real weston", .serialized)
struct WaylandPacingTests {
    @Test("callbacks are paced by the compositor with exact presentation timestamps")
    func pacedWithPresentationTimestamps() async throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let client = try PacedClient(weston: weston)
        #expect(client.connection.presentationClock == .monotonicRaw)
        #expect(client.connection.compositorName == "weston")
        client.start()
        let done = await wait { client.frames.count >= 60 }
        #expect(done, "60 callbacks did not arrive; weston log:\n\(weston.readLog())")
        client.link?.invalidate()
        #expect(client.swapError == nil)
        let frames = client.frames
        print("frames", frames.count, "feedback", client.feedback.count)
        for f in frames.prefix(8) { print(f.refreshIndex, f.timestamp.nanoseconds, f.targetTimestamp.nanoseconds, f.delta.value, f.provenance) }
        for f in client.feedback.prefix(8) { print(f) }
    }
}
