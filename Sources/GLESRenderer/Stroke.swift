/// A line or polyline of a width (points), drawn by ``Renderer/addStroke(_:_:)`` as one instance
/// per segment: the renderer's vertex shader makes each segment's quad, its fragment shader the
/// antialiased edges, caps and joins (see `Renderer+Strokes.swift`).
///
/// The instances are encoded here, as points are appended: appending a point writes only the new
/// segment and patches the previous segment's end (its next point and its end's cap becoming a
/// join), so a live stroke that grows point by point never re-encodes its earlier segments.
/// Changing the width, colour, join, cap or miter limit re-encodes every segment (rare).
///
/// A point equal to the last one is left out (a segment needs a direction); a stroke of fewer
/// than two points draws nothing.
public struct Stroke: Sendable {
    public enum Join: Sendable { case round, miter }
    public enum Cap: Sendable { case round, butt }

    /// Floats per segment instance: the previous point (x y; p0 at the first segment), p0, p1,
    /// the next point (p1 at the last segment), r g b a, half width, the start's kind, the end's
    /// kind, the miter limit. Points and half width in points (the renderer scales them).
    static let instanceFloats = 16
    /// Where an instance's next point (x y) and end kind lie in it.
    static let nextOffset = 6
    static let endKindOffset = 14

    /// What a segment's end is (an instance's kind floats): a cap when it has no neighbour, a join when it has.
    enum EndKind: Float {
        case buttCap = 0, roundCap = 1, roundJoin = 2, miterJoin = 3
    }

    public var width: Float { didSet { reencode() } }
    public var color: RGBA { didSet { reencode() } }
    public var join: Join { didSet { reencode() } }
    public var cap: Cap { didSet { reencode() } }
    /// The longest a miter join's tip may reach from its point, in half widths; a sharper turn
    /// is joined round instead (without overlapping its segments).
    public var miterLimit: Float { didSet { reencode() } }

    /// The points, in points (the renderer's unit), less those equal to the one before.
    public private(set) var points: [Point] = []
    /// One instance per segment, ``instanceFloats`` floats each.
    private(set) var instances = ContiguousArray<Float>()
    /// The points' bounding box (empty: no points).
    private(set) var pointBounds = Bounds()

    public init(width: Float, color: RGBA, join: Join = .round, cap: Cap = .round, miterLimit: Float = 4) {
        self.width = width
        self.color = color
        self.join = join
        self.cap = cap
        self.miterLimit = miterLimit
    }

    /// How far the stroke's ink reaches from its points (points): half the width, or the
    /// longest miter for miter joins.
    var reach: Float {
        let half = width * 0.5
        return half * miterFactor
    }

    /// How many times half the width (plus its antialiased half pixel) a join's ink may reach
    /// from its point: a miter's tip up to the limit, or 8 (beyond which the shader joins round).
    var miterFactor: Float { join == .miter ? min(max(1, miterLimit), 8) : 1 }

    /// Number of segment instances.
    var segmentCount: Int { instances.count / Stroke.instanceFloats }

    public mutating func append(_ point: Point) {
        guard let last = points.last else {
            points.append(point)
            pointBounds.add(point.x, point.y, 0, 0)
            return
        }
        guard last != point else { return }
        let capKind: EndKind = cap == .round ? .roundCap : .buttCap
        let joinKind: EndKind = join == .round ? .roundJoin : .miterJoin
        var previous = last
        var startKind = capKind
        if points.count >= 2 {
            // The last segment now continues: its next point and its end become a join.
            previous = points[points.count - 2]
            let base = instances.count - Stroke.instanceFloats
            instances[base + Stroke.nextOffset] = point.x
            instances[base + Stroke.nextOffset + 1] = point.y
            instances[base + Stroke.endKindOffset] = joinKind.rawValue
            startKind = joinKind
        }
        Stroke.appendInstance(
            previous: previous, from: last, to: point, next: point, color: color, halfWidth: width * 0.5,
            startKind: startKind, endKind: capKind, miterLimit: miterLimit, to: &instances)
        points.append(point)
        pointBounds.add(point.x, point.y, 0, 0)
    }

    /// Appends one segment instance (``instanceFloats`` floats) to `data`.
    @inline(__always)
    static func appendInstance(
        previous: Point, from p0: Point, to p1: Point, next: Point, color: RGBA, halfWidth: Float,
        startKind: EndKind, endKind: EndKind, miterLimit: Float, to data: inout ContiguousArray<Float>
    ) {
        data.append(previous.x); data.append(previous.y); data.append(p0.x); data.append(p0.y)
        data.append(p1.x); data.append(p1.y); data.append(next.x); data.append(next.y)
        data.append(color.r); data.append(color.g); data.append(color.b); data.append(color.a)
        data.append(halfWidth); data.append(startKind.rawValue); data.append(endKind.rawValue)
        data.append(miterLimit)
    }

    public mutating func append<S: Sequence>(contentsOf newPoints: S) where S.Element == Point {
        for point in newPoints { append(point) }
    }

    public mutating func removeAll(keepingCapacity: Bool = true) {
        points.removeAll(keepingCapacity: keepingCapacity)
        instances.removeAll(keepingCapacity: keepingCapacity)
        pointBounds = Bounds()
    }

    /// Encodes every segment again from the points (after a change of style).
    private mutating func reencode() {
        let all = points
        removeAll(keepingCapacity: true)
        append(contentsOf: all)
    }
}
