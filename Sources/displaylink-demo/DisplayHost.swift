import DisplayLinkCore
import EGLGraphics

/// Keys the demo reacts to, whatever the backend reads them from.
enum DemoKey {
    case togglePause
    case scroll
    case quit
}

/// A place to draw with a frame source: a Wayland window or a DRM/KMS display. The only thing the
/// runner and the scenes know about backends.
@MainActor
protocol DisplayHost: AnyObject {
    var backendName: String { get }
    var frameSource: any FrameSource { get }
    var width: Int32 { get }
    /// The GLES version of the host's context (2 or 3).
    var glesMajorVersion: Int32 { get }
    var height: Int32 { get }
    /// Facts for the report's `environment` (besides `size`).
    var environment: [(String, JSONValue)] { get }
    var onQuit: (() -> Void)? { get set }
    var onFatalError: ((String) -> Void)? { get set }
    var onKey: ((DemoKey) -> Void)? { get set }
    /// Binds the GL context for this frame's drawing.
    func beginFrame() throws
    /// Unbinds the GL context from this thread (before the main queue moves to other threads).
    func releaseGL()
    func present(damage: PixelRect?) throws
    /// Warm-up frames before the first real one, never shown: `draw` draws one (and waits for it).
    /// Called with the context bound; returns with it bound.
    func warmUp(draw: () -> Void) throws
    func shutDown()
}

extension DisplayHost {
    /// Two frames drawn into the back buffer and never swapped (llvmpipe builds more variants for
    /// a frame that follows another: measured under emulation 2.3 s, 0.5 s, then 65 ms).
    func warmUp(draw: () -> Void) throws {
        draw()
        draw()
    }
}
