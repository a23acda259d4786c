import DisplayLinkCore
import EGLGraphics
import FrameSchedulers
import Logging
import OffscreenBackend
import PNGImage
import SurfaceBackend

/// A place to draw that a display link follows: an xdg toplevel on a Wayland compositor, a
/// DRM/KMS output on a console, or an offscreen pbuffer on virtual time. The same calls on all:
///
/// ```swift
/// let surface = try DisplaySurface(options: .init(title: "Demo", width: 640, height: 480))
/// try surface.beginFrame()                      // context current: build GL objects
/// let renderer = try makeRenderer(glesMajorVersion: surface.glesMajorVersion)
/// try surface.prepare { renderer.drawFrame() }  // warm-up, never shown; leaves the context released
/// let link = DisplayLink(source: surface, target: model) { model, link in
///     try? surface.beginFrame()
///     model.draw(at: link.targetTimestamp)
///     try? surface.present()
/// }
/// DisplaySurface.installSignalHandlers()        // optional: SIGINT/SIGTERM restore the display
/// DisplaySurface.runMainLoop()                  // or dispatchMain()
/// ```
///
/// - The surface is the links' `FrameSource`: Wayland frame callbacks with presentation
///   feedback, page-flip events with the vblank's time, or (offscreen) refreshes on virtual
///   time, each delivered as soon as the previous frame was presented.
/// - Each backend is a `DisplaySurfaceBackend` (module `SurfaceBackend`) the surface holds and
///   forwards to; one entry per backend says how it opens.
/// - Threads: ``runMainLoop()`` serves the main queue on the main thread and reads Wayland events
///   there (one thread wake-up per batch of events); on Linux `dispatchMain()` serves the main
///   queue from pool threads instead, after libdispatch's event thread saw the socket readable. A
///   GL context is current per thread. ``beginFrame()`` binds the context to the calling thread and
///   ``present(damage:)`` releases it, so a frame may run on any thread; a context bound outside
///   a frame (setting up) must be released before the main queue moves on: ``prepare(draw:)``
///   and ``releaseContext()`` do that.
/// - ``close()`` (also on deinit, and on SIGINT/SIGTERM after ``installSignalHandlers(then:)``)
///   tears down in order: the terminal's keys, the frame source, EGL (surface, then context),
///   then the window and connection, or the CRTC restored and master dropped before the GBM
///   objects and the device (offscreen: the refreshes, the pbuffer, the context); then the
///   handlers added with ``addCloseHandler(_:)`` (e.g. stopping a private compositor).
/// - Logs (label `displaylink.surface`, at `.debug`: silent unless the program bootstraps a
///   handler at that level): the backend chosen and why (with `.auto`, what was tried), and the
///   surface closing. The backends log their own decisions (`displaylink.wayland`, `displaylink.drm`).
@MainActor
public final class DisplaySurface: FrameSource {
    static let log = Logger(label: "displaylink.surface")

    /// The backend this surface is open on.
    public let backend: Backend
    public let options: Options
    public let dispatcher: RefreshDispatcher
    /// The size of the drawing surface in pixels (Wayland: as the compositor configured it).
    public private(set) var width: Int32
    public private(set) var height: Int32
    /// The GLES version of the context (3 when available, else 2; 0 without one, with
    /// ``Options/graphics`` `.external`).
    public let glesMajorVersion: Int32
    /// Pixels per point (Wayland: the compositor's scale for the window; DRM/KMS: from the
    /// output's physical size or ``Options/scale``). Programs lay out in points and draw at this
    /// scale (`Renderer.setScale(_:)`), so they look the same size on any display.
    public private(set) var scale: Double
    /// The size in points (``width``×``height`` pixels over ``scale``; Wayland: the size the
    /// compositor configured).
    public private(set) var pointSize: (width: Double, height: Double)
    /// The size in pixels: ``width``×``height``.
    public var pixelSize: (width: Int32, height: Int32) { (width, height) }
    /// Called once on the main actor when ``scale`` changes, after ``scale``, ``pointSize`` and
    /// the size in pixels took their new values (``onResize`` is called before it when the pixel
    /// size changed); the next frame is drawn at them.
    public var onScaleChange: ((Double) -> Void)?
    /// The first failure reported through ``onError``; nothing is presented after it.
    public private(set) var error: DisplaySurfaceError?
    public private(set) var isClosed = false

