/// How rectangles and text become instance floats (the layouts of ``RectGlyphPrograms``): the one
/// encoding that the renderer's layers and the scroll cache's rows both use, so that the cache
/// draws the very instances a layer would.
enum InstanceEncoder {
    /// Appends a rectangle: x y w h r g b a radius.
    @inline(__always)
    static func appendRect(
        x: Float, y: Float, width: Float, height: Float, color: RGBA, cornerRadius: Float,
        to data: inout ContiguousArray<Float>
    ) {
        data.append(x); data.append(y); data.append(width); data.append(height)
        data.append(color.r); data.append(color.g); data.append(color.b); data.append(color.a)
        data.append(cornerRadius)
    }

    /// Appends a glyph with its top-left at (x, y): x y w h r g b a, then its place in the atlas u v w h.
    @inline(__always)
    static func appendGlyph(_ glyph: GlyphAtlas.Glyph, x: Float, y: Float, color: RGBA, to data: inout ContiguousArray<Float>) {
        let w = Float(glyph.width), h = Float(glyph.height)
        data.append(x); data.append(y); data.append(w); data.append(h)
        data.append(color.r); data.append(color.g); data.append(color.b); data.append(color.a)
        data.append(Float(glyph.atlasX)); data.append(Float(glyph.atlasY)); data.append(w); data.append(h)
    }

    /// Lays out text, Unicode scalar by scalar, with its baseline starting at (x, baseline) in
    /// face `face` of `atlas` (glyphs it lacks are rasterised now, once): calls `place` with each
    /// glyph that has pixels and its top-left and size (x, y, w, h), and returns the advance width.
    /// No kerning or shaping: a combining mark is drawn at the pen position (its advance, 0 in
    /// most fonts, keeps it over the character before).
    @inline(__always)
    static func layOutText<S: Sequence>(
        _ text: S, atlas: GlyphAtlas, face: Int, x: Float, baseline: Float,
        _ place: (GlyphAtlas.Glyph, Float, Float, Float, Float) -> Void
    ) -> Float
    where S.Element == Unicode.Scalar {
        var pen = x
        for scalar in text {
            let g = atlas.glyph(scalar, face: face)
            if g.width > 0 && g.height > 0 {
                place(g, pen + Float(g.bearingX), baseline - Float(g.bearingY), Float(g.width), Float(g.height))
            }
            pen += Float(g.advance)
        }
        return pen - x
    }
}
