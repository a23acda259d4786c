import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import Foundation
import GLESRenderer
import Testing

/// A link that draws a scene laid out in points (a red square and a line of text) at the
/// surface's scale, recording each frame's sizes and when the scale changed.
@MainActor
final class ScaledTextClient {
    struct Frame: Equatable {
        var pixels: (width: Int32, height: Int32)
        var scale: Double
        static func == (a: Frame, b: Frame) -> Bool { a.pixels == b.pixels && a.scale == b.scale }
    }

    let surface: DisplaySurface
    let renderer: Renderer
    let layer: Renderer.LayerID
    var link: DisplayLink?
    var frames: [Frame] = []
    /// The scales ``DisplaySurface/onScaleChange`` reported, with how many frames were drawn before.
    var scaleChanges: [(scale: Double, framesBefore: Int)] = []
    var failure: Error?
    /// Where the first frame drawn at scale 2 is written, and its pixels.
    let screenshotPath: String
    var scaledPixels: [UInt8]?

    init(_ surface: DisplaySurface, screenshotPath: String) throws {
        self.surface = surface
        self.screenshotPath = screenshotPath
        try surface.beginFrame()
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14, 20]), glesMajorVersion: surface.glesMajorVersion)
        layer = renderer.makeLayer()
        surface.releaseContext()
        surface.onScaleChange = { [weak self] scale in
            guard let self else { return }
            self.scaleChanges.append((scale, self.frames.count))
        }
    }

    func start() {
        link = DisplayLink(source: surface, target: self) { client, _ in client.tick() }
    }

    func tick() {
        do {
            try surface.beginFrame()
            try renderer.setScale(surface.scale)  // rebuilds the atlas only when the scale changed
            renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.1, 0.1, 0.15))
            renderer.addRect(layer, Rect(x: 10, y: 10, width: 20, height: 20), color: RGBA(1, 0, 0))
            renderer.addText(layer, Array("Scale 2: crisp text".utf8), x: 40, baseline: 26, face: 0, color: RGBA(1, 1, 1))
            renderer.addText(layer, Array("DisplayLink HiDPI".utf8), x: 10, baseline: 70, face: 1, color: RGBA(0.7, 0.9, 1))
            renderer.endFrame()
            frames.append(Frame(pixels: surface.pixelSize, scale: surface.scale))
            if surface.scale == 2 && scaledPixels == nil {
                scaledPixels = try surface.readPixels()
                try surface.screenshot(to: screenshotPath)
            }
            try surface.present()
        } catch {
            failure = error
            link?.invalidate()
        }
    }
}

@MainActor
@Suite("DisplaySurface at scale 2 on a compositor that offers it", .serialized)
struct ScaleSurfaceTests {
    /// weston headless with `--scale=2`: its output has wl_output.scale 2, which the surface
    /// learns when it enters the output (after its first buffer is shown).
    @Test("weston --scale=2: scale 2, buffers of points × 2 pixels from the frame after the one scale change, text drawn at 2×")
    func westonScaleTwo() async throws {
        let weston = try await HeadlessWeston.start(extraArguments: ["--scale=2"])
        defer { weston.stop() }
        try await runScaleTwo(socket: weston.socketPath, screenshot: "/tmp/scale2.png")
    }

    @Test("weston 16 (Debian forky root) --scale=2: the same")
    func weston16ScaleTwo() async throws {
        let weston = try await HeadlessRootCompositor.start(.weston16, extraArguments: ["--scale=2"])
        defer { weston.stop() }
        try await runScaleTwo(socket: weston.socketPath, screenshot: "/tmp/scale2-weston16.png")
    }

    private func runScaleTwo(socket: String, screenshot: String) async throws {
        let surface = try DisplaySurface(
            options: .init(
                title: "scale test", appID: "org.displaylink.test", width: 200, height: 150, backend: .wayland, waylandSocket: socket))
        defer { surface.close() }
        let client = try ScaledTextClient(surface, screenshotPath: screenshot)
        client.start()
        #expect(await eventually { client.frames.filter { $0.scale == 2 }.count >= 5 || client.failure != nil })
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        client.link?.invalidate()

        #expect(surface.scale == 2)
        #expect(surface.pointSize == (200, 150))
        #expect(surface.pixelSize == (400, 300))
        #expect(client.scaleChanges.map(\.scale) == [2], "one scale change")
        // Every frame before the change at 200×150 scale 1, every one from the next at 400×300 scale 2.
        let changedAt = try #require(client.scaleChanges.first?.framesBefore)
        #expect(client.frames[..<changedAt].allSatisfy { $0 == .init(pixels: (200, 150), scale: 1) })
        #expect(client.frames[changedAt...].allSatisfy { $0 == .init(pixels: (400, 300), scale: 2) })
        #expect(surface.environment.first { $0.key == "scale" }?.value == .string("2.0 (outputs)"))

        // The square at (10, 10) points, 20 points wide, covers pixels 20…59.
        let pixels = try #require(client.scaledPixels)
        #expect(pixels.count == 400 * 300 * 4)
        func rgba(_ x: Int, _ y: Int) -> [UInt8] { Array(pixels[(y * 400 + x) * 4..<(y * 400 + x) * 4 + 4]) }
        #expect(rgba(20, 20) == [255, 0, 0, 255])
        #expect(rgba(59, 59) == [255, 0, 0, 255])
        #expect(rgba(19, 40) != [255, 0, 0, 255])
        #expect(rgba(60, 40) != [255, 0, 0, 255])
        // Text: white ink right of the square, on its 28-pixel raster (the 14-point face at 2×).
        #expect(client.renderer.atlas.faces[0].pixelSize == 28)
        let white = (0..<(400 * 70)).count { i in pixels[i * 4] > 200 && pixels[i * 4 + 1] > 200 && pixels[i * 4 + 2] > 200 }
        #expect(white > 100, "\(white) white text pixels")
        #expect(FileManager.default.fileExists(atPath: screenshot))
    }
}
