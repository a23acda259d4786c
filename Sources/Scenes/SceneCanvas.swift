import GLESRenderer

/// What a scene drawn into one layer at the surface's size keeps: the renderer, its layer, and
/// the size, which follows ``Scene/resize(width:height:)``. The scenes that draw against the
/// surface's edges (quad, follow) hold one, so their set-up and resizing are one piece of code.
struct SceneCanvas {
    let renderer: Renderer
    let layer: Renderer.LayerID
    private(set) var width: Int32, height: Int32

    /// Makes the scene's layer, with room for `count` rectangles.
    init(renderer: Renderer, reserving count: Int, width: Int32, height: Int32) {
        self.renderer = renderer
        self.width = width
        self.height = height
        layer = renderer.makeLayer(reserving: count)
    }

    mutating func resize(width: Int32, height: Int32) { self.width = width; self.height = height }

    /// The left edge of a square of `side` pixels that has travelled `distance` pixels back and
    /// forth across the width, turning at either edge.
    func bouncingLeft(distance: Double, side: Float) -> Float {
        let span = Double(max(1, Float(width) - side))
        let phase = distance.truncatingRemainder(dividingBy: 2 * span)
        return Float(phase < span ? phase : 2 * span - phase)
    }

    /// Adds a rectangle to the scene's layer.
    func addRect(_ rect: Rect, color: RGBA, cornerRadius: Float = 0) {
        renderer.addRect(layer, rect, color: color, cornerRadius: cornerRadius)
    }
}
