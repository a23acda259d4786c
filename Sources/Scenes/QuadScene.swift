import DisplayLinkCore
import GLESRenderer

/// The smallest client: one square moving by deltaTime. The minimal reference for pacing.
@MainActor
public final class QuadScene: Scene {
    public let name = "quad"
    public var sizeField: (name: String, value: Int) { ("views", 1) }
    public let background = RGBA(0.08, 0.09, 0.12)
    private var x = 0.0
    private var canvas: SceneCanvas

    public init(renderer: Renderer, width: Int32, height: Int32) {
        canvas = SceneCanvas(renderer: renderer, reserving: 1, width: width, height: height)
    }

    public func resize(width: Int32, height: Int32) { canvas.resize(width: width, height: height) }

    public func update(_ frame: DisplayFrame) { x += 120 * frame.deltaTime }

    public func draw() {
        let side = Float(max(8, min(canvas.width, canvas.height) / 5))
        let left = canvas.bouncingLeft(distance: x, side: side)
        canvas.addRect(Rect(x: left, y: (Float(canvas.height) - side) / 2, width: side, height: side), color: RGBA(0.95, 0.45, 0.2))
    }
}
