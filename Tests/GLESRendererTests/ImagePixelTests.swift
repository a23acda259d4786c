import Foundation
import GLESRenderer
import PNGImage
import Testing

/// A 4×4 RGBA image of four 2×2 quadrants: red, green (top), blue, white (bottom).
private let quadrants: [UInt8] = (0..<16).flatMap { i -> [UInt8] in
    let (x, y) = (i % 4, i / 4)
    switch (x < 2, y < 2) {
    case (true, true): return [255, 0, 0, 255]
    case (false, true): return [0, 255, 0, 255]
    case (true, false): return [0, 0, 255, 255]
    case (false, false): return [255, 255, 255, 255]
    }
}

@Suite("Images (offscreen, Mesa llvmpipe)", .serialized)
struct ImagePixelTests {
    @Test("an image drawn at its size shows its pixels exactly, there and only there", arguments: [3, 2] as [Int32])
    func oneToOne(glesVersion: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        let image = try renderer.makeImage(width: 4, height: 4, rgba: quadrants)
        #expect(renderer.imageSize(image)! == (4, 4))
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        renderer.addImage(layer, image, in: Rect(x: 10, y: 20, width: 4, height: 4))
        renderer.endFrame()
        let p = target.pixels()
        for y in 0..<4 {
            for x in 0..<4 {
                #expect(p.rgba(10 + x, 20 + y, width: 256) == Array(quadrants[(y * 4 + x) * 4..<(y * 4 + x) * 4 + 4]))
            }
        }
        #expect(p.rgba(9, 20, width: 256) == [0, 0, 0, 255])
        #expect(p.rgba(14, 23, width: 256) == [0, 0, 0, 255])
        #expect(p.rgba(10, 24, width: 256) == [0, 0, 0, 255])
        #expect(renderer.drawCalls == 1)
    }

    @Test("a crop scaled up shows only the source rectangle's texels, even at its edges", arguments: [3, 2] as [Int32])
    func cropScaled(glesVersion: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        let image = try renderer.makeImage(width: 4, height: 4, rgba: quadrants)
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        // The green quadrant, 2×2 texels, over 40×40 pixels.
        renderer.addImage(layer, image, in: Rect(x: 100, y: 100, width: 40, height: 40), source: Rect(x: 2, y: 0, width: 2, height: 2))
        renderer.endFrame()
        let p = target.pixels()
        for (x, y) in [(100, 100), (139, 100), (100, 139), (139, 139), (120, 120)] {
            #expect(p.rgba(x, y, width: 256) == [0, 255, 0, 255], "(\(x), \(y))")
        }
    }

