import EGLGraphics
@testable import GLESRenderer
import Testing

/// Unicode text drawn offscreen (Mesa llvmpipe): glyphs rasterised on demand reach the texture,
/// warm frames rasterise and upload nothing, and bad input draws the replacement.
@Suite("Unicode text pixels (offscreen, Mesa llvmpipe)", .serialized)
struct UnicodeTextPixelTests {
    /// Checks that the pixels show `text`'s glyphs (as laid out from `x` on `baseline`) and nothing
    /// else; returns the coverage inked per scalar index.
    @discardableResult
    private func expectGlyphs(
        _ text: String, x: Int32, baseline: Int32, atlas: GlyphAtlas, in pixels: [UInt8], width: Int32, height: Int32
    ) -> [Int] {
        var inked = 0
        var perScalar = [Int](repeating: 0, count: text.unicodeScalars.count)
        forEachTextPixel(text, x: x, baseline: baseline, face: 0, atlas: atlas) { index, scalar, px, py, coverage in
            let alpha = pixels.rgba(px, py, width: width)[3]
            #expect(abs(Int(alpha) - Int(coverage)) <= 1, "'\(scalar)' at (\(px), \(py))")
            if coverage > 0 { inked += 1; perScalar[index] += 1 }
        }
        let drawn = (0..<Int(width * height)).count { pixels[$0 * 4 + 3] > 0 }
        #expect(drawn == inked, "nothing drawn but the glyphs")
        return perScalar
    }

    @Test("\"Grüße €\" shows each glyph's ink where it is laid out, and advances by FreeType's sum", arguments: [3, 2] as [Int32])
    func umlautsAndEuro(glesVersion: Int32) throws {
        let target = try OffscreenTarget(width: 160, height: 48)
        let atlas = try GlyphAtlas(pixelSizes: [20])
        let renderer = try Renderer(atlas: atlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 160, height: 48, clearColor: RGBA(0, 0, 0, 0))
        let advance = renderer.addText(layer, "Grüße €", x: 10, baseline: 30, face: 0, color: RGBA(1, 1, 1, 1))
        renderer.endFrame()
        #expect(advance == 81, "G 16 + r 8 + ü 13 + ß 13 + e 12 + space 6 + € 13")
        #expect(renderer.measure("Grüße €", face: 0) == advance)
        let ink = expectGlyphs("Grüße €", x: 10, baseline: 30, atlas: atlas, in: target.pixels(), width: 160, height: 48)
        #expect(ink[2] > 20 && ink[3] > 20 && ink[6] > 20, "ü, ß and € are drawn: \(ink)")
    }

