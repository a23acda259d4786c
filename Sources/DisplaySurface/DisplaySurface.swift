import Dispatch
import DisplayLinkCore
import DRMBackend
import EGLGraphics
import Glibc
import Logging
import PNGImage
import WaylandBackend
import ConsoleSeat

/// A place to draw that a display link follows: an xdg toplevel on a Wayland compositor, or a
/// DRM/KMS output on a console. The same calls on both:
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
///   feedback, or page-flip events with the vblank's time.
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
///   objects and the device; then the handlers added with ``addCloseHandler(_:)`` (e.g. stopping
///   a private compositor).
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
    /// The GLES version of the context (3 when available, else 2).
    public let glesMajorVersion: Int32
    /// The first failure reported through ``onError``; nothing is presented after it.
    public private(set) var error: DisplaySurfaceError?
    public private(set) var isClosed = false

    /// Called on the main actor with each key press (XKB keysyms on both backends).
    public var onKey: ((KeyEvent) -> Void)?
    /// Called once, on the main actor, when the display fails while running (the compositor went
    /// away, a flip failed). The links are invalidated.
    public var onError: ((DisplaySurfaceError) -> Void)?
    /// Called when the user asked to close the window (Wayland). Nothing is closed by itself.
    public var onCloseRequest: (() -> Void)?
    /// Called after the compositor configured a new size (already in ``width``/``height``; the
    /// buffers take it at the next present).
    public var onResize: ((Int32, Int32) -> Void)?

    // Wayland parts (released in order by close()).
    var connection: WaylandConnection?
    var window: WaylandWindow?
    var eglWindow: WaylandEGLWindow?
    var waylandSource: WaylandFrameSource?
    // DRM/KMS parts.
    var display: DRMDisplay?
    private var consoleKeyboard: ConsoleKeyboard?
    private var consoleInput: ConsoleInput?
    private var keyDecoder = ConsoleKeyDecoder()
    private var keyFlushPending = false

    private var closeHandlers: [@MainActor () -> Void] = []
    var environmentAtClose: [EnvironmentEntry]?

    // MARK: Opening

    /// Opens a surface as `options` say: the backend chosen, or with `.auto` Wayland when a
    /// compositor is reachable, else DRM/KMS (the error then lists both attempts).
    public init(options: Options = Options()) throws(DisplaySurfaceError) {
        self.options = options
        var wayland: (WaylandConnection, WaylandWindow, WaylandEGLWindow, WaylandFrameSource)?
        var drm: DRMDisplay?
        switch options.backend {
        case .wayland:
            wayland = try DisplaySurface.openWayland(options)
            DisplaySurface.log.debug("backend wayland: asked for (options.backend = .wayland)")
        case .drm:
            drm = try DisplaySurface.openDRM(options)
            DisplaySurface.log.debug("backend drm: asked for (options.backend = .drm)")
        case .auto:
            var attempts: [DisplaySurfaceError.Attempt] = []
            do { wayland = try DisplaySurface.openWayland(options) } catch {
                attempts.append(.init(backend: .wayland, error: error))
                DisplaySurface.log.debug("auto: Wayland not available (\(error)); trying DRM/KMS")
            }
            if wayland == nil {
                do { drm = try DisplaySurface.openDRM(options) } catch {
                    attempts.append(.init(backend: .drm, error: error))
                    DisplaySurface.log.debug("auto: DRM/KMS not available either (\(error)); no display")
                    throw .noDisplay(tried: attempts)
                }
                DisplaySurface.log.debug("backend drm (auto): no Wayland compositor, a KMS output opened")
            } else {
                DisplaySurface.log.debug("backend wayland (auto): a compositor is reachable")
            }
        }
        if let (connection, window, egl, source) = wayland {
            backend = .wayland
            dispatcher = source.dispatcher
            width = egl.width
            height = egl.height
            glesMajorVersion = egl.context.glesMajorVersion
            self.connection = connection
            self.window = window
            self.eglWindow = egl
            self.waylandSource = source
            attachWayland()
            DisplaySurface.log.debug("wayland: compositor \(connection.compositorName ?? "unknown") on \(connection.socketName), \(width)x\(height), GLES \(glesMajorVersion)")
        } else if let drm {
            backend = .drm
            dispatcher = drm.dispatcher
            width = drm.width
            height = drm.height
            glesMajorVersion = drm.context.glesMajorVersion
            display = drm
            attachDRM()
            DisplaySurface.log.debug("drm: \(drm.devicePath) (\(drm.driverName)), \(drm.connectorName), mode \(drm.mode), GLES \(glesMajorVersion)")
        } else {
            throw .noDisplay(tried: [])  // not reached
        }
        DisplaySurface.openSurfaces.append(WeakSurface(self))
        DisplaySurface.surfacesGeneration += 1
    }

    isolated deinit {
        close()
    }

    private static func openWayland(_ options: Options) throws(DisplaySurfaceError)
        -> (WaylandConnection, WaylandWindow, WaylandEGLWindow, WaylandFrameSource) {
        do {
            let connection = try WaylandConnection(socket: options.waylandSocket,
                                                   options: .init(bindFifo: options.waylandFifo,
                                                                  replyTimeout: options.waylandReplyTimeout))
            let output = try options.waylandOutput.map { name throws(WaylandError) in try connection.output(named: name) }
            let window = try WaylandWindow(connection: connection, title: options.title, appID: options.appID,
                                           width: max(1, options.width), height: max(1, options.height),
                                           fullscreen: options.fullscreen, fullscreenOutput: output)
            let egl = try WaylandEGLWindow(window: window)
            let source = WaylandFrameSource(window: window, configuration: .init(
                allowsCommitTiming: options.waylandCommitTiming,
                allowsCommitTimingOnVirtualMonitors: options.waylandCommitTimingOnVirtualMonitors))
            egl.frameSource = source  // a swap is the frame's commit
            return (connection, window, egl, source)
        } catch {
            throw .wayland(error)
        }
    }

    private static func openDRM(_ options: Options) throws(DisplaySurfaceError) -> DRMDisplay {
        let mode = try options.mode?.drmRequest()
        do {
            return try DRMDisplay(options: DRMDisplay.Options(devicePath: options.devicePath, mode: mode, kmsAPI: options.kmsAPI,
                                                             session: SeatSession.Options(manager: options.seatAccess)))
        } catch {
            throw .drm(error)
        }
    }

    private func attachWayland() {
        guard let connection, let window, let eglWindow else { return }
        window.onClose = { [weak self] in self?.onCloseRequest?() }
        window.onResize = { [weak self] w, h in
            guard let self, !self.isClosed else { return }
            eglWindow.resize(width: w, height: h)
            self.width = eglWindow.width
            self.height = eglWindow.height
            self.onResize?(self.width, self.height)
        }
        connection.onError = { [weak self] error in self?.fail(.wayland(error)) }
        connection.keyboard?.onKeyPress = { [weak self] sym in
            self?.onKey?(KeyEvent(symbol: KeySymbol(rawValue: sym)))
        }
    }

    // MARK: Fullscreen

    /// Whether the surface covers its output: on Wayland, whether the compositor's last configure
    /// made the window fullscreen; on DRM/KMS always true (the surface is the whole output).
    public var isFullscreen: Bool {
        if let window { return window.isFullscreen }
        return backend == .drm
    }

    /// Asks for fullscreen (`true`) or a window again (`false`). On Wayland the compositor decides:
    /// when it configures the new size, ``onResize`` reports it (leaving fullscreen, the window goes
    /// back to the size it had, by default ``Options/width``×``Options/height``) and the next frame
    /// is drawn at it; fullscreen is asked for on the output ``Options/waylandOutput`` names, when
    /// set and still there. On DRM/KMS the surface is always the whole output: nothing happens.
    public func setFullscreen(_ on: Bool) {
        guard !isClosed, let window, !window.isDestroyed else { return }
        // On the output named by Options.waylandOutput when it (still) exists (checked at open).
        if on, let name = options.waylandOutput, let output = try? window.connection.output(named: name),
           (try? window.setFullscreen(on: output)) != nil {
            return
        }
        window.setFullscreen(on)
    }

    private func attachDRM() {
        guard let display else { return }
        display.onError = { [weak self] error in self?.fail(.drm(error)) }
        guard options.readsConsoleKeys else { return }
        // A terminal on standard input (interactive use): its keys in raw mode. Without one (a
        // systemd unit on a console): the console's keyboards through the seat (libinput).
        if let keyboard = ConsoleKeyboard() {
            consoleKeyboard = keyboard
            keyboard.onKey = { [weak self] byte in self?.consoleByte(byte) }
            DisplaySurface.log.debug("keys: from the terminal on standard input (raw mode)")
            return
        }
        do {
            let input = try ConsoleInput(session: display.session)
            input.onKey = { [weak self] sym in self?.onKey?(KeyEvent(symbol: KeySymbol(rawValue: sym))) }
            consoleInput = input
            DisplaySurface.log.debug("keys: no terminal on standard input; the console's keyboards through libinput (\(input.keyboards.joined(separator: ", ")))")
        } catch {
            // A warning, not a debug line: the program asked for keys (the default) and gets none,
            // and libinput's own message (e.g. "udev device never initialized") does not say why.
            DisplaySurface.log.warning("""
                keys: no terminal on standard input and the console's keyboards cannot be read, so onKey \
                gets no keys (\(error)); set DisplaySurface.Options.readsConsoleKeys = false if none are needed
                """)
        }
    }

    private func consoleByte(_ byte: UInt8) {
        keyDecoder.feed(byte) { symbol in onKey?(KeyEvent(symbol: symbol)) }
        // The keyboard hands over one read's bytes in a row: once they are all in, a lone
        // Escape is the Escape key (not the start of a cursor key's sequence).
        guard !keyDecoder.isIdle, !keyFlushPending else { return }
        keyFlushPending = true
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.keyFlushPending = false
                self.keyDecoder.finish { symbol in self.onKey?(KeyEvent(symbol: symbol)) }
            }
        }
    }

    private func fail(_ failure: DisplaySurfaceError) {
        guard error == nil else { return }
        DisplaySurface.log.debug("the display failed: \(failure)")
        error = failure
        onError?(failure)
    }

    // MARK: Drawing

    /// Makes the GLES context current on the calling thread, on this surface, for drawing a frame.
    public func beginFrame() throws(DisplaySurfaceError) {
        try checkOpen()
        do {
            if let eglWindow { try eglWindow.beginFrame() } else if let display { try display.beginFrame() }
        } catch {
            throw .graphics(DisplaySurface.explain(error))
        }
    }

    /// Presents what was drawn since ``beginFrame()`` and releases the context from this thread,
    /// unless ``runMainLoop()`` runs: then the main thread draws every frame and the context stays
    /// current on it (no `eglMakeCurrent` per frame). `damage` (pixels, top-left origin) is the
    /// changed region when the compositor can use it (nil: everything); DRM/KMS always flips the
    /// whole frame.
    public func present(damage: PixelRect? = nil) throws(DisplaySurfaceError) {
        try checkOpen()
        if let eglWindow {
            eglWindow.staysCurrentAfterSwap = MainLoop.isRunning
            do { try eglWindow.swapBuffers(damage: damage) } catch { throw .graphics(DisplaySurface.explain(error)) }
        } else if let display {
            display.staysCurrentAfterSwap = MainLoop.isRunning
            do { try display.present() } catch { throw .drm(error) }
        }
    }

    /// Releases the context from the calling thread (after binding it outside a frame, before
    /// `dispatchMain()` hands the main queue to other threads). Harmless when not bound.
    public func releaseContext() {
        if let eglWindow { eglWindow.releaseCurrent() } else if let display { display.releaseCurrent() }
    }

    /// Warm-up before the first frame, never shown: `draw` draws one frame (the context is
    /// current; do not present). The driver builds its shader variants now, not in the first
    /// frames (llvmpipe compiles them with LLVM: seconds under emulation). On DRM/KMS each
    /// buffer of the scan-out chain is drawn once and registered for scan-out too. Returns with
    /// the context released, ready for `dispatchMain()`.
    public func prepare(draw: () -> Void) throws(DisplaySurfaceError) {
        try checkOpen()
        defer { releaseContext() }
        if let display {
            do { try display.prepareBuffers(draw: draw) } catch { throw .drm(error) }
        } else {
            try beginFrame()
            // Two frames: llvmpipe builds more variants for a frame that follows another
            // (measured under emulation: 2.3 s, 0.5 s, then 65 ms).
            draw()
            draw()
        }
    }

    /// The frame drawn so far (between ``beginFrame()`` and ``present(damage:)``), as RGBA rows
    /// from the top, `width*4` bytes each.
    public func readPixels() throws(DisplaySurfaceError) -> [UInt8] {
        try checkOpen()
        let surface = eglWindow?.surface ?? display?.surface
        guard let pixels = surface?.readPixels(width: width, height: height) else {
            throw .screenshot("cannot read the frame's pixels (glReadPixels is not available through EGL)")
        }
        return pixels
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

    private static func explain(_ error: EGLError) -> String {
        guard error.code == 0x3002 /* EGL_BAD_ACCESS */ else { return error.description }
        return error.description + " The context is still current on another thread: call "
            + "DisplaySurface.releaseContext() (or prepare(draw:)) on the thread that bound it before dispatchMain()."
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
        // Keys first: the terminal goes back to how it was.
        consoleKeyboard?.onKey = nil
        consoleKeyboard?.restore()
        consoleKeyboard = nil
        consoleInput?.close()
        consoleInput = nil
        connection?.keyboard?.onKeyPress = nil
        connection?.onError = nil
        window?.onClose = nil
        window?.onResize = nil
        // Wayland: the frame source's requests, the EGL surface and then the wl_egl_window (and the
        // context with its EGL display), the toplevel, and last the connection.
        waylandSource = nil
        eglWindow = nil
        window?.destroy()
        window = nil
        connection = nil
        // DRM/KMS: the previous CRTC restored and master dropped, then (as the display object
        // goes) EGL, and after it the GBM objects and the device's descriptor.
        if let display {
            display.onError = nil
            display.shutDown()
            self.display = nil
        }
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
