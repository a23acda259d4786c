/// A colour with straight (not premultiplied) alpha, 0…1 per channel.
public struct RGBA: Sendable, Hashable {
    public var r: Float, g: Float, b: Float, a: Float
    public init(_ r: Float, _ g: Float, _ b: Float, _ a: Float = 1) {
        self.r = r; self.g = g; self.b = b; self.a = a
    }
    /// The same colour with its alpha multiplied by `opacity`.
    public func withOpacity(_ opacity: Float) -> RGBA { RGBA(r, g, b, a * opacity) }
}

/// A rectangle in pixels, top-left origin (the same convention as Wayland damage).
public struct Rect: Sendable, Hashable {
    public var x: Float, y: Float, width: Float, height: Float
    public init(x: Float, y: Float, width: Float, height: Float) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
}
