import DisplayLinkCore
import EGLGraphics
import SurfaceBackend
import WaylandBackend

/// The Wayland backend of a ``DisplaySurface``: an xdg toplevel with an EGL window, paced by its
/// frame source (frame callbacks with presentation feedback). With `.external` graphics there is
/// no EGL window: the program's own API (a Vulkan swapchain) attaches and commits the buffers, and
/// the frame source's requests go with the commit the program announces (``willCommit(bufferWidth:bufferHeight:)``).
@MainActor
final class WaylandSurface: DisplaySurfaceBackend {
    let dispatcher: RefreshDispatcher
    let glesMajorVersion: Int32
    var events = SurfaceBackendEvents()
    /// The connection the main loop reads (nil once closed).
    private(set) var connection: WaylandConnection?
    private var window: WaylandWindow?
    private var eglWindow: WaylandEGLWindow?
    private var frameSource: WaylandFrameSource?
    /// The output asked for with fullscreen (`DisplaySurface.Options.waylandOutput`).
    private let fullscreenOutput: String?
    /// With `.external` graphics: a dispatch on the main queue after a present the program made
    /// outside the connection's dispatch (from a main-queue block, e.g. a present-wait report).
    /// Mesa's WSI reads the display inside `vkQueuePresentKHR`, `vkAcquireNextImageKHR` and
    /// `vkWaitForPresentKHR`, on any thread, and what it reads for this connection waits in its
    /// queue until dispatched: the socket is not readable again for it. (A present inside a link
    /// callback or another event handler is followed by the connection's own dispatch.)
    private var dispatchAfterPresent: MainQueueTimer?

    /// Connects, opens the toplevel and its EGL window, as `options` say.
    init(options: DisplaySurface.Options) throws(SurfaceBackendError) {
        do {
            let connection = try WaylandConnection(
                socket: options.waylandSocket,
                options: .init(
                    bindFifo: options.waylandFifo,
                    replyTimeout: options.waylandReplyTimeout))
            let output = try options.waylandOutput.map { name throws(WaylandError) in try connection.output(named: name) }
            let external = options.graphics == .external
            let window = try WaylandWindow(
                connection: connection, title: options.title, appID: options.appID,
                width: max(1, options.width), height: max(1, options.height),
                fullscreen: options.fullscreen, fullscreenOutput: output, committedByProgram: external)
            let egl = external ? nil : try WaylandEGLWindow(window: window)
            let source = WaylandFrameSource(
                window: window,
                configuration: .init(
                    allowsCommitTiming: options.waylandCommitTiming && !external,
                    requiresVsyncForTimedCommits: !options.waylandCommitTimingWithoutVsync,
                    latency: options.latency))
            egl?.frameSource = source  // a swap is the frame's commit
            if external {
                dispatchAfterPresent = MainQueueTimer { [weak connection] in connection?.dispatchPending() }
                source.onCommitHookMissing = {
                    DisplaySurface.log.warning(
                        """
                        no frame was committed through DisplaySurface.willCommit(bufferWidth:bufferHeight:) in \
                        \(WaylandFrameSource.missingCommitHookRefreshes) refreshes: the links tick on predicted vblanks \
                        (estimated timestamps). Call it right before each vkQueuePresentKHR
                        """)
                }
            }
            self.connection = connection
            self.window = window
            self.eglWindow = egl
            self.frameSource = source
            dispatcher = source.dispatcher
            glesMajorVersion = egl?.context.glesMajorVersion ?? 0
        } catch {
            throw SurfaceBackendError(.wayland(error))
        }
        fullscreenOutput = options.waylandOutput
        attach()
    }

    private func attach() {
        guard let connection, let window else { return }
        window.onClose = { [weak self] in self?.events.closeRequested?() }
        window.onResize = { [weak self, weak window] _, _ in
            guard let self, let window else { return }
            self.eglWindow?.resize(width: window.pixelWidth, height: window.pixelHeight)
            self.events.resized?(self.width, self.height)
        }
        // The buffers take the new pixel size before the next frame draws, which commits them
        // with the new buffer scale or viewport: no frame is skipped or drawn at the old size.
        window.onScaleChange = { [weak self, weak window] _ in
            guard let self, let window else { return }
            self.eglWindow?.resize(width: window.pixelWidth, height: window.pixelHeight)
            self.events.scaleChanged?()
        }
        connection.onError = { [weak self] error in self?.events.failed?(SurfaceBackendError(.wayland(error))) }
        connection.seatInput?.onInput = { [weak self] event in self?.events.input?(event) }
    }

