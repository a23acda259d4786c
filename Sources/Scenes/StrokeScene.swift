import DisplayLinkCore
import GLESRenderer

/// A live polyline: one stroke, 3 points wide with round joins, that grows by 10 points a frame
/// along a smooth curve up to 2,000 points and then starts over (``GrowingPolyline``), drawn
/// whole each frame with ``Renderer/addStroke(_:_:)``: the load of a drawing that grows with the
/// input, where each frame appends and the renderer copies the encoded segments. It grows by
/// frames, not by time: the same frames draw the same strokes at any rate or clock.
@MainActor
public final class StrokeScene: Scene {
    public let name = "stroke"
    public var sizeField: (name: String, value: Int) { ("points", polyline.maximumPoints) }
    public let background = RGBA(0.06, 0.07, 0.09)
    public private(set) var polyline: GrowingPolyline
    private let renderer: Renderer
    private let layer: Renderer.LayerID

    public init(renderer: Renderer, points: Int = 2000, pointsPerFrame: Int = 10, width: Int32, height: Int32) {
        self.renderer = renderer
        polyline = GrowingPolyline(
            maximumPoints: points, pointsPerStep: pointsPerFrame, width: Float(width), height: Float(height), color: Palette.colors[1])
        // Room for the whole stroke in both of the layer's arrays (this frame's and the previous
        // one's, swapped every frame): drawing it never grows them.
        layer = renderer.makeLayer(reserving: max(16, points))
    }

    /// Points from now on follow the new size; those drawn stay where they are.
    public func resize(width: Int32, height: Int32) {
        polyline.bounds = (Float(width), Float(height))
    }

    public func update(_ frame: DisplayFrame) {
        polyline.step()
    }

    public func draw() {
        renderer.addStroke(layer, polyline.stroke)
    }
}
