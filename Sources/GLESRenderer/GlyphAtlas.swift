import Glibc

/// The glyphs of one font at a few pixel sizes, rasterised by FreeType and packed into one 8-bit
/// coverage bitmap (a shelf packer). The renderer draws text from it as a texture; the plotter
/// draws from it on the CPU.
///
/// Printable ASCII (32…126) is rasterised for every face at set-up, as it always was. Any other
/// Unicode scalar is rasterised the first time text needs it (`glyph(_:face:)` with a `Unicode.Scalar`),
/// packed into the free space of the bitmap and remembered in a table of fixed capacity
/// (``glyphCapacity``, made at set-up), so that text drawn again costs a table lookup, with no
/// FreeType call and no allocation. Renderers bring their textures up to date before they draw
/// (one band of rows, `glTexSubImage2D`).
///
/// When a new glyph no longer fits, the bitmap doubles its height (up to ``maximumSide``; glyphs
/// keep their places, and a renderer uploads the texture once, whole) rather than evicting: a glyph
/// evicted while a retained layer or the scroll cache still draws it would show another glyph's
/// pixels. Past that height, or when the table is full, a new character draws as the replacement
/// (the font's .notdef box), as does a character the font has no glyph for; text never fails.
///
/// At a ``scale`` above 1 (HiDPI) each face is rasterised at its size × scale pixels, so text
/// drawn at that scale has the display's own resolution; ``Face`` metrics and glyphs are then in
/// those pixels (`Renderer` lays text out in them and reports points).
///
/// Not thread-safe: glyphs are added while text is laid out. Renderers that share an atlas use it
/// on one thread at a time (as they do their GL context).
public final class GlyphAtlas {
    public struct Glyph: Sendable, Equatable {
        /// Position and size in the atlas, pixels.
        public var atlasX: Int32, atlasY: Int32, width: Int32, height: Int32
        /// Offset from the pen position on the baseline to the bitmap's top-left.
        public var bearingX: Int32, bearingY: Int32
        public var advance: Int32

        public init(atlasX: Int32, atlasY: Int32, width: Int32, height: Int32, bearingX: Int32, bearingY: Int32, advance: Int32) {
            self.atlasX = atlasX
            self.atlasY = atlasY
            self.width = width
            self.height = height
            self.bearingX = bearingX
            self.bearingY = bearingY
            self.advance = advance
        }
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

    /// The tallest the bitmap grows to (and the widest it starts): a texture side every GLES
    /// driver takes.
    public static let maximumSide: Int32 = 4096

    public let width: Int32
    /// Grows (doubles) when glyphs rasterised on demand fill it.
    public internal(set) var height: Int32
    /// Coverage, one byte per pixel, rows top to bottom.
    public internal(set) var pixels: [UInt8]
    public let faces: [Face]
    public let fontPath: String
    /// The sizes asked for (pixels at scale 1, points at another), one per face.
    public let requestedSizes: [Int32]
    /// The bitmap's side asked for at scale 1.
    public let requestedSide: Int32
    /// The scale the faces are rasterised at: face `i` is `requestedSizes[i]` × scale pixels.
    public let scale: Double
    /// How many glyphs beyond ASCII it remembers at most (per atlas, all faces together).
    public var glyphCapacity: Int { table.capacity }
    /// How many glyphs beyond ASCII it remembers now.
    public var cachedGlyphs: Int { table.count }
    /// Glyphs FreeType rasterised on demand since set-up (a count for tests and statistics: text
    /// drawn again adds none).
    public internal(set) var rasterisedGlyphs = 0

    /// Printable ASCII of every face, face after face (index face × 95 + byte − 32).
    let asciiGlyphs: ContiguousArray<Glyph>
    /// Each face's replacement: the font's .notdef (else '?').
    let replacements: ContiguousArray<Glyph>
    var table: GlyphTable
    var packer: ShelfPacker
    let rasterizer: FontRasterizer
    /// The tallest the bitmap may grow (``maximumSide``; lower in tests).
    var maximumHeight = GlyphAtlas.maximumSide