    @Test("the tint multiplies the colours and the opacity the alpha (premultiplied over the background)")
    func tintAndOpacity() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        let white = try renderer.makeImage(width: 1, height: 1, rgba: [255, 255, 255, 255])
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 1, 1))
        renderer.addImage(layer, white, in: Rect(x: 0, y: 0, width: 10, height: 10), tint: RGBA(1, 0, 0))
        renderer.addImage(layer, white, in: Rect(x: 20, y: 0, width: 10, height: 10), tint: RGBA(1, 1, 0), opacity: 0.5)
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(5, 5, width: 256) == [255, 0, 0, 255])
        let half = p.rgba(25, 5, width: 256)
        #expect(
            abs(Int(half[0]) - 128) <= 1 && abs(Int(half[1]) - 128) <= 1 && abs(Int(half[2]) - 128) <= 1 && half[3] == 255,
            "half-opaque yellow over blue: \(half)")
        // Two images in one layer, of one texture: one draw call.
        #expect(renderer.drawCalls == 1)
    }

    @Test("a PNG file's pixels are drawn as read; a missing file and wrong sizes are typed errors naming the cause")
    func pngAndErrors() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quadrants-\(getpid()).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PNGImage.write(path: path, width: 4, height: 4, rgba: quadrants)
        let image = try renderer.makeImage(contentsOfPNG: path)
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        renderer.addImage(layer, image, in: Rect(x: 0, y: 0, width: 4, height: 4))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(3, 0, width: 256) == [0, 255, 0, 255])
        #expect(p.rgba(0, 3, width: 256) == [0, 0, 255, 255])

        #expect {
            _ = try renderer.makeImage(contentsOfPNG: "/nonexistent/card.png")
        } throws: { error in
            guard case .unreadable(let where_, _) = error as? ImageError else { return false }
            return where_ == "/nonexistent/card.png" && "\(error)".contains("/nonexistent/card.png")
        }
        #expect {
            _ = try renderer.makeImage(width: 3, height: 3, rgba: [0, 0, 0, 0])
        } throws: { error in
            guard case .sizeMismatch(3, 3, 4) = error as? ImageError else { return false }
            return "\(error)".contains("36 bytes")
        }
        #expect {
            _ = try renderer.makeImage(width: 1 << 20, height: 1, rgba: [UInt8](repeating: 0, count: 4 << 20))
        } throws: { error in
            guard case .tooLarge = error as? ImageError else { return false }
            return true
        }
    }

    @Test("runs of one image are one draw call each; a deleted image draws nothing, not another")
    func runsAndDeletion() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        let red = try renderer.makeImage(width: 1, height: 1, rgba: [255, 0, 0, 255])
        let green = try renderer.makeImage(width: 1, height: 1, rgba: [0, 255, 0, 255])
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        for i in 0..<6 {
            renderer.addImage(layer, i < 3 ? red : green, in: Rect(x: Float(i * 10), y: 0, width: 8, height: 8))
        }
        renderer.endFrame()
        #expect(renderer.drawCalls == 2)
        renderer.deleteImage(red)
        #expect(renderer.imageSize(red) == nil)
        let blue = try renderer.makeImage(width: 1, height: 1, rgba: [0, 0, 255, 255])
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        renderer.addImage(layer, red, in: Rect(x: 0, y: 0, width: 8, height: 8))
        renderer.addImage(layer, blue, in: Rect(x: 20, y: 0, width: 8, height: 8))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(4, 4, width: 256) == [0, 0, 0, 255])
        #expect(p.rgba(24, 4, width: 256) == [0, 0, 255, 255])
    }

    @Test("deleting an image a retained layer shows damages where it was: a partial redraw clears it")
    func deleteFromRetainedLayer() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.setRetained(layer, true)
        let red = try renderer.makeImage(width: 1, height: 1, rgba: [255, 0, 0, 255])
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1), bufferAge: 0)
        renderer.addImage(layer, red, in: Rect(x: 40, y: 40, width: 20, height: 20))
        renderer.endFrame()
        #expect(target.pixels().rgba(50, 50, width: 256) == [255, 0, 0, 255])
        renderer.deleteImage(red)
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1), bufferAge: 1)
        renderer.endFrame()
        guard case .region(let r) = renderer.damage else {
            Issue.record("damage \(renderer.damage), expected the image's place")
            return
        }
        #expect(r.x <= 40 && r.y <= 40 && r.x + r.width >= 60 && r.y + r.height >= 60)
        #expect(target.pixels().rgba(50, 50, width: 256) == [0, 0, 0, 255])
    }

    @Test("sizes that overflow, and an image of another renderer, are refused without a trap")
    func hostileSizes() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let other = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        #expect {
            _ = try renderer.makeImage(width: 1 << 62, height: 4, rgba: [0, 0, 0, 0])
        } throws: { error in
            guard case .sizeMismatch = error as? ImageError else { return false }
            return "\(error)".contains("more bytes")
        }
        let foreign = try other.makeImage(width: 1, height: 1, rgba: [0, 255, 0, 255])
        #expect(renderer.imageSize(foreign) == nil)
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        renderer.addImage(layer, foreign, in: Rect(x: 0, y: 0, width: 8, height: 8))
        renderer.endFrame()
        #expect(target.pixels().rgba(4, 4, width: 256) == [0, 0, 0, 255])
    }
}