    @Test("the same text on later frames: no FreeType rasterisation, no texture upload, no storage grown; same pixels")
    func warmFrames() throws {
        let target = try OffscreenTarget(width: 256, height: 48)
        let atlas = try GlyphAtlas(pixelSizes: [14])
        let renderer = try Renderer(atlas: atlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        let text = "Grüße, Ελλάδα, Привет, €"
        func frame() -> [UInt8] {
            renderer.beginFrame(width: 256, height: 48, clearColor: RGBA(0, 0, 0, 0), bufferAge: 0)
            renderer.addText(layer, text, x: 4, baseline: 30, face: 0, color: RGBA(1, 1, 1, 1))
            renderer.endFrame()
            return target.pixels()
        }
        let first = frame()
        let rasterised = atlas.rasterisedGlyphs, uploads = renderer.shared.atlasUploads
        #expect(rasterised == Set(text.unicodeScalars.filter { $0.value >= 128 }).count, "each non-ASCII scalar once")
        #expect(uploads == 2, "whole at set-up, then the band of new glyphs once")
        let storage = (atlas.pixels.capacity, atlas.cachedGlyphs, renderer.layers[layer].glyphs.capacity)
        for _ in 0..<3 {
            #expect(frame() == first)
            #expect(atlas.rasterisedGlyphs == rasterised && renderer.shared.atlasUploads == uploads)
            #expect((atlas.pixels.capacity, atlas.cachedGlyphs, renderer.layers[layer].glyphs.capacity) == storage)
        }
        expectGlyphs(text, x: 4, baseline: 30, atlas: atlas, in: first, width: 256, height: 48)
    }

    @Test("invalid UTF-8 draws U+FFFD, a character the font lacks its .notdef box; no crash, advance as measured")
    func replacements() throws {
        let target = try OffscreenTarget(width: 128, height: 40)
        let atlas = try GlyphAtlas(pixelSizes: [14])
        let renderer = try Renderer(atlas: atlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        let invalid: [UInt8] = [0x47, 0xFF, 0xC3, 0x28, 0xE2, 0x82]
        renderer.beginFrame(width: 128, height: 40, clearColor: RGBA(0, 0, 0, 0))
        let first = renderer.addText(layer, invalid, x: 4, baseline: 16, face: 0, color: RGBA(1, 1, 1, 1))
        let second = renderer.addText(layer, "中\u{10FFFF}", x: 4, baseline: 34, face: 0, color: RGBA(1, 1, 1, 1))
        renderer.endFrame()
        let replacement = String(decoding: invalid, as: UTF8.self)
        #expect(replacement == "G\u{FFFD}\u{FFFD}(\u{FFFD}")
        #expect(first == renderer.measure(replacement, face: 0) && first == renderer.measure(invalid, face: 0))
        let box = atlas.replacementGlyph(face: 0)
        #expect(second == Float(2 * box.advance))
        // U+FFFD reaches over its neighbours: the alpha expected is every glyph's coverage composited.
        var expected = [Double](repeating: 0, count: 128 * 40)
        for (line, baseline) in [(replacement, Int32(16)), ("中\u{10FFFF}", 34)] {
            forEachTextPixel(line, x: 4, baseline: baseline, face: 0, atlas: atlas) { _, _, px, py, coverage in
                let a = Double(coverage) / 255
                expected[py * 128 + px] = a + expected[py * 128 + px] * (1 - a)
            }
        }
        let pixels = target.pixels()
        let off = (0..<(128 * 40)).filter { abs(Double(pixels[$0 * 4 + 3]) - expected[$0] * 255) > 2 }
        #expect(off.isEmpty, "pixels off the glyphs' coverage: \(off.prefix(8).map { ($0 % 128, $0 / 128) })")
        #expect(expected.count { $0 > 0 } > 150, "ink for U+FFFD and the boxes")
        #expect(atlas.glyph("中", face: 0) == box)
    }

    @Test("glyphs added after the atlas grew reach the texture of every renderer that shares the atlas")
    func grownAtlasShared() throws {
        let target = try OffscreenTarget(width: 256, height: 40)
        let atlas = try GlyphAtlas(pixelSizes: [14], size: 192)
        let early = try Renderer(atlas: atlas, glesMajorVersion: target.context.glesMajorVersion)
        // Enough new glyphs to fill the 192 rows: the bitmap doubles.
        let filler = String(String.UnicodeScalarView((0x0400...0x04FF).compactMap(Unicode.Scalar.init)))
        _ = atlas.measure(filler, face: 0)
        #expect(atlas.height == 384)
        let late = try Renderer(atlas: atlas, glesMajorVersion: target.context.glesMajorVersion)
        let text = "Ѐ ѯ Ӿ Ω ŵ"  // the first three from the filler (one placed after growing), two new now
        #expect(atlas.glyph("Ӿ", face: 0).atlasY >= 192, "placed in the new rows")
        for renderer in [early, late] {
            let layer = renderer.makeLayer()
            renderer.beginFrame(width: 256, height: 40, clearColor: RGBA(0, 0, 0, 0))
            renderer.addText(layer, text, x: 4, baseline: 28, face: 0, color: RGBA(1, 1, 1, 1))
            renderer.endFrame()
            expectGlyphs(text, x: 4, baseline: 28, atlas: atlas, in: target.pixels(), width: 256, height: 40)
        }
    }
}
