@testable import GLESRenderer
import Testing

/// The one instance encoding of the renderer's layers and the scroll cache's rows, without GL.
@Suite("Instance encoding")
struct InstanceEncoderTests {
    @Test("a rectangle is x y w h r g b a radius; a glyph is x y w h r g b a and its atlas place")
    func layouts() {
        var rects = ContiguousArray<Float>()
        InstanceEncoder.appendRect(x: 1, y: 2, width: 3, height: 4, color: RGBA(0.1, 0.2, 0.3, 0.4), cornerRadius: 5, to: &rects)
        #expect(Array(rects) == [1, 2, 3, 4, 0.1, 0.2, 0.3, 0.4, 5])
        #expect(rects.count == RectGlyphPrograms.rectFloats)
        var glyphs = ContiguousArray<Float>()
        let glyph = GlyphAtlas.Glyph(atlasX: 30, atlasY: 40, width: 7, height: 9, bearingX: 1, bearingY: 8, advance: 8)
        InstanceEncoder.appendGlyph(glyph, x: 10, y: 12, color: RGBA(1, 0.5, 0.25, 1), to: &glyphs)
        #expect(Array(glyphs) == [10, 12, 7, 9, 1, 0.5, 0.25, 1, 30, 40, 7, 9])
        #expect(glyphs.count == RectGlyphPrograms.glyphFloats)
    }

    @Test("text is laid out pen by pen from the baseline; blanks advance but place nothing")
    func text() throws {
        let face = sharedAtlas.faces[0]
        var placed: [(Float, Float, Float, Float)] = []
        let advance = InstanceEncoder.layOutText("A B".unicodeScalars, atlas: sharedAtlas, face: 0, x: 10, baseline: 50) { _, x, y, w, h in
            placed.append((x, y, w, h))
        }
        let a = face.glyph(UInt8(ascii: "A")), space = face.glyph(UInt8(ascii: " ")), b = face.glyph(UInt8(ascii: "B"))
        #expect(advance == Float(a.advance + space.advance + b.advance))
        #expect(placed.count == 2)
        #expect(placed[0] == (10 + Float(a.bearingX), 50 - Float(a.bearingY), Float(a.width), Float(a.height)))
        let bx = 10 + Float(a.advance + space.advance + b.bearingX)
        #expect(placed[1] == (bx, 50 - Float(b.bearingY), Float(b.width), Float(b.height)))
    }
}
