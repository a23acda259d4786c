import EGLGraphics
import GLESRenderer

/// A surfaceless EGL context with an RGBA pbuffer: the renderer's offscreen target in tests.
final class OffscreenTarget {
    let context: EGLDisplayContext
    let surface: EGLWindowSurface
    let width: Int32, height: Int32

    init(width: Int32 = 256, height: Int32 = 256) throws {
        context = try EGLDisplayContext(platform: .surfaceless, alpha: true)
        surface = try EGLWindowSurface(context: context, pbufferWidth: width, height: height)
        try surface.beginFrame()
        self.width = width
        self.height = height
    }

    func pixels() -> [UInt8] { Renderer.readPixels(width: width, height: height) }
}

extension Array where Element == UInt8 {
    /// The RGBA of pixel (x, y), top-left origin, in an image `width` wide.
    func rgba(_ x: Int, _ y: Int, width: Int32) -> [UInt8] {
        let i = (y * Int(width) + x) * 4
        return Array(self[i..<i + 4])
    }
}

/// Walks the pixels of `text` as the renderer lays it out from `x` on `baseline` (pixels) in
/// `face` of `atlas` (``sharedAtlas`` unless given): each one's byte, position and the glyph's
/// coverage there. Returns where the pen ends.
@discardableResult
func forEachTextPixel(
    _ text: [UInt8], x: Int32, baseline: Int32, face: Int, atlas: GlyphAtlas = sharedAtlas,
    _ body: (_ byte: UInt8, _ x: Int, _ y: Int, _ coverage: UInt8) -> Void
) -> Int32 {
    var pen = x
    for byte in text {
        let g = atlas.glyph(byte, face: face)
        for gy in 0..<g.height {
            for gx in 0..<g.width {
                let coverage = atlas.pixels[Int((g.atlasY + gy) * atlas.width + g.atlasX + gx)]
                body(byte, Int(pen + g.bearingX + gx), Int(baseline - g.bearingY + gy), coverage)
            }
        }
        pen += g.advance
    }
    return pen
}

/// Walks the pixels of `text` scalar by scalar, as ``forEachTextPixel(_:x:baseline:face:atlas:_:)-([UInt8],_,_,_,_,_)``
/// does bytes (glyphs not yet in `atlas` are rasterised): each scalar's index and value, position
/// and coverage. Returns where the pen ends.
@discardableResult
func forEachTextPixel(
    _ text: String, x: Int32, baseline: Int32, face: Int, atlas: GlyphAtlas,
    _ body: (_ index: Int, _ scalar: Unicode.Scalar, _ x: Int, _ y: Int, _ coverage: UInt8) -> Void
) -> Int32 {
    var pen = x
    for (index, scalar) in text.unicodeScalars.enumerated() {
        let g = atlas.glyph(scalar, face: face)
        for gy in 0..<g.height {
            for gx in 0..<g.width {
                let coverage = atlas.pixels[Int((g.atlasY + gy) * atlas.width + g.atlasX + gx)]
                body(index, scalar, Int(pen + g.bearingX + gx), Int(baseline - g.bearingY + gy), coverage)
            }
        }
        pen += g.advance
    }
    return pen
}

/// One atlas for all tests (FreeType rasterising is the slow part).
nonisolated(unsafe) let sharedAtlas: GlyphAtlas = try! GlyphAtlas(pixelSizes: [14, 20])
