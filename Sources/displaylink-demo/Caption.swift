import GLESRenderer

/// A line of text under the scene (`--caption`), laid out anew every frame in a layer of its
/// own, as a kiosk draws a localised label: with non-ASCII text it puts glyphs rasterised on
/// demand on the per-frame path, where the allocation probe counts.
@MainActor
struct Caption {
    let text: String
    let layer: Renderer.LayerID

    init?(_ text: String?, renderer: Renderer) {
        guard let text, !text.isEmpty else { return nil }
        self.text = text
        layer = renderer.makeLayer(reserving: text.unicodeScalars.count)
    }

    /// Adds the line at the bottom left of a viewport `height` pixels high.
    func draw(_ renderer: Renderer, height: Int32) {
        renderer.addText(layer, text, x: 8, baseline: Float(height) / renderer.scale - 8, face: 0, color: RGBA(1, 1, 1))
    }
}