    /// Called on the main actor with each key press and repeat (XKB keysyms on both backends):
    /// the simple form of ``onInput``'s key events.
    public var onKey: ((KeyEvent) -> Void)?
    /// Called on the main actor with each input event on the surface, in the order they
    /// happened: pointer (enter, leave, motion, buttons, scrolling, each group ended by a frame),
    /// touch, keys (press, release, repeat, with modifiers and text) and keyboard focus. Each
    /// carries its time on the links' clock (`CLOCK_MONOTONIC`), and positions are in points.
    /// On Wayland from the compositor's seat; on DRM/KMS from the console's devices.
    public var onInput: ((InputEvent) -> Void)?
    /// Called once, on the main actor, when the display fails while running (the compositor went
    /// away, a flip failed). The links are invalidated.
    public var onError: ((DisplaySurfaceError) -> Void)?
    /// Called when the user asked to close the window (Wayland). Nothing is closed by itself.
    public var onCloseRequest: (() -> Void)?
    /// Called after the compositor configured a new size (already in ``width``/``height``; the
    /// buffers take it at the next present).
    public var onResize: ((Int32, Int32) -> Void)?

    /// The backend's surface: it owns the display's parts and releases them in order on close().
    let surfaceBackend: any DisplaySurfaceBackend
    private var closeHandlers: [@MainActor () -> Void] = []
    var environmentAtClose: [EnvironmentEntry]?

    // MARK: Opening

