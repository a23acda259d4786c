import DisplayLinkCore
import EGLGraphics

/// A scene the demo runs: advanced by the link's frame, then drawn.
@MainActor
protocol DemoScene: AnyObject {
    var name: String { get }
    /// The report's scene size field: ("views", n) or ("rows", n).
    var sizeField: (name: String, value: Int) { get }
    /// Moves the scene to the frame's time.
    func update(_ frame: DisplayFrame)
    /// Draws the frame into the current GL surface; returns the damaged region (nil: all).
    func draw(width: Int32, height: Int32, hud: HUDText) -> PixelRect?
    /// What the scroll scene drew (nil for other scenes).
    var scrollSample: ScrollSample? { get }
    func handle(_ key: DemoKey)
}

/// The HUD's values, formatted by the runner.
struct HUDText {
    var fps: Double
    var deltaMilliseconds: Double
    var missed: Int
    var provenance: TimestampProvenance
    var paused: Bool
}
