import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import GLESRenderer
import Testing

@MainActor
@Suite("DisplaySurface fullscreen on a private weston: resize on configure", .serialized)
struct FullscreenTests {
    // The private weston's headless output (HeadlessWeston(width:height:)).
    static let outputWidth: Int32 = 640, outputHeight: Int32 = 480

    func startWeston() async throws -> HeadlessWeston {
        try await HeadlessWeston.start(width: Int(FullscreenTests.outputWidth), height: Int(FullscreenTests.outputHeight))
    }

    func options(_ weston: HeadlessWeston, fullscreen: Bool = false) -> DisplaySurface.Options {
        DisplaySurface.Options(
            title: "fullscreen test", appID: "org.displaylink.test", width: 320, height: 240,
            backend: .wayland, waylandSocket: weston.socketPath, fullscreen: fullscreen)
    }

    /// The frames are all drawn and read back at `width`×`height`: `width*height*4` bytes, red
    /// top-left, blue bottom-right (the new buffer really has that size).
    func expectFrames(
        _ frames: ArraySlice<SurfaceClient.Drawn>, _ width: Int32, _ height: Int32,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(frames.count >= 3, "frames keep coming", sourceLocation: sourceLocation)
        for frame in frames {
            #expect(
                frame.width == width && frame.height == height, "drawn at \(frame.width)x\(frame.height)",
                sourceLocation: sourceLocation)
            #expect(frame.bytes == Int(width) * Int(height) * 4, sourceLocation: sourceLocation)
            #expect(frame.topLeft == [255, 0, 0, 255], "top-left is the red square", sourceLocation: sourceLocation)
            #expect(
                frame.bottomRight == [0, 0, 255, 255], "bottom-right is the blue background",
                sourceLocation: sourceLocation)
        }
    }

    @Test(
        """
        setFullscreen(true): onResize with the output's size, frames drawn at it; setFullscreen(false): back to the windowed size \
        (weston's 0x0 configure)
        """)
    func fullscreenAndBack() async throws {
        let weston = try await startWeston()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(weston))
        defer { surface.close() }
        #expect(surface.width == 320 && surface.height == 240)
        #expect(!surface.isFullscreen)
        let client = SurfaceClient(surface, readsEveryFrame: true)
        client.start()
        expectFrames(await client.waitForFrames(3), 320, 240)
        #expect(client.resizes.isEmpty)

        surface.setFullscreen(true)
        try #require(await eventually { !client.resizes.isEmpty || client.failure != nil }, "no configure after setFullscreen(true)")
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(client.resizes.count == 1)
        #expect(client.resizes.first?.width == FullscreenTests.outputWidth)
        #expect(client.resizes.first?.height == FullscreenTests.outputHeight)
        #expect(surface.width == FullscreenTests.outputWidth && surface.height == FullscreenTests.outputHeight)
        #expect(surface.isFullscreen)
        expectFrames(await client.waitForFrames(3), FullscreenTests.outputWidth, FullscreenTests.outputHeight)

        surface.setFullscreen(false)
        try #require(await eventually { client.resizes.count >= 2 || client.failure != nil }, "no configure after setFullscreen(false)")
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(client.resizes.count == 2)
        #expect(client.resizes.last?.width == 320 && client.resizes.last?.height == 240)
        #expect(surface.width == 320 && surface.height == 240)
        #expect(!surface.isFullscreen)
        expectFrames(await client.waitForFrames(3), 320, 240)
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(client.link?.isValid == true)
        #expect(weston.isRunning, "the compositor took no offence")
        client.link?.invalidate()
    }

    @Test("Options.fullscreen: the first configure already has the output's size; leaving fullscreen goes to the size asked for")
    func openFullscreen() async throws {
        let weston = try await startWeston()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(weston, fullscreen: true))
        defer { surface.close() }
        #expect(surface.width == FullscreenTests.outputWidth && surface.height == FullscreenTests.outputHeight)
        #expect(surface.isFullscreen)
        let client = SurfaceClient(surface, readsEveryFrame: true)
        client.start()
        expectFrames(await client.waitForFrames(3), FullscreenTests.outputWidth, FullscreenTests.outputHeight)
        #expect(client.resizes.isEmpty)

        surface.setFullscreen(false)
        try #require(await eventually { !client.resizes.isEmpty || client.failure != nil }, "no configure after setFullscreen(false)")
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(client.resizes.count == 1)
        #expect(client.resizes.first?.width == 320 && client.resizes.first?.height == 240)
        #expect(surface.width == 320 && surface.height == 240)
        expectFrames(await client.waitForFrames(3), 320, 240)
        client.link?.invalidate()
    }
}
