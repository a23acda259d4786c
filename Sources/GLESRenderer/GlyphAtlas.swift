internal import CFreeType
import Glibc

/// Printable ASCII glyphs of one font at a few pixel sizes, rasterised once by FreeType and packed
/// into one 8-bit coverage bitmap (shelf packing). The renderer uploads it once as a texture; the
/// plotter draws from it on the CPU.
///
/// At a ``scale`` above 1 (HiDPI) each face is rasterised at its size × scale pixels, so text
/// drawn at that scale has the display's own resolution; ``Face`` metrics and glyphs are then in
/// those pixels (`Renderer` lays text out in them and reports points).
public final class GlyphAtlas {
    public struct Glyph: Sendable {
        /// Position and size in the atlas, pixels.
        public var atlasX: Int32, atlasY: Int32, width: Int32, height: Int32
        /// Offset from the pen position on the baseline to the bitmap's top-left.
        public var bearingX: Int32, bearingY: Int32
        public var advance: Int32
    }

    public struct Face: Sendable {
        /// The size rasterised, pixels (the size asked for × the atlas's scale).
        public var pixelSize: Int32
        public var ascender: Int32
        public var descender: Int32
        public var lineHeight: Int32
        fileprivate var glyphs: [Glyph]  // index = byte − 32
    }

    public enum LoadError: Error, CustomStringConvertible {
        case noFont(tried: [String])
        case freetype(String, Int32)
        case atlasFull(Int32)
        public var description: String {
            switch self {
            case .noFont(let tried): "no font found (tried \(tried.joined(separator: ", "))); apt-get install fonts-dejavu-core"
            case .freetype(let op, let code): "FreeType: \(op) failed (error \(code))"
            case .atlasFull(let size): "glyph atlas of \(size)×\(size) is too small for these font sizes"
            }
        }
    }

    public static let defaultFontPaths = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf"
    ]

    public let width: Int32
    public let height: Int32
    /// Coverage, one byte per pixel, rows top to bottom.
    public private(set) var pixels: [UInt8]
    public private(set) var faces: [Face] = []
    public let fontPath: String
    /// The sizes asked for (pixels at scale 1, points at another), one per face.
    public let requestedSizes: [Int32]
    /// The bitmap's side asked for at scale 1.
    public let requestedSide: Int32
    /// The scale the faces are rasterised at: face `i` is `requestedSizes[i]` × scale pixels.
    public let scale: Double

    /// Rasterises ASCII 32…126 at each of `pixelSizes` × `scale` pixels (rounded) from the first
    /// font that exists, into a square bitmap `size` × `scale` pixels wide (4096 at most).
    public init(
        pixelSizes: [Int32], fontPaths: [String] = GlyphAtlas.defaultFontPaths, size: Int32 = 512, scale: Double = 1
    ) throws {
        guard let path = fontPaths.first(where: { access($0, R_OK) == 0 }) else { throw LoadError.noFont(tried: fontPaths) }
        fontPath = path
        requestedSizes = pixelSizes
        requestedSide = size
        self.scale = scale
        let size = scale == 1 ? size : Int32(min(4096, (Double(size) * max(1, scale)).rounded(.up)))
        width = size
        height = size
        pixels = [UInt8](repeating: 0, count: Int(size * size))
        var library: FT_Library?
        var status = FT_Init_FreeType(&library)
        guard status == 0, let library else { throw LoadError.freetype("FT_Init_FreeType", status) }
        defer { FT_Done_FreeType(library) }
        var face: FT_Face?
        status = FT_New_Face(library, path, 0, &face)
        guard status == 0, let face else { throw LoadError.freetype("FT_New_Face(\(path))", status) }
        defer { FT_Done_Face(face) }

        var penX: Int32 = 1, penY: Int32 = 1, shelfHeight: Int32 = 0
        for requested in pixelSizes {
            let pixelSize = max(1, Int32((Double(requested) * scale).rounded()))
            status = FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixelSize))
            guard status == 0 else { throw LoadError.freetype("FT_Set_Pixel_Sizes(\(pixelSize))", status) }
            let metrics = face.pointee.size.pointee.metrics
            var glyphs: [Glyph] = []
            glyphs.reserveCapacity(95)
            for code in 32...126 {
                status = FT_Load_Char(face, FT_ULong(code), FT_Int32(4 /* FT_LOAD_RENDER */))
                guard status == 0 else { throw LoadError.freetype("FT_Load_Char(\(code))", status) }
                let slot = face.pointee.glyph!.pointee
                let bitmap = slot.bitmap
                let w = Int32(bitmap.width), h = Int32(bitmap.rows)
                if penX + w + 1 > size {
                    penX = 1
                    penY += shelfHeight + 1
                    shelfHeight = 0
                }
                guard penY + h + 1 <= size else { throw LoadError.atlasFull(size) }
                if let buffer = bitmap.buffer {
                    for row in 0..<h {
                        let source = buffer + Int(row) * Int(bitmap.pitch)
                        let destination = Int((penY + row) * size + penX)
                        for column in 0..<Int(w) { pixels[destination + column] = source[column] }
                    }
                }
                glyphs.append(
                    Glyph(
                        atlasX: penX, atlasY: penY, width: w, height: h,
                        bearingX: slot.bitmap_left, bearingY: slot.bitmap_top,
                        advance: Int32(slot.advance.x >> 6)))
                penX += w + 1
                shelfHeight = max(shelfHeight, h)
            }
            faces.append(
                Face(
                    pixelSize: pixelSize, ascender: Int32(metrics.ascender >> 6),
                    descender: Int32(metrics.descender >> 6), lineHeight: Int32(metrics.height >> 6),
                    glyphs: glyphs))
        }
    }

    /// The glyph for an ASCII byte in face `face` (unprintable bytes draw as '?').
    public func glyph(_ byte: UInt8, face: Int) -> Glyph {
        faces[face].glyph(byte)
    }

    /// The advance width of `text` in `face`.
    public func measure<C: Collection>(_ text: C, face: Int) -> Int32 where C.Element == UInt8 {
        var w: Int32 = 0
        for b in text { w += faces[face].glyph(b).advance }
        return w
    }
}

extension GlyphAtlas.Face {
    public func glyph(_ byte: UInt8) -> GlyphAtlas.Glyph {
        let index = (byte >= 32 && byte <= 126) ? Int(byte) - 32 : Int(UInt8(ascii: "?")) - 32
        return glyphs[index]
    }
}
