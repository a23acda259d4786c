import DisplayLinkCore
import EGLGraphics
internal import CWaylandClient
internal import CWaylandEGL

/// A GLES drawing surface on a Wayland window: a `wl_egl_window` with an EGL window surface,
/// swap interval 0 (the frame source paces, never the swap), resize, and swap with damage.
@MainActor
public final class WaylandEGLWindow {
    public let window: WaylandWindow
    public let context: EGLDisplayContext
    public let surface: EGLWindowSurface
    /// The frame source to tell about commits, so it skips its empty commit.
    public weak var frameSource: WaylandFrameSource?
    public private(set) var width: Int32
    public private(set) var height: Int32

    private let eglWindow: OpaquePointer

    /// Creates the EGL display for the window's connection (or uses `context` when given).
    public init(window: WaylandWindow, context: EGLDisplayContext? = nil) throws(WaylandError) {
        self.window = window
        // Pixels: the window's size in points at its scale (which can be known before the first buffer).
        width = window.pixelWidth
        height = window.pixelHeight
        if let context {
            self.context = context
        } else {
            do {
                self.context = try EGLDisplayContext(platform: .wayland(display: window.connection.display))
            } catch {
                throw .egl(error.description)
            }
        }
        guard let eglWindow = wl_egl_window_create(window.surface, width, height) else {
            throw .egl("wl_egl_window_create(\(width)×\(height)) failed")
        }
        // Made and configured before it is stored: once every property is set, a throw releases
        // the object and runs deinit, which would destroy the surface and window a second time.
        let surface: EGLWindowSurface
        do {
            surface = try EGLWindowSurface(context: self.context, nativeWindow: UnsafeMutableRawPointer(eglWindow))
        } catch {
            wl_egl_window_destroy(eglWindow)
            throw .egl(error.description)
        }
        do {
            try surface.configure(swapInterval: 0)
        } catch {
            // The EGL surface goes before the native window it was created on.
            surface.destroy()
            wl_egl_window_destroy(eglWindow)
            throw .egl(error.description)
        }
        self.eglWindow = eglWindow
        self.surface = surface
    }

    isolated deinit {
        // The EGL surface goes before the native window it was created on.
        surface.destroy()
        wl_egl_window_destroy(eglWindow)
    }

    /// Resizes the buffers (pixels); takes effect at the next swap.
    public func resize(width: Int32, height: Int32) {
        guard width > 0, height > 0, width != self.width || height != self.height else { return }
        self.width = width
        self.height = height
        wl_egl_window_resize(eglWindow, width, height, 0, 0)
    }

    /// Binds the GL context for drawing this frame (see `EGLWindowSurface.beginFrame()`).
    public func beginFrame() throws(EGLError) {
        try surface.beginFrame()
    }

    /// Unbinds the GL context from this thread (see `EGLWindowSurface.releaseCurrent()`).
    public func releaseCurrent() {
        surface.releaseCurrent()
    }

    /// Whether the context stays current after a swap (see `EGLWindowSurface.staysCurrentAfterSwap`).
    public var staysCurrentAfterSwap: Bool {
        get { surface.staysCurrentAfterSwap }
        set { surface.staysCurrentAfterSwap = newValue }
    }

    /// Presents the frame: swaps (committing the surface with the frame source's pending frame
    /// request and feedback) with `damage` as the changed region (nil: everything).
    public func swapBuffers(damage: PixelRect? = nil) throws(EGLError) {
        // The buffer scale or viewport goes into the commit of the buffer drawn at that scale (not
        // before its owner resized the buffers to it: a buffer of the old size keeps the old scale).
        if width == window.pixelWidth && height == window.pixelHeight { window.applyScale() }
        try surface.swapBuffers(damage: damage, surfaceHeight: height)
        frameSource?.noteCommit()
    }
}