    /// Rasterises ASCII 32…126 at each of `pixelSizes` × `scale` pixels (rounded) from the first
    /// font that exists, into a square bitmap `size` × `scale` pixels wide (4096 at most), and
    /// makes room to remember `glyphCapacity` glyphs beyond ASCII, rasterised when text needs them.
    public init(
        pixelSizes: [Int32], fontPaths: [String] = GlyphAtlas.defaultFontPaths, size: Int32 = 512, scale: Double = 1,
        glyphCapacity: Int = 2048
    ) throws {
        guard let path = fontPaths.first(where: { access($0, R_OK) == 0 }) else { throw LoadError.noFont(tried: fontPaths) }
        fontPath = path
        requestedSizes = pixelSizes
        requestedSide = size
        self.scale = scale
        let size = scale == 1 ? size : Int32(min(Double(GlyphAtlas.maximumSide), (Double(size) * max(1, scale)).rounded(.up)))
        width = size
        height = size
        var pixels = [UInt8](repeating: 0, count: Int(size * size))
        let rasterizer = try FontRasterizer(path: path)
        table = GlyphTable(capacity: glyphCapacity)
        var packer = ShelfPacker(width: size, height: size)

        var faces: [Face] = []
        var ascii = ContiguousArray<Glyph>()
        ascii.reserveCapacity(95 * pixelSizes.count)
        for requested in pixelSizes {
            let pixelSize = max(1, Int32((Double(requested) * scale).rounded()))
            let metrics = try rasterizer.metrics(pixelSize: pixelSize)
            var glyphs: [Glyph] = []
            glyphs.reserveCapacity(95)
            for code in UInt32(32)...126 {
                let glyph = try rasterizer.render(character: code, pixelSize: pixelSize) { bitmap in
                    packer.place(width: bitmap.width, height: bitmap.height).map {
                        GlyphAtlas.copy(bitmap, to: $0, into: &pixels, width: size)
                    }
                }
                guard let glyph else { throw LoadError.atlasFull(size) }
                glyphs.append(glyph)
            }
            ascii.append(contentsOf: glyphs)
            faces.append(
                Face(
                    pixelSize: pixelSize, ascender: metrics.ascender, descender: metrics.descender,
                    lineHeight: metrics.lineHeight, glyphs: glyphs))
        }
        // After all of ASCII, so that ASCII keeps the places it always had.
        var replacements = ContiguousArray<Glyph>()
        for face in faces {
            let notdef = rasterizer.render(index: 0, pixelSize: face.pixelSize) { bitmap in
                packer.place(width: bitmap.width, height: bitmap.height).map {
                    GlyphAtlas.copy(bitmap, to: $0, into: &pixels, width: size)
                }
            }
            replacements.append((notdef ?? nil) ?? face.glyph(UInt8(ascii: "?")))
        }
        self.rasterizer = rasterizer
        self.faces = faces
        asciiGlyphs = ascii
        self.replacements = replacements
        self.packer = packer
        self.pixels = pixels
    }

    /// The glyph for an ASCII byte in face `face` (unprintable bytes and bytes above 126 draw as '?').
    public func glyph(_ byte: UInt8, face: Int) -> Glyph {
        let index = (byte >= 32 && byte <= 126) ? Int(byte) - 32 : Int(UInt8(ascii: "?")) - 32
        return asciiGlyphs[face * 95 + index]
    }

    /// The glyph for a Unicode scalar in face `face`, rasterised the first time it is asked for.
    /// ASCII control characters draw as '?' (as the byte overload does); a scalar the
    /// font lacks, or one that finds the atlas full, as ``replacementGlyph(face:)``.
    @inline(__always)
    public func glyph(_ scalar: Unicode.Scalar, face: Int) -> Glyph {
        let value = scalar.value
        if value < 128 { return glyph(UInt8(truncatingIfNeeded: value), face: face) }
        if let cached = table.find(face: face, scalar: value) { return cached }
        return rasterise(value, face: face)
    }

    /// What a character without a glyph draws as in face `face`: the font's .notdef (a box).
    public func replacementGlyph(face: Int) -> Glyph { replacements[face] }

    /// The advance width of UTF-8 `text` in `face` (each ill-formed sequence as U+FFFD).
    public func measure<C: Collection>(_ text: C, face: Int) -> Int32 where C.Element == UInt8 {
        measure(scalars: UTF8Scalars(text), face: face)
    }

    /// The advance width of `text` in `face`.
    public func measure<S: StringProtocol>(_ text: S, face: Int) -> Int32 {
        measure(scalars: text.unicodeScalars, face: face)
    }

    func measure<S: Sequence>(scalars: S, face: Int) -> Int32 where S.Element == Unicode.Scalar {
        var w: Int32 = 0
        for scalar in scalars { w += glyph(scalar, face: face).advance }
        return w
    }
}

extension GlyphAtlas.Face {
    /// The glyph for an ASCII byte (unprintable bytes draw as '?'); other characters: `GlyphAtlas.glyph(_:face:)` with a `Unicode.Scalar`.
    public func glyph(_ byte: UInt8) -> GlyphAtlas.Glyph {
        let index = (byte >= 32 && byte <= 126) ? Int(byte) - 32 : Int(UInt8(ascii: "?")) - 32
        return glyphs[index]
    }
}