    /// Opens a surface as `options` say: the backend chosen, or with `.auto` Wayland when a
    /// compositor is reachable, else DRM/KMS (the error then lists both attempts).
    public init(options: Options = Options()) throws(DisplaySurfaceError) {
        self.options = options
        if let scale = options.scale, SurfaceScale.option(scale) == nil { throw .invalidScale(scale) }
        if let chosen = Backend(rawValue: options.backend.rawValue) {
            backend = chosen
            surfaceBackend = try DisplaySurface.open(chosen, options)
            DisplaySurface.log.debug("backend \(chosen.rawValue): asked for (options.backend = .\(chosen.rawValue))")
        } else {
            (backend, surfaceBackend) = try DisplaySurface.openAuto(options)
        }
        dispatcher = surfaceBackend.dispatcher
        width = surfaceBackend.width
        height = surfaceBackend.height
        glesMajorVersion = surfaceBackend.glesMajorVersion
        scale = surfaceBackend.scale
        pointSize = surfaceBackend.pointSize
        surfaceBackend.events = SurfaceBackendEvents(
            failed: { [weak self] failure in self?.fail(DisplaySurfaceError(failure)) },
            key: { [weak self] sym in self?.onKey?(KeyEvent(symbol: KeySymbol(rawValue: sym))) },
            input: { [weak self] event in self?.input(event) },
            resized: { [weak self] w, h in self?.resized(width: w, height: h) },
            closeRequested: { [weak self] in self?.onCloseRequest?() },
            scaleChanged: { [weak self] in self?.scaleChanged() })
        DisplaySurface.log.debug("\(backend.rawValue): \(environment.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        DisplaySurface.openSurfaces.append(WeakSurface(self))
        DisplaySurface.surfacesGeneration += 1
    }

    isolated deinit {
        close()
    }

    /// Opens `backend`: the table of backends, one entry each (the compiler checks that every
    /// backend has one).
    private static func open(_ backend: Backend, _ o: Options) throws(DisplaySurfaceError) -> any DisplaySurfaceBackend {
        if o.graphics == .external, let reason = externalGraphicsUnsupported(on: backend) {
            throw .externalGraphicsUnsupported(backend, reason: reason)
        }
        do {
            switch backend {
            case .wayland: return try WaylandSurface(options: o)
            case .drm: return try KMSSurface(options: o)
            case .offscreen:
                // Options.scale: the pbuffer is width×height points at that scale.
                let scale = o.scale.flatMap(SurfaceScale.option) ?? .one
                var offscreen = o.offscreen
                offscreen.scale = scale.factor
                let pixels = o.width > 0 && o.height > 0 ? scale.pixelSize(points: o.width, o.height) : (width: o.width, height: o.height)
                return try OffscreenDisplay(width: pixels.width, height: pixels.height, options: offscreen)
            }
        } catch {
            throw DisplaySurfaceError(error)
        }
    }

    /// Why `backend` cannot hand its display to the program's own graphics API (nil: it can).
    /// Checked before anything is opened: no DRM master is taken for a surface that cannot serve.
    private static func externalGraphicsUnsupported(on backend: Backend) -> String? {
        switch backend {
        case .wayland:
            return nil
        case .drm:
            return "Vulkan on a console presents through VK_KHR_display, whose driver owns the CRTC and "
                + "flips it itself, so the surface could neither hand over the output it holds as DRM master nor see "
                + "the page flips that time the link (and Mesa's software Vulkan driver, lavapipe, lists VK_KHR_display "
                + "but has no display to show on). Run the program under a Wayland compositor (a kiosk compositor such as cage, or "
                + "weston's kiosk shell), or draw with DisplaySurface.Options.graphics = .gles."
        case .offscreen:
            return "the offscreen backend is a GLES pbuffer on virtual time and has no window for another API; "
                + "draw with DisplaySurface.Options.graphics = .gles."
        }
    }

    /// Wayland when a compositor is reachable, else DRM/KMS; the error lists both attempts.
    private static func openAuto(_ options: Options) throws(DisplaySurfaceError) -> (Backend, any DisplaySurfaceBackend) {
        var attempts: [DisplaySurfaceError.Attempt] = []
        for backend in [Backend.wayland, .drm] {
            do {
                let surface = try open(backend, options)
                DisplaySurface.log.debug(
                    backend == .wayland
                        ? "backend wayland (auto): a compositor is reachable"
                        : "backend drm (auto): no Wayland compositor, a KMS output opened")
                return (backend, surface)
            } catch {
                attempts.append(.init(backend: backend, error: error))
                DisplaySurface.log.debug(
                    backend == .wayland
                        ? "auto: Wayland not available (\(error)); trying DRM/KMS"
                        : "auto: DRM/KMS not available either (\(error)); no display")
            }
        }
        throw .noDisplay(tried: attempts)
    }

    /// An input event: to ``onInput``, and a key press or repeat to ``onKey`` too.
    private func input(_ event: InputEvent) {
        guard !isClosed else { return }
        onInput?(event)
        if case .key(let key) = event.kind, key.phase != .released, !isClosed {
            onKey?(KeyEvent(symbol: key.symbol))
        }
    }

    private func resized(width: Int32, height: Int32) {
        guard !isClosed else { return }
        self.width = width
        self.height = height
        pointSize = surfaceBackend.pointSize
        onResize?(width, height)
    }

    private func scaleChanged() {
        guard !isClosed else { return }
        scale = surfaceBackend.scale
        if surfaceBackend.width != width || surfaceBackend.height != height {
            resized(width: surfaceBackend.width, height: surfaceBackend.height)
        }
        pointSize = surfaceBackend.pointSize
        onScaleChange?(scale)
    }

    private func fail(_ failure: DisplaySurfaceError) {
        guard error == nil else { return }
        DisplaySurface.log.debug("the display failed: \(failure)")
        error = failure
        onError?(failure)
    }

    // MARK: Fullscreen

    /// Whether the surface covers its output: on Wayland, whether the compositor's last configure
    /// made the window fullscreen; on DRM/KMS and offscreen always true (the surface is the whole
    /// output).
    public var isFullscreen: Bool { surfaceBackend.isFullscreen }

    /// Asks for fullscreen (`true`) or a window again (`false`). On Wayland the compositor decides:
    /// when it configures the new size, ``onResize`` reports it (leaving fullscreen, the window goes
    /// back to the size it had, by default ``Options/width``×``Options/height``) and the next frame
    /// is drawn at it; fullscreen is asked for on the output ``Options/waylandOutput`` names, when
    /// set and still there. On DRM/KMS and offscreen the surface is always the whole output:
    /// nothing happens.
    public func setFullscreen(_ on: Bool) {
        guard !isClosed else { return }
        surfaceBackend.setFullscreen(on)
    }

    // MARK: Drawing

    /// Makes the GLES context current on the calling thread, on this surface, for drawing a frame.
    public func beginFrame() throws(DisplaySurfaceError) {
        try forward { () throws(SurfaceBackendError) in try surfaceBackend.beginFrame() }
    }

    /// Presents what was drawn since ``beginFrame()`` and releases the context from this thread,
    /// unless ``runMainLoop()`` runs: then the main thread draws every frame and the context stays
    /// current on it (no `eglMakeCurrent` per frame). `damage` (pixels, top-left origin) is the
    /// changed region when the compositor can use it (nil: everything); DRM/KMS always flips the
    /// whole frame.
    public func present(damage: PixelRect? = nil) throws(DisplaySurfaceError) {
        try forward { () throws(SurfaceBackendError) in
            try surfaceBackend.present(damage: damage, keepsContextCurrent: MainLoop.isRunning)
        }
    }

    /// Releases the context from the calling thread (after binding it outside a frame, before
    /// `dispatchMain()` hands the main queue to other threads). Harmless when not bound.
    public func releaseContext() {
        surfaceBackend.releaseContext()
    }

    /// Warm-up before the first frame, never shown: `draw` draws one frame (the context is
    /// current; do not present). The driver builds its shader variants now, not in the first
    /// frames (llvmpipe compiles them with LLVM: seconds under emulation). On DRM/KMS each
    /// buffer of the scan-out chain is drawn once and registered for scan-out too. Returns with
    /// the context released, ready for `dispatchMain()`.
    public func prepare(draw: () -> Void) throws(DisplaySurfaceError) {
        defer { releaseContext() }
        try forward { () throws(SurfaceBackendError) in try surfaceBackend.prepare(draw: draw) }
    }

    /// The frame drawn so far (between ``beginFrame()`` and ``present(damage:)``), as RGBA rows
    /// from the top, `width*4` bytes each.
    public func readPixels() throws(DisplaySurfaceError) -> [UInt8] {
        try checkOpen()
        if options.graphics == .external { throw .noGLESContext }
        guard let pixels = surfaceBackend.readPixels() else {
            throw .screenshot("cannot read the frame's pixels (glReadPixels is not available through EGL)")
        }
        return pixels
    }

    // MARK: Another graphics API

    /// What the program's own graphics API draws into, on a surface opened with
    /// ``Options/graphics`` `.external` (nil with `.gles`, and once closed): on Wayland the
    /// `wl_display *` and `wl_surface *` for `VK_KHR_wayland_surface`. They stay the surface's:
    /// destroy the swapchain and the `VkSurfaceKHR` before closing it.
    public var nativeWindow: NativeWindow? {
        isClosed ? nil : surfaceBackend.nativeWindow
    }

    /// The commit hook, on a surface opened with ``Options/graphics`` `.external`: call it right
    /// before each call that presents (`vkQueuePresentKHR`), with the size of the buffer it
    /// presents (the swapchain's extent), so the refresh's frame callback and presentation
    /// feedback go with that commit. A link on the surface then calls back once per refresh with
    /// the compositor's presentation times, as with ``present(damage:)``. The buffer scale goes
    /// with the first commit of a buffer of ``width``×``height`` pixels (the size after a scale
    /// change): recreate the swapchain in ``onResize`` and ``onScaleChange`` before the next present.
    /// The surface makes no `wp_fifo_v1` or `wp_commit_timer_v1` on the window (Mesa's Vulkan WSI
    /// makes its own in FIFO mode; the protocols allow one of each per surface). Does nothing with
    /// `.gles`. When no present came through it for `WaylandFrameSource.missingCommitHookRefreshes`
    /// refreshes in a row, one warning says so (label `displaylink.surface`).
    public func willCommit(bufferWidth: Int32, bufferHeight: Int32) {
        guard !isClosed, error == nil else { return }
        surfaceBackend.willCommit(bufferWidth: bufferWidth, bufferHeight: bufferHeight)
    }

    /// Writes the frame drawn so far (see ``readPixels()``) to a PNG file.
    public func screenshot(to path: String) throws(DisplaySurfaceError) {
        let pixels = try readPixels()
        do {
            try PNGImage.write(path: path, width: Int(width), height: Int(height), rgba: pixels)
        } catch {
            throw .screenshot(error.description)
        }
    }

    private func checkOpen() throws(DisplaySurfaceError) {
        if isClosed { throw .closed }
        if let error { throw error }
    }

    /// Runs a backend call on an open surface, its failure as the surface's error.
    private func forward(_ call: () throws(SurfaceBackendError) -> Void) throws(DisplaySurfaceError) {
        try checkOpen()
        do { try call() } catch { throw DisplaySurfaceError(error) }
    }

    // MARK: Closing

    /// Runs `handler` at the end of ``close()``, after the display is released (e.g. stopping a
    /// private compositor the surface was connected to). Runs at once if already closed.
    public func addCloseHandler(_ handler: @escaping @MainActor () -> Void) {
        if isClosed { handler() } else { closeHandlers.append(handler) }
    }

    /// Tears the surface down in order and invalidates its links. Idempotent.
    public func close() {
        guard !isClosed else { return }
        DisplaySurface.log.debug("closing the \(backend.rawValue) surface")
        environmentAtClose = environment
        isClosed = true
        dispatcher.invalidateAll()
        // The backend's own order: keys, the frame source, EGL, then the display.
        surfaceBackend.events = SurfaceBackendEvents()
        surfaceBackend.close()
        DisplaySurface.openSurfaces.removeAll { $0.surface == nil || $0.surface === self }
        DisplaySurface.surfacesGeneration += 1
        let handlers = closeHandlers
        closeHandlers.removeAll()
        for handler in handlers { handler() }
    }
}

/// A weak reference to an open surface (for signal handling).
@MainActor
struct WeakSurface {
    weak var surface: DisplaySurface?
    init(_ surface: DisplaySurface) { self.surface = surface }
}
