/// Text in a layer: Unicode scalars laid out with the atlas's glyphs (`InstanceEncoder`), in
/// points, drawn at the renderer's scale.
extension Renderer {
    /// Text with its baseline starting at (x, baseline) (points), in atlas face `face`: its
    /// Unicode scalars, each drawn with the font's glyph (rasterised into the atlas the first
    /// time; a character the font lacks draws as a box). Returns the advance width drawn, in points.
    @discardableResult
    public func addText<S: StringProtocol>(
        _ layer: LayerID, _ text: S, x: Float, baseline: Float, face: Int, color: RGBA
    ) -> Float {
        addText(layer, scalars: text.unicodeScalars, x: x, baseline: baseline, face: face, color: color)
    }

    /// UTF-8 text (e.g. a ``TextBuffer``'s bytes) as `addText(_:_:x:baseline:face:color:)` with a `String`;
    /// each ill-formed sequence draws as U+FFFD.
    @discardableResult
    public func addText<C: Collection>(
        _ layer: LayerID, _ text: C, x: Float, baseline: Float, face: Int,
        color: RGBA
    ) -> Float where C.Element == UInt8 {
        addText(layer, scalars: UTF8Scalars(text), x: x, baseline: baseline, face: face, color: color)
    }

    private func addText<S: Sequence>(
        _ layer: LayerID, scalars: S, x: Float, baseline: Float, face: Int, color: RGBA
    ) -> Float where S.Element == Unicode.Scalar {
        // Laid out in the atlas's pixels (rasterised at this scale): glyphs keep their own pixels.
        let advance = InstanceEncoder.layOutText(scalars, atlas: atlas, face: face, x: x * scale, baseline: baseline * scale) {
            glyph, gx, gy, w, h in
            guard isVisible(layer, gx, gy, w, h) else { return }
            InstanceEncoder.appendGlyph(glyph, x: gx, y: gy, color: color, to: &layers[layer].glyphs)
            layers[layer].bounds.add(gx, gy, w, h)
        }
        return advance / scale
    }
}
