@testable import GLESRenderer
import Testing

/// Glyphs beyond ASCII rasterised on demand (no GL): once each, remembered, the replacement for
/// what the font lacks, and a full atlas that grows, then substitutes. Exact advances are those of
/// DejaVu Sans 2.37 as FreeType 2.12 hints them (Debian 12).
@Suite("Glyph atlas: Unicode on demand")
struct UnicodeAtlasTests {
    @Test("a scalar is rasterised the first time it is asked for, never again; advances are FreeType's")
    func onDemandOnce() throws {
        let atlas = try GlyphAtlas(pixelSizes: [20])
        #expect(atlas.rasterisedGlyphs == 0 && atlas.cachedGlyphs == 0)
        let placedBefore = atlas.packer.placed
        let u = atlas.glyph("ü", face: 0), sharp = atlas.glyph("ß", face: 0), euro = atlas.glyph("€", face: 0)
        #expect((u.advance, sharp.advance, euro.advance) == (13, 13, 13))
        #expect((euro.width, euro.height) == (12, 15))
        #expect(atlas.rasterisedGlyphs == 3 && atlas.cachedGlyphs == 3 && atlas.packer.placed == placedBefore + 3)
        // G 16, r 8, ü 13, ß 13, e 12, space 6, € 13: FreeType's sum.
        #expect(atlas.measure("Grüße €", face: 0) == 81)
        #expect(atlas.measure(Array("Grüße €".utf8), face: 0) == 81)
        #expect(atlas.glyph("ü", face: 0) == u)
        #expect(atlas.rasterisedGlyphs == 3, "measured and looked up again: nothing rasterised")
        // Its coverage is in the bitmap where the glyph says.
        var ink = 0
        for y in 0..<euro.height {
            for x in 0..<euro.width { ink += Int(atlas.pixels[Int((euro.atlasY + y) * atlas.width + euro.atlasX + x)]) }
        }
        #expect(ink > 255 * 20)
    }

    @Test("ASCII stays where it was: no FreeType call, control characters as '?'")
    func asciiUnchanged() throws {
        let atlas = try GlyphAtlas(pixelSizes: [14, 20])
        for byte in UInt8(32)...126 {
            #expect(atlas.glyph(Unicode.Scalar(byte), face: 1) == atlas.glyph(byte, face: 1))
            #expect(atlas.glyph(byte, face: 0) == atlas.faces[0].glyph(byte))
        }
        #expect(atlas.glyph("\n", face: 0) == atlas.glyph(UInt8(ascii: "?"), face: 0))
        #expect(atlas.rasterisedGlyphs == 0)
    }

    @Test("a scalar the font lacks draws the .notdef box, remembered without rasterising")
    func missingGlyph() throws {
        let atlas = try GlyphAtlas(pixelSizes: [14])
        let box = atlas.replacementGlyph(face: 0)
        #expect(box.width > 0 && box.height > 0, "DejaVu's .notdef is a box")
        #expect(atlas.glyph("中", face: 0) == box)
        #expect(atlas.glyph("\u{10FFFF}", face: 0) == box)
        #expect(atlas.rasterisedGlyphs == 0 && atlas.cachedGlyphs == 2)
        #expect(atlas.glyph("\u{FFFD}", face: 0) != box, "DejaVu has U+FFFD, which invalid UTF-8 draws")
    }

    @Test("a full table substitutes the replacement without FreeType; it never grows")
    func fullTable() throws {
        let atlas = try GlyphAtlas(pixelSizes: [14], glyphCapacity: 2)
        let a = atlas.glyph("ä", face: 0), o = atlas.glyph("ö", face: 0)
        #expect(a != o && atlas.rasterisedGlyphs == 2)
        #expect(atlas.glyph("ü", face: 0) == atlas.replacementGlyph(face: 0))
        #expect(atlas.glyph("ü", face: 0) == atlas.replacementGlyph(face: 0))
        #expect(atlas.rasterisedGlyphs == 2 && atlas.cachedGlyphs == 2 && atlas.glyph("ä", face: 0) == a)
    }

    @Test("a full bitmap doubles its height once (glyphs keep their places and pixels), then substitutes")
    func growThenSubstitute() throws {
        let atlas = try GlyphAtlas(pixelSizes: [14], size: 192)
        #expect(atlas.height == 192)
        atlas.maximumHeight = 384
        let first = atlas.glyph("А", face: 0)  // Cyrillic A
        func coverage(_ g: GlyphAtlas.Glyph) -> [UInt8] {
            (0..<Int(g.height)).flatMap { y in
                (0..<Int(g.width)).map { x in atlas.pixels[(Int(g.atlasY) + y) * Int(atlas.width) + Int(g.atlasX) + x] }
            }
        }
        let firstCoverage = coverage(first)
        let scalars =
            (0x0400...0x04FF).compactMap(Unicode.Scalar.init) + (0x0370...0x03FF).compactMap(Unicode.Scalar.init)
            + (0x0100...0x017F).compactMap(Unicode.Scalar.init) + (0x1E00...0x1EFF).compactMap(Unicode.Scalar.init)
        var grewAt: Int?
        var substituted = 0
        for (i, scalar) in scalars.enumerated() {
            let g = atlas.glyph(scalar, face: 0)
            if grewAt == nil && atlas.height > 192 { grewAt = i }
            if g == atlas.replacementGlyph(face: 0) && atlas.rasterizer.glyphIndex(scalar.value) != 0 { substituted += 1 }
        }
        #expect(grewAt != nil, "it grew")
        #expect(atlas.height == 384 && atlas.pixels.count == 192 * 384, "doubled once, to the limit")
        #expect(substituted > 0, "past the limit, glyphs the font has draw the replacement")
        #expect(atlas.glyph("А", face: 0) == first && coverage(first) == firstCoverage)
        let rasterised = atlas.rasterisedGlyphs
        for scalar in scalars { _ = atlas.glyph(scalar, face: 0) }
        #expect(atlas.rasterisedGlyphs == rasterised, "the substituted ones are remembered too")
    }
}
