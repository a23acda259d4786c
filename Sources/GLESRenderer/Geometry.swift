import Foundation

/// A point in points (top-left origin), as ``Rect``'s coordinates.
public struct Point: Sendable, Hashable {
    public var x: Float, y: Float
    public init(x: Float, y: Float) {
        self.x = x; self.y = y
    }
}

/// An affine transform of the plane (points): `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`, as
/// Core Graphics' `CGAffineTransform`. A layer's transform (``Renderer/setTransform(_:_:)``) maps
/// what is added to it into its parent's coordinates.
public struct Transform2D: Sendable, Hashable {
    public var a: Float, b: Float, c: Float, d: Float, tx: Float, ty: Float

    public init(a: Float, b: Float, c: Float, d: Float, tx: Float, ty: Float) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.tx = tx; self.ty = ty
    }

    public static let identity = Transform2D(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public static func translation(x: Float, y: Float) -> Transform2D {
        Transform2D(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }

    public static func scale(x: Float, y: Float) -> Transform2D {
        Transform2D(a: x, b: 0, c: 0, d: y, tx: 0, ty: 0)
    }

    /// A rotation by `radians`, clockwise on screen (y points down).
    public static func rotation(radians: Float) -> Transform2D {
        let (s, c) = (sin(radians), cos(radians))
        return Transform2D(a: c, b: s, c: -s, d: c, tx: 0, ty: 0)
    }

    /// A rotation by `radians` about `center`.
    public static func rotation(radians: Float, about center: Point) -> Transform2D {
        Transform2D.translation(x: -center.x, y: -center.y)
            .concatenating(.rotation(radians: radians))
            .concatenating(.translation(x: center.x, y: center.y))
    }

    /// This transform, then `next` (as `CGAffineTransform.concatenating`).
    public func concatenating(_ next: Transform2D) -> Transform2D {
        Transform2D(
            a: a * next.a + b * next.c, b: a * next.b + b * next.d,
            c: c * next.a + d * next.c, d: c * next.b + d * next.d,
            tx: tx * next.a + ty * next.c + next.tx, ty: tx * next.b + ty * next.d + next.ty)
    }

    public func apply(_ p: Point) -> Point {
        Point(x: a * p.x + c * p.y + tx, y: b * p.x + d * p.y + ty)
    }

    public var isIdentity: Bool { self == .identity }
}
