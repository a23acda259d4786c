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
    /// Where the first frame drawn at a scale other than 1 is written, and its pixels.
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
            if surface.scale != 1 && scaledPixels == nil {
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
        try await runScaled(
            socket: weston.socketPath, expected: .init(scale: 2, source: "outputs", pixels: (400, 300)), screenshot: "/tmp/scale2.png")
    }

    @Test("weston 16 (Debian forky root) --scale=2: the same")
    func weston16ScaleTwo() async throws {
        let weston = try await HeadlessRootCompositor.start(.weston16, extraArguments: ["--scale=2"])
        defer { weston.stop() }
        try await runScaled(
            socket: weston.socketPath, expected: .init(scale: 2, source: "outputs", pixels: (400, 300)),
            screenshot: "/tmp/scale2-weston16.png")
    }

    /// kwin 6.7 (Debian forky root) offers wp_fractional_scale_v1 and wp_viewporter; its virtual
    /// backend keeps scale 1 (`--scale` does not change it), so this checks the fractional path at
    /// 1: the surface takes preferred_scale 120 as its scale's source and reports no change.
    @Test("kwin 6.7: the fractional scale 120/120 is followed without a change: scale 1, no callback, buffers of the size in points")
    func kwinFractionalOne() async throws {
        let kwin = try await HeadlessRootCompositor.start(.kwin67)
        defer { kwin.stop() }
        let surface = try DisplaySurface(
            options: .init(
                title: "scale test", appID: "org.displaylink.test", width: 200, height: 150, backend: .wayland,
                waylandSocket: kwin.socketPath))
        defer { surface.close() }
        let client = try ScaledTextClient(surface, screenshotPath: "/tmp/scale-kwin.png")
        client.start()
        #expect(await eventually { surface.environment.first { $0.key == "scale" }?.value == .string("1.0 (fractional_scale)") })
        #expect(await eventually { client.frames.count >= 10 || client.failure != nil })
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        client.link?.invalidate()
        #expect(client.scaleChanges.isEmpty)
        #expect(surface.scale == 1 && surface.pixelSize == (200, 150) && surface.pointSize == (200, 150))
        #expect(client.frames.allSatisfy { $0 == .init(pixels: (200, 150), scale: 1) })
    }

    struct Expected: Sendable, CustomTestStringConvertible {
        var scale: Double
        var source: String
        var pixels: (width: Int32, height: Int32)
        var testDescription: String { "scale \(scale)" }
    }

    private func runScaled(socket: String, expected: Expected, screenshot: String) async throws {
        let surface = try DisplaySurface(
            options: .init(
                title: "scale test", appID: "org.displaylink.test", width: 200, height: 150, backend: .wayland, waylandSocket: socket))
        defer { surface.close() }
        let client = try ScaledTextClient(surface, screenshotPath: screenshot)
        client.start()
        #expect(await eventually { client.frames.filter { $0.scale == expected.scale }.count >= 5 || client.failure != nil })
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        client.link?.invalidate()

        #expect(surface.scale == expected.scale)
        #expect(surface.pointSize == (200, 150))
        #expect(surface.pixelSize == expected.pixels)
        #expect(client.scaleChanges.map(\.scale) == [expected.scale], "one scale change")
        // Every frame before the change at 200×150 scale 1, every one from the next at the new size and scale.
        let changedAt = try #require(client.scaleChanges.first?.framesBefore)
        #expect(client.frames[..<changedAt].allSatisfy { $0 == .init(pixels: (200, 150), scale: 1) })
        #expect(client.frames[changedAt...].allSatisfy { $0 == .init(pixels: expected.pixels, scale: expected.scale) })
        #expect(surface.environment.first { $0.key == "scale" }?.value == .string("\(expected.scale) (\(expected.source))"))

        // The square at (10, 10) points, 20 points wide: pixels 10 × scale up to 30 × scale.
        let pixels = try #require(client.scaledPixels)
        let width = Int(expected.pixels.width)
        #expect(pixels.count == width * Int(expected.pixels.height) * 4)
        func rgba(_ x: Int, _ y: Int) -> [UInt8] { Array(pixels[(y * width + x) * 4..<(y * width + x) * 4 + 4]) }
        let first = Int(10 * expected.scale), last = Int(30 * expected.scale) - 1
        #expect(rgba(first, first) == [255, 0, 0, 255])
        #expect(rgba(last, last) == [255, 0, 0, 255])
        #expect(rgba(first - 1, (first + last) / 2) != [255, 0, 0, 255])
        #expect(rgba(last + 1, (first + last) / 2) != [255, 0, 0, 255])
        // Text: white ink right of the square, on the 14-point face's raster at this scale.
        #expect(client.renderer.atlas.faces[0].pixelSize == Int32((14 * expected.scale).rounded()))
        let white = (0..<(width * Int(35 * expected.scale))).count { i in
            pixels[i * 4] > 200 && pixels[i * 4 + 1] > 200 && pixels[i * 4 + 2] > 200
        }
        #expect(white > 100, "\(white) white text pixels")
        #expect(FileManager.default.fileExists(atPath: screenshot))
    }
}
