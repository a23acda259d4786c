import DisplayLinkCore
import GLESRenderer

/// The smallest client: one square moving by deltaTime. The minimal reference for pacing.
@MainActor
public final class QuadScene: Scene {
    public let name = "quad"
    public var sizeField: (name: String, value: Int) { ("views", 1) }
    public let background = RGBA(0.08, 0.09, 0.12)
    private let renderer: Renderer
    private let layer: Renderer.LayerID
    private var x = 0.0
    private var width: Int32, height: Int32

    public init(renderer: Renderer, width: Int32, height: Int32) {
        self.renderer = renderer
        self.width = width
        self.height = height
        layer = renderer.makeLayer(reserving: 1)
    }

    public func resize(width: Int32, height: Int32) { self.width = width; self.height = height }

    public func update(_ frame: DisplayFrame) { x += 120 * frame.deltaTime }

    public func draw() {
        let side = Float(max(8, min(width, height) / 5))
        let span = Double(max(1, Float(width) - side))
        let phase = x.truncatingRemainder(dividingBy: 2 * span)
        let left = Float(phase < span ? phase : 2 * span - phase)
        renderer.addRect(layer, Rect(x: left, y: (Float(height) - side) / 2, width: side, height: side), color: RGBA(0.95, 0.45, 0.2))
    }
}
