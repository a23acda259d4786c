import DisplayLinkCore
import GLESRenderer
import Motion

/// The demo's bounce scene as the benchmark measures it: moving views updated by the frame's
/// delta time, then drawn as rounded squares into one renderer layer.
///
/// A copy of `Scenes.BounceScene`'s update and drawing, on the public products only: `Scenes` is
/// internal to the DisplayLink package, so this package cannot import it. The views, palette and
/// `addRect` calls are the scene's, so the measured work stays the demo's; keep them in step with
/// Sources/Scenes/BounceScene.swift and Scene.swift.
@MainActor
final class BounceViews {
    /// The scene's background, the frame's clear colour.
    let background = RGBA(0.07, 0.08, 0.11)
    private(set) var views: MovingViews
    private let renderer: Renderer
    private let layer: Renderer.LayerID

    /// The scene's fixed palette, indexed by each view's colour index.
    private static let palette: [RGBA] = [
        RGBA(0.96, 0.36, 0.27), RGBA(0.98, 0.69, 0.20), RGBA(0.55, 0.80, 0.30), RGBA(0.20, 0.72, 0.66),
        RGBA(0.25, 0.55, 0.95), RGBA(0.56, 0.40, 0.90), RGBA(0.90, 0.35, 0.70), RGBA(0.95, 0.95, 0.95)
    ]

    init(renderer: Renderer, views count: Int, width: Int32, height: Int32, seed: UInt64) {
        self.renderer = renderer
        views = MovingViews(count: count, width: Double(width), height: Double(height), seed: seed)
        layer = renderer.makeLayer(reserving: count)
    }

    // `update` and `draw` are kept out of line: the demo calls them through its `Scene` protocol
    // from another module, so they are never inlined into its frame loop; inlined here they
    // measured about 12% faster (p0), which is not the work the demo does.

    /// Moves every view to this frame's time.
    @inline(never) func update(_ frame: DisplayFrame) {
        views.update(deltaTime: frame.deltaTime)
    }

    /// Adds this frame's views to the layer (between the renderer's beginFrame and endFrame).
    @inline(never) func draw() {
        for i in 0..<views.count {
            let size = Float(views.size[i])
            let color = BounceViews.palette[Int(views.colorIndex[i]) % BounceViews.palette.count]
            renderer.addRect(
                layer, Rect(x: Float(views.x[i]) - size / 2, y: Float(views.y[i]) - size / 2, width: size, height: size),
                color: color.withOpacity(Float(views.opacity(i))), cornerRadius: size / 4)
        }
    }
}
