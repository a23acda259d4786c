import DisplayLinkCore
import GLESRenderer
import Motion

/// The seed's moving views: many rounded squares moving with velocity and gravity scaled by
/// deltaTime, fading in and out, recycled at a new random place when their animation ends.
@MainActor
public final class BounceScene: Scene {
    public let name = "bounce"
    public var sizeField: (name: String, value: Int) { ("views", views.count) }
    public let background = RGBA(0.07, 0.08, 0.11)
    public private(set) var views: MovingViews
    private let renderer: Renderer
    private let layer: Renderer.LayerID

    public init(renderer: Renderer, views count: Int, width: Int32, height: Int32, seed: UInt64) {
        self.renderer = renderer
        views = MovingViews(count: count, width: Double(width), height: Double(height), seed: seed)
        layer = renderer.makeLayer(reserving: count)
    }

    public func resize(width: Int32, height: Int32) {
        views.bounds = (Double(width), Double(height))
    }

    public func update(_ frame: DisplayFrame) {
        views.update(deltaTime: frame.deltaTime)
    }

    public func draw() {
        for i in 0..<views.count {
            let size = Float(views.size[i])
            let color = Palette.colors[Int(views.colorIndex[i]) % Palette.colors.count]
            renderer.addRect(
                layer, Rect(x: Float(views.x[i]) - size / 2, y: Float(views.y[i]) - size / 2, width: size, height: size),
                color: color.withOpacity(Float(views.opacity(i))), cornerRadius: size / 4)
        }
    }
}