    /// The buffers' size: the EGL window's, or (`.external`) the size the program's swapchain
    /// should have.
    var width: Int32 { eglWindow?.width ?? window?.pixelWidth ?? 0 }
    var height: Int32 { eglWindow?.height ?? window?.pixelHeight ?? 0 }
    var scale: Double { window?.scale.factor ?? 1 }
    /// The configured size (surface-local coordinates are points).
    var pointSize: (width: Double, height: Double) { (Double(window?.width ?? 0), Double(window?.height ?? 0)) }

    var environment: [EnvironmentEntry] {
        guard let connection, let window, let frameSource else { return [] }
        let advertised = window.outputs.first?.advertisedPeriod ?? frameSource.timeline.advertisedPeriod
        let graphics: [EnvironmentEntry] =
            eglWindow.map { egl in
                [
                    EnvironmentEntry("egl_vendor", .string(egl.context.vendor)),
                    EnvironmentEntry("gles_version", .int(Int(egl.context.glesMajorVersion))),
                    EnvironmentEntry("swap_with_damage", .bool(egl.context.supportsSwapWithDamage))
                ]
            } ?? [EnvironmentEntry("graphics", .string("external (the program presents)"))]
        return [
            EnvironmentEntry("compositor", .string(connection.compositorDescription)),
            EnvironmentEntry("socket", .string(connection.socketName)),
            EnvironmentEntry("presentation_clock", connection.presentationClock.map { .string($0.description) } ?? .unknown),
            EnvironmentEntry("refresh_advertised", advertised.value > 0 ? .number(1 / advertised.seconds) : .unknown)
        ] + graphics + [
            EnvironmentEntry("timing_protocols", .list(frameSource.timingProtocolsInUse)),
            EnvironmentEntry("commit_timing", .string(frameSource.commitTimingState)),
            EnvironmentEntry("latency", .string(frameSource.configuration.latency.rawValue)),
            EnvironmentEntry("scale", .string(window.scale.description))
        ]
    }

    var isFullscreen: Bool { window?.isFullscreen ?? false }

    func setFullscreen(_ on: Bool) {
        guard let window, !window.isDestroyed else { return }
        // On the output named by Options.waylandOutput when it (still) exists (checked at open).
        if on, let name = fullscreenOutput, let output = try? window.connection.output(named: name),
            (try? window.setFullscreen(on: output)) != nil
        {
            return
        }
        window.setFullscreen(on)
    }

    func beginFrame() throws(SurfaceBackendError) {
        guard let eglWindow else { throw noContext }
        do { try eglWindow.beginFrame() } catch { throw SurfaceBackendError(backend: "wayland", error) }
    }

    func present(damage: PixelRect?, keepsContextCurrent: Bool) throws(SurfaceBackendError) {
        guard let eglWindow else { throw noContext }
        eglWindow.staysCurrentAfterSwap = keepsContextCurrent
        do { try eglWindow.swapBuffers(damage: damage) } catch { throw SurfaceBackendError(backend: "wayland", error) }
    }

    func releaseContext() {
        eglWindow?.releaseCurrent()
    }

    private var noContext: SurfaceBackendError { SurfaceBackendError(.noGLESContext) }

    var nativeWindow: NativeWindow? {
        guard eglWindow == nil, let connection, let window, !window.isDestroyed else { return nil }
        return .wayland(display: connection.displayHandle, surface: window.surfaceHandle)
    }

    /// The program is about to present a buffer of `bufferWidth`×`bufferHeight` pixels: the
    /// refresh's requests go with its commit, and the buffer scale (or viewport) when the buffer
    /// has the window's pixel size (a buffer of the old size keeps the old scale: a scale whose
    /// buffer size it does not divide is a protocol error).
    func willCommit(bufferWidth: Int32, bufferHeight: Int32) {
        guard eglWindow == nil, let connection, let window, !window.isDestroyed else { return }
        if bufferWidth == window.pixelWidth && bufferHeight == window.pixelHeight { window.applyScale() }
        frameSource?.willCommit()
        if !connection.isDispatching { dispatchAfterPresent?.schedule(at: MonotonicInstant.now()) }
    }

    func readPixels() -> [UInt8]? {
        guard let eglWindow else { return nil }
        return eglWindow.surface.readPixels(width: eglWindow.width, height: eglWindow.height)
    }

    /// Input and handlers first, then the frame source's requests, the EGL surface and then the
    /// wl_egl_window (and the context with its EGL display), the toplevel, and last the connection.
    func close() {
        connection?.seatInput?.onInput = nil
        connection?.onError = nil
        window?.onClose = nil
        window?.onResize = nil
        window?.onScaleChange = nil
        dispatchAfterPresent = nil
        frameSource = nil
        eglWindow = nil
        window?.destroy()
        window = nil
        connection = nil
    }
}
