import DisplayLinkCore
import GLESRenderer

/// A marker at the newest pointer or touch position (``follow(x:y:)``, in the renderer's pixels),
/// and a small square that moves by deltaTime along the bottom edge so that every frame differs.
/// The scene of the demo's input-to-photon latency measurement: each frame shows the newest
/// position it was given, so the first frame drawn after an input event is the first to show it.
@MainActor
public final class FollowScene: Scene {
    public let name = "follow"
    public var sizeField: (name: String, value: Int) { ("views", 2) }
    public let background = RGBA(0.06, 0.07, 0.10)
    public var followsInput: Bool { true }
    /// Where the marker is (pixels); nil until the first position, when it is not drawn.
    public private(set) var marker: (x: Double, y: Double)?
    private var phase = 0.0
    private var canvas: SceneCanvas

    public init(renderer: Renderer, width: Int32, height: Int32) {
        canvas = SceneCanvas(renderer: renderer, reserving: 4, width: width, height: height)
    }

    public func resize(width: Int32, height: Int32) { canvas.resize(width: width, height: height) }

    public func follow(x: Double, y: Double) { marker = (x, y) }

    public func update(_ frame: DisplayFrame) { phase += 90 * frame.deltaTime }

    public func draw() {
        // The light part: a 12-pixel square sweeping back and forth along the bottom edge.
        let side: Float = 12
        let left = canvas.bouncingLeft(distance: phase, side: side)
        canvas.addRect(Rect(x: left, y: Float(canvas.height) - side - 4, width: side, height: side), color: Palette.colors[4])
        guard let marker else { return }
        // The marker: a ring (two rounded squares) centred on the point, and the point itself.
        let (x, y) = (Float(marker.x), Float(marker.y))
        canvas.addRect(Rect(x: x - 14, y: y - 14, width: 28, height: 28), color: Palette.colors[1], cornerRadius: 14)
        canvas.addRect(Rect(x: x - 10, y: y - 10, width: 20, height: 20), color: background, cornerRadius: 10)
        canvas.addRect(Rect(x: x - 2, y: y - 2, width: 4, height: 4), color: Palette.colors[7])
    }
}
