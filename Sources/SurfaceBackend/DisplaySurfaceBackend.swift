import DisplayLinkCore
import EGLGraphics
import SurfaceInput

/// What a `DisplaySurface` needs of a backend: a place to draw with a GLES context that is also
/// the `FrameSource` (module `DisplayLinkCore`) of the links on it.
///
/// `DisplaySurface` holds one backend and forwards its calls to it: it checks that the surface is
/// open, turns a ``SurfaceBackendError`` into its own error type, and owns what is the same for
/// every backend (the first failure, the close handlers, the environment kept at close, signal
/// handling). A backend owns its display's parts and their order:
///
/// - ``beginFrame()`` binds the context to the calling thread; ``present(damage:keepsContextCurrent:)``
///   shows the frame and releases the context unless asked to keep it; ``releaseContext()``
///   releases it outside a frame.
/// - ``events`` is how the backend reports what happens to its display (a failure, input, a new
///   size, a request to close); each is called on the main actor.
/// - ``close()`` releases everything in the backend's own order (keys, the frame source, EGL,
///   then the display), once; afterwards nothing is reported and nothing can be drawn.
///
/// Conforming types: the Wayland toplevel and the KMS output inside `DisplaySurface`, and
/// `OffscreenDisplay` (module `OffscreenBackend`) on virtual time.
@MainActor
public protocol DisplaySurfaceBackend: FrameSource {
    /// Where the backend reports what happens to its display. Set by the surface after opening.
    var events: SurfaceBackendEvents { get set }
    /// The drawing width in pixels (Wayland: as the compositor configured it).
    var width: Int32 { get }
    /// The drawing height in pixels.
    var height: Int32 { get }
    /// Pixels per point (1 unless the backend knows better; see ``pointSize``).
    var scale: Double { get }
    /// The drawing size in points: what programs lay out in, ``width``×``height`` over ``scale``
    /// (Wayland: the surface's size as the compositor configured it).
    var pointSize: (width: Double, height: Double) { get }
    /// The GLES version of the context (3 when available, else 2).
    var glesMajorVersion: Int32 { get }
    /// What the display is, as named facts in a fixed order (for reports and logs).
    var environment: [EnvironmentEntry] { get }
    /// Whether the surface covers its output.
    var isFullscreen: Bool { get }
    /// Asks for fullscreen (`true`) or a window (`false`); a backend without windows ignores it.
    func setFullscreen(_ on: Bool)
    /// Makes the GLES context current on the calling thread, on this surface, for drawing a frame.
    func beginFrame() throws(SurfaceBackendError)
    /// Presents what was drawn since ``beginFrame()``; `damage` (pixels, top-left origin) is the
    /// changed region, nil for everything. The context is released from the calling thread
    /// unless `keepsContextCurrent` (one thread draws every frame).
    func present(damage: PixelRect?, keepsContextCurrent: Bool) throws(SurfaceBackendError)
    /// Releases the context from the calling thread; harmless when it is not bound.
    func releaseContext()
    /// Draws warm-up frames that are never shown, with the context current (`draw` draws one
    /// frame and does not present). The caller releases the context afterwards.
    func prepare(draw: () -> Void) throws(SurfaceBackendError)
    /// The frame drawn so far (between ``beginFrame()`` and the present), as RGBA rows from the
    /// top, `width*4` bytes each; nil when it cannot be read.
    func readPixels() -> [UInt8]?
    /// What another graphics API draws into, on a backend opened without a GLES context (nil
    /// otherwise).
    var nativeWindow: NativeWindow? { get }
    /// The commit hook of a backend whose program presents with its own API: called right before
    /// each present of a buffer of `bufferWidth`×`bufferHeight` pixels, so that the refresh's
    /// requests go with that commit.
    func willCommit(bufferWidth: Int32, bufferHeight: Int32)
    /// Tears the backend down in its order. Called once, by the surface.
    func close()
}

extension DisplaySurfaceBackend {
    /// Scale 1: points are pixels.
    public var scale: Double { 1 }
    /// The pixel size over ``scale``.
    public var pointSize: (width: Double, height: Double) { (Double(width) / scale, Double(height) / scale) }
    /// No native window: the backend draws with its own GLES context.
    public var nativeWindow: NativeWindow? { nil }
    /// Nothing to do: the backend's own present tells its frame source.
    public func willCommit(bufferWidth: Int32, bufferHeight: Int32) {}

    /// Binds the context and draws two frames without presenting them: llvmpipe builds more
    /// shader variants for a frame that follows another (measured under emulation: 2.3 s, 0.5 s,
    /// then 65 ms), so both kinds are built before the first frame that counts.
    public func prepare(draw: () -> Void) throws(SurfaceBackendError) {
        try beginFrame()
        draw()
        draw()
    }
}

/// What a backend reports about its display, each on the main actor. A backend calls these; the
/// surface sets them once after opening and clears them before closing the backend.
public struct SurfaceBackendEvents {
    /// The display failed while running (the compositor went away, a flip failed).
    public var failed: (@MainActor (SurfaceBackendError) -> Void)?
    /// A key was pressed: its XKB keysym (`xkb_keysym_t`). For a backend that has no
    /// ``input`` of its own: one that reports ``input`` does not call this too (the surface makes
    /// its key presses from `input`'s key events).
    public var key: (@MainActor (UInt32) -> Void)?
    /// An input event on the surface (pointer, touch, key, keyboard focus), its time on the
    /// link's clock; events in the order they happened.
    public var input: (@MainActor (InputEvent) -> Void)?
    /// The drawing size changed to this width and height (pixels); the next frame has it.
    public var resized: (@MainActor (Int32, Int32) -> Void)?
    /// The user asked to close the window.
    public var closeRequested: (@MainActor () -> Void)?
    /// The scale changed (read the backend's ``DisplaySurfaceBackend/scale``, size in pixels and
    /// points, all already new); the next frame has them.
    public var scaleChanged: (@MainActor () -> Void)?

    /// Events that go nowhere until set.
    public init(
        failed: (@MainActor (SurfaceBackendError) -> Void)? = nil, key: (@MainActor (UInt32) -> Void)? = nil,
        input: (@MainActor (InputEvent) -> Void)? = nil, resized: (@MainActor (Int32, Int32) -> Void)? = nil,
        closeRequested: (@MainActor () -> Void)? = nil, scaleChanged: (@MainActor () -> Void)? = nil
    ) {
        self.failed = failed
        self.key = key
        self.input = input
        self.resized = resized
        self.closeRequested = closeRequested
        self.scaleChanged = scaleChanged
    }
}
