import EGLGraphics
import GLESRenderer
import Testing

@Suite("Renderer at scale 2: points drawn at twice the pixels (offscreen, Mesa llvmpipe)", .serialized)
struct ScalePixelTests {
    @Test("a rectangle and a clip in points cover twice the pixels each way; setScale changes once")
    func rectanglesInPoints() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        #expect(try renderer.setScale(2))
        #expect(try !renderer.setScale(2))
        #expect(renderer.scale == 2)
        let layer = renderer.makeLayer()
        renderer.setClip(layer, Rect(x: 0, y: 0, width: 64, height: 128))  // 128 pixels wide
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 1, 1))
        renderer.addRect(layer, Rect(x: 20, y: 15, width: 25, height: 10), color: RGBA(1, 0, 0, 1))  // pixels 40…89 × 30…49
        renderer.addRect(layer, Rect(x: 60, y: 80, width: 40, height: 10), color: RGBA(0, 1, 0, 1))  // 120…199, cut at 128
        renderer.endFrame()
        let p = target.pixels()
        let red: [UInt8] = [255, 0, 0, 255], green: [UInt8] = [0, 255, 0, 255], blue: [UInt8] = [0, 0, 255, 255]
        #expect(p.rgba(40, 30, width: 256) == red)
        #expect(p.rgba(89, 49, width: 256) == red)
        #expect(p.rgba(39, 40, width: 256) == blue)
        #expect(p.rgba(90, 40, width: 256) == blue)
        #expect(p.rgba(60, 29, width: 256) == blue)
        #expect(p.rgba(60, 50, width: 256) == blue)
        #expect(p.rgba(120, 160, width: 256) == green)
        #expect(p.rgba(127, 179, width: 256) == green)
        #expect(p.rgba(128, 170, width: 256) == blue, "the clip, 64 points, ends at pixel 128")
    }

    @Test("text at scale 2 is FreeType's raster at twice the size (the atlas rebuilt), not the scale-1 glyphs enlarged")
    func crispText() throws {
        let text = Array("Scale 2: Hxg@".utf8)
        // Scale 1: 14-pixel glyphs on a 128×64 target.
        let small = try OffscreenTarget(width: 128, height: 64)
        let one = try Renderer(atlas: sharedAtlas, glesMajorVersion: small.context.glesMajorVersion)
        let layerOne = one.makeLayer()
        one.beginFrame(width: 128, height: 64, clearColor: RGBA(0, 0, 0, 0))
        let widthOne = one.addText(layerOne, text, x: 4, baseline: 30, face: 0, color: RGBA(1, 1, 1, 1))
        one.endFrame()
        let pixelsOne = small.pixels()

        // Scale 2: the same points on a 256×128 target.
        let large = try OffscreenTarget(width: 256, height: 128)
        let two = try Renderer(atlas: sharedAtlas, glesMajorVersion: large.context.glesMajorVersion)
        try two.setScale(2)
        #expect(two.atlas.faces[0].pixelSize == 28 && two.atlas.faces[1].pixelSize == 40)
        #expect(sharedAtlas.faces[0].pixelSize == 14, "the atlas given is not changed")
        let layerTwo = two.makeLayer()
        two.beginFrame(width: 256, height: 128, clearColor: RGBA(0, 0, 0, 0))
        let widthTwo = two.addText(layerTwo, text, x: 4, baseline: 30, face: 0, color: RGBA(1, 1, 1, 1))
        two.endFrame()
        let pixelsTwo = large.pixels()

        // Every pixel is the 28-pixel raster's coverage at its place.
        var inkedTwo = 0
        forEachTextPixel(text, x: 8, baseline: 60, face: 0, atlas: two.atlas) { byte, x, y, coverage in
            let alpha = pixelsTwo.rgba(x, y, width: 256)[3]
            #expect(abs(Int(alpha) - Int(coverage)) <= 1, "'\(Character(UnicodeScalar(byte)))' at (\(x), \(y))")
            if coverage > 0 { inkedTwo += 1 }
        }
        let inkedOne = (0..<(128 * 64)).count { pixelsOne[$0 * 4 + 3] > 0 }
        let drawnTwo = (0..<(256 * 128)).count { pixelsTwo[$0 * 4 + 3] > 0 }
        #expect(drawnTwo == inkedTwo, "nothing drawn but the glyphs")
        // Four times the ink (twice each way), give or take the rasteriser's hinting.
        let inkOne = (0..<(128 * 64)).reduce(0) { $0 + Int(pixelsOne[$1 * 4 + 3]) }
        let inkTwo = (0..<(256 * 128)).reduce(0) { $0 + Int(pixelsTwo[$1 * 4 + 3]) }
        #expect(inkTwo * 10 > inkOne * 35 && inkTwo * 10 < inkOne * 45, "ink \(inkOne) at scale 1, \(inkTwo) at scale 2")
        // An enlargement would repeat each scale-1 pixel over a 2×2 block; FreeType's own raster
        // at 28 pixels has edges inside such blocks.
        var splitBlocks = 0
        for by in stride(from: 0, to: 128, by: 2) {
            for bx in stride(from: 0, to: 256, by: 2) {
                let a = [(0, 0), (1, 0), (0, 1), (1, 1)].map { pixelsTwo.rgba(bx + $0.0, by + $0.1, width: 256)[3] }
                if Set(a).count > 1 { splitBlocks += 1 }
            }
        }
        #expect(splitBlocks * 4 > inkedTwo / 4, "\(splitBlocks) of the 2×2 blocks have an edge inside")
        // The advance is in points at either scale (whole pixels at each size: within half a point a glyph).
        #expect(abs(widthTwo - widthOne) <= Float(text.count) / 2, "\(widthOne) points at scale 1, \(widthTwo) at scale 2")
        print(
            "scale 1: \(inkedOne) inked pixels, ink \(inkOne), advance \(widthOne) pt; scale 2: \(inkedTwo) inked pixels, ink \(inkTwo), advance \(widthTwo) pt, \(splitBlocks) split 2×2 blocks"
        )
    }
}
