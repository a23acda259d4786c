internal import CFreeType

/// One font opened with FreeType for as long as its atlas lives: the atlas rasterises glyphs from
/// it when text first needs them, not only at set-up.
final class FontRasterizer {
    /// A glyph rendered as 8-bit coverage, valid until the next render: FreeType's glyph slot.
    struct Bitmap {
        var width: Int32, height: Int32
        /// Bytes from one row to the next (FreeType's pitch: negative when rows are stored bottom up).
        var pitch: Int32
        var buffer: UnsafePointer<UInt8>?
        var bearingX: Int32, bearingY: Int32, advance: Int32

        /// Row `row` (0 is the top) of the bitmap.
        func row(_ row: Int32) -> UnsafePointer<UInt8>? {
            guard let buffer else { return nil }
            let stored = pitch >= 0 ? row : height - 1 - row
            return buffer + Int(stored) * Int(abs(pitch))
        }
    }

    private let library: FT_Library
    private let face: FT_Face
    /// The pixel size set on the face last (setting it again costs a little).
    private var currentSize: Int32 = 0

    init(path: String) throws(GlyphAtlas.LoadError) {
        var library: FT_Library?
        var status = FT_Init_FreeType(&library)
        guard status == 0, let library else { throw .freetype("FT_Init_FreeType", status) }
        var face: FT_Face?
        status = FT_New_Face(library, path, 0, &face)
        guard status == 0, let face else {
            FT_Done_FreeType(library)
            throw .freetype("FT_New_Face(\(path))", status)
        }
        self.library = library
        self.face = face
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    /// Vertical metrics at `pixelSize`: ascender, descender (negative) and line height, pixels.
    func metrics(pixelSize: Int32) throws(GlyphAtlas.LoadError) -> (ascender: Int32, descender: Int32, lineHeight: Int32) {
        try setSize(pixelSize)
        let metrics = face.pointee.size.pointee.metrics
        return (Int32(metrics.ascender >> 6), Int32(metrics.descender >> 6), Int32(metrics.height >> 6))
    }

    /// The font's glyph for a character code; 0 (its .notdef) when it has none.
    func glyphIndex(_ code: UInt32) -> UInt32 {
        UInt32(FT_Get_Char_Index(face, FT_ULong(code)))
    }

    /// Renders glyph `index` at `pixelSize` and calls `body` with it; nil when FreeType fails.
    func render<R>(index: UInt32, pixelSize: Int32, _ body: (Bitmap) -> R) -> R? {
        guard (try? setSize(pixelSize)) != nil else { return nil }
        guard FT_Load_Glyph(face, FT_UInt(index), FT_Int32(4 /* FT_LOAD_RENDER */)) == 0, let slot = face.pointee.glyph else { return nil }
        return body(Self.bitmap(slot.pointee))
    }

    /// Renders the character `code` (as ``render(index:pixelSize:_:)``, through FreeType's
    /// character map in one call); throws when FreeType fails.
    func render<R>(character code: UInt32, pixelSize: Int32, _ body: (Bitmap) -> R) throws(GlyphAtlas.LoadError) -> R {
        try setSize(pixelSize)
        let status = FT_Load_Char(face, FT_ULong(code), FT_Int32(4 /* FT_LOAD_RENDER */))
        guard status == 0, let slot = face.pointee.glyph else { throw .freetype("FT_Load_Char(\(code))", status) }
        return body(Self.bitmap(slot.pointee))
    }

    private static func bitmap(_ slot: FT_GlyphSlotRec) -> Bitmap {
        let bitmap = slot.bitmap
        return Bitmap(
            width: Int32(bitmap.width), height: Int32(bitmap.rows), pitch: Int32(bitmap.pitch),
            buffer: bitmap.buffer.map { UnsafePointer($0) },
            bearingX: slot.bitmap_left, bearingY: slot.bitmap_top, advance: Int32(slot.advance.x >> 6))
    }

    private func setSize(_ pixelSize: Int32) throws(GlyphAtlas.LoadError) {
        guard pixelSize != currentSize else { return }
        let status = FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelSize))
        guard status == 0 else { throw .freetype("FT_Set_Pixel_Sizes(\(pixelSize))", status) }
        currentSize = pixelSize
    }
}
