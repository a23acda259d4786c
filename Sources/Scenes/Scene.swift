import DisplayLinkCore
import GLESRenderer

/// A scene the demo runs: advanced by each display-link frame, then drawn with the renderer.
/// Backend-independent: it never knows whether it is on Wayland, DRM or an offscreen surface.
@MainActor
public protocol Scene: AnyObject {
    var name: String { get }
    /// The report's scene-size field: ("views", n) or ("rows", n).
    var sizeField: (name: String, value: Int) { get }
    var background: RGBA { get }
    func resize(width: Int32, height: Int32)
    /// Moves the scene to this frame's time.
    func update(_ frame: DisplayFrame)
    /// Adds this frame's drawing to the renderer's layers (between beginFrame and endFrame).
    func draw()
    /// What the scroll scene drew this frame (nil for others).
    var scrollSample: ScrollSample? { get }
    /// Enter: scroll to the other end (scroll scene only).
    func toggleScroll()
    /// Whether the scene shows the newest pointer or touch position (``follow(x:y:)``): its
    /// frames then say which input events they reflect (the follow scene only).
    var followsInput: Bool { get }
    /// The newest pointer or touch position, in the renderer's pixels, for the next frame.
    func follow(x: Double, y: Double)
}

extension Scene {
    public var scrollSample: ScrollSample? { nil }
    public func toggleScroll() {}
    public var followsInput: Bool { false }
    public func follow(x: Double, y: Double) {}
}

/// What the scroll scene drew in a frame.
public struct ScrollSample: Sendable, Hashable {
    public var offset: Double
    public var fraction: Double?
    public var firstRow: Int
    public var lastRow: Int
}

/// A fixed palette for views and rows.
enum Palette {
    static let colors: [RGBA] = [
        RGBA(0.96, 0.36, 0.27), RGBA(0.98, 0.69, 0.20), RGBA(0.55, 0.80, 0.30), RGBA(0.20, 0.72, 0.66),
        RGBA(0.25, 0.55, 0.95), RGBA(0.56, 0.40, 0.90), RGBA(0.90, 0.35, 0.70), RGBA(0.95, 0.95, 0.95)
    ]
}
