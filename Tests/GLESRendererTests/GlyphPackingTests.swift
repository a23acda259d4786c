@testable import GLESRenderer
import Testing

/// The pure parts of on-demand glyphs: where the packer puts bitmaps, how the table finds them,
/// and how UTF-8 bytes become scalars.
@Suite("Glyph packing, table and UTF-8 decoding")
struct GlyphPackingTests {
    @Test("the shelf packer places left to right, opens a shelf below the tallest, refuses without changing, and grows")
    func shelfPacker() {
        func at(_ place: (x: Int32, y: Int32)?) -> [Int32]? { place.map { [$0.x, $0.y] } }
        var packer = ShelfPacker(width: 10, height: 10)
        let place1 = packer.place(width: 3, height: 2)
        #expect(at(place1) == [1, 1])
        let place2 = packer.place(width: 3, height: 4)
        #expect(at(place2) == [5, 1])
        #expect(packer.usedBottom == 5)
        let place3 = packer.place(width: 0, height: 0)
        #expect(at(place3) == [9, 1], "an empty bitmap takes a place and a pixel")
        let place4 = packer.place(width: 3, height: 1)
        #expect(at(place4) == [1, 6], "a new shelf one pixel below the tallest (4 rows from row 1)")
        #expect(packer.shelfTop == 6 && packer.usedBottom == 7 && packer.placed == 4)
        let before = packer
        let place5 = packer.place(width: 2, height: 4)
        #expect(place5 == nil, "rows 6…9 and a margin do not fit in 10")
        let place6 = packer.place(width: 9, height: 1)
        #expect(place6 == nil, "wider than the bitmap less its margins")
        #expect(packer == before, "a refusal changes nothing")
        packer.grow(toHeight: 20)
        let place7 = packer.place(width: 2, height: 4)
        #expect(at(place7) == [5, 6], "after growing, on the same shelf")
        #expect(packer.usedBottom == 10 && packer.placed == 5 && packer.height == 20)
        packer.grow(toHeight: 5)
        #expect(packer.height == 20, "never shrinks")
    }

    @Test("the glyph table probes linearly from a Fibonacci hash, wraps, replaces, and refuses new keys when full")
    func glyphTable() {
        func glyph(_ n: Int32) -> GlyphAtlas.Glyph {
            GlyphAtlas.Glyph(atlasX: n, atlasY: n + 1, width: 2, height: 3, bearingX: 0, bearingY: 3, advance: n)
        }
        var table = GlyphTable(capacity: 3)
        #expect(table.slotCount == 8)
        // 0xC2, 0xC7 and 0xCF all hash to slot 7 of 8: (key × 0x9E3779B97F4A7C15) >> 61.
        #expect(table.home(0xC2) == 7 && table.home(0xC7) == 7 && table.home(0xCF) == 7 && table.home(0xE9) == 0)
        let inserted =
            [table.insert(glyph(1), face: 0, scalar: 0xC2), table.insert(glyph(2), face: 0, scalar: 0xC7)]
            + [table.insert(glyph(3), face: 0, scalar: 0xCF)]
        #expect(inserted == [true, true, true])
        #expect(table.slot(face: 0, scalar: 0xC2) == 7 && table.slot(face: 0, scalar: 0xC7) == 0 && table.slot(face: 0, scalar: 0xCF) == 1)
        #expect(table.count == 3)
        let refused = !table.insert(glyph(4), face: 0, scalar: 0xE9)
        #expect(refused, "full: a new key is refused")
        #expect(table.find(face: 0, scalar: 0xE9) == nil && table.count == 3)
        let replaced = table.insert(glyph(5), face: 0, scalar: 0xC7)
        #expect(replaced, "full, but an existing key is replaced")
        #expect(table.find(face: 0, scalar: 0xC2) == glyph(1))
        #expect(table.find(face: 0, scalar: 0xC7) == glyph(5))
        #expect(table.find(face: 0, scalar: 0xCF) == glyph(3))
        #expect(table.find(face: 1, scalar: 0xC2) == nil, "faces are apart")
        #expect(GlyphTable.key(face: 1, scalar: 0xC2) == 0x1_0000_00C2)
    }

    @Test("UTF-8 bytes decode to scalars; each ill-formed sequence is one U+FFFD, as String(decoding:as:) makes it")
    func utf8Scalars() {
        let text = "Grüße, Ελλάδα, Привет, €"
        #expect(Array(UTF8Scalars(Array(text.utf8))) == Array(text.unicodeScalars))
        let invalid: [UInt8] = [0x47, 0xFF, 0xC3, 0x28, 0xE2, 0x82]  // G, a stray byte, a broken pair, a truncated triple
        let decoded = Array(UTF8Scalars(invalid))
        #expect(decoded == ["G", "\u{FFFD}", "\u{FFFD}", "(", "\u{FFFD}"])
        #expect(decoded == Array(String(decoding: invalid, as: UTF8.self).unicodeScalars))
        #expect(Array(UTF8Scalars([0xED, 0xA0, 0x80] as [UInt8])).allSatisfy { $0 == "\u{FFFD}" }, "a surrogate is ill-formed")
        #expect(Array(UTF8Scalars([UInt8]())).isEmpty)
    }
}
