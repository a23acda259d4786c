import Foundation
import GLESRenderer

/// The stroke scene's drawing: one ``Stroke`` that grows by a few points a step along a smooth
/// closed curve (a Lissajous figure), up to a maximum, and then starts over. The stroke is
/// appended to, never rebuilt: each step encodes only its new segments. A pure value (no
/// renderer), so that its growth is tested without a GL context.
public struct GrowingPolyline: Sendable {
    /// The points a full stroke has; the step after it is full starts over.
    public let maximumPoints: Int
    /// Points appended each step.
    public let pointsPerStep: Int
    public private(set) var stroke: Stroke
    /// The room the curve spans (points).
    public var bounds: (width: Float, height: Float)
    /// The index along the curve of the next point (0..<maximumPoints).
    private var next = 0

    /// Starts full (the whole curve walked once), so that the stroke's arrays have their final
    /// size before the first frame, and the renderer's once a warm-up frame has drawn it; the
    /// first step empties it, keeping that capacity, and starts over. No step allocates.
    public init(maximumPoints: Int = 2000, pointsPerStep: Int = 10, width: Float, height: Float, strokeWidth: Float = 3, color: RGBA) {
        self.maximumPoints = max(2, maximumPoints)
        self.pointsPerStep = max(1, pointsPerStep)
        bounds = (width, height)
        stroke = Stroke(width: strokeWidth, color: color, join: .round, cap: .round)
        while next < self.maximumPoints {
            stroke.append(point(next))
            next += 1
        }
    }

    /// Appends the next points (after starting over if the stroke is full).
    public mutating func step() {
        if next >= maximumPoints {
            stroke.removeAll(keepingCapacity: true)
            next = 0
        }
        let end = min(maximumPoints, next + pointsPerStep)
        while next < end {
            stroke.append(point(next))
            next += 1
        }
    }

    /// How many points the stroke has been given this cycle (its `points` may hold fewer if the
    /// curve ever repeated a point, which the stroke leaves out).
    public var count: Int { next }

    /// Point `index` of the curve: a 3:4 Lissajous figure over the bounds (less a margin), one
    /// period walked in `maximumPoints` steps, so consecutive points are a point or two apart.
    public func point(_ index: Int) -> Point {
        let theta = 2 * Double.pi * Double(index) / Double(maximumPoints)
        let (w, h) = (Double(bounds.width), Double(bounds.height))
        return Point(x: Float(w / 2 + 0.42 * w * sin(3 * theta)), y: Float(h / 2 + 0.42 * h * sin(4 * theta + Double.pi / 4)))
    }
}
