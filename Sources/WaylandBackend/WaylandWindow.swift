import DisplayLinkCore
import FrameSchedulers
internal import CWayland
internal import CWaylandClient

/// An xdg toplevel window: a `wl_surface` with its xdg role, configure/ack handling, resize and
/// close requests, and the outputs it is on.
@MainActor
public final class WaylandWindow {
    public let connection: WaylandConnection
    /// The size the compositor asked for (or the default one), in surface pixels.
    public private(set) var width: Int32
    public private(set) var height: Int32
    /// Whether the compositor's last configure put the window in the fullscreen state.
    public private(set) var isFullscreen = false
    /// Whether the compositor's last configure put the window in the maximized state.
    public private(set) var isMaximized = false
    /// Whether the compositor asked the window to close.
    public private(set) var closeRequested = false
    /// Called when the compositor configures a new size.
    public var onResize: ((Int32, Int32) -> Void)?
    /// Called when the compositor asks to close the window (the user closed it).
    public var onClose: (() -> Void)?
    /// The outputs the surface is on (wl_surface.enter / leave).
    public private(set) var outputs: [WaylandOutput] = []
    /// Whether the compositor's last configure had the `suspended` state (xdg_wm_base 6: the
    /// window is not visible, e.g. minimised, and the compositor stopped repainting it).
    public private(set) var isSuspended = false
    /// Called when ``isSuspended`` changes (after the configure is acknowledged).
    public var onSuspendedChange: ((Bool) -> Void)?
    /// The surface's scale (see `WaylandWindow+Scale.swift`): ``width``×``height`` are points, a
    /// buffer is ``pixelWidth``×``pixelHeight``.
    public internal(set) var scale = SurfaceScale.one
    /// Called when ``scale`` changes; the next buffer should have the new pixel size.
    public var onScaleChange: ((SurfaceScale) -> Void)?
    /// The surface's `wp_fractional_scale_v1` and `wp_viewport` (with both managers offered), the
    /// last preferred scale it sent (120ths), and what the last commit set: buffer scale, viewport
    /// destination.
    var fractionalScale: OpaquePointer?
    var viewport: OpaquePointer?
    var fractional120: UInt32?
    /// The last `wl_surface.preferred_buffer_scale` (with `wl_compositor` version 6).
    var preferredBufferScale: Int32?
    var appliedBufferScale: Int32 = 1
    var appliedDestination: (Int32, Int32)?
    var outputScaleHandlerIDs: [(output: WaylandOutput, id: Int)] = []
    var scaleDecisionPending = false
    var scaleDispatchHandlerID: Int?

    let surface: OpaquePointer
    private let xdgSurface: OpaquePointer
    private let toplevel: OpaquePointer
    /// The surface's `wp_commit_timer_v1` and `wp_fifo_v1` (one each per surface at most), when
    /// the compositor offers them.
    private(set) var commitTimer: OpaquePointer?
    private(set) var fifo: OpaquePointer?
    /// Whether the program's graphics stack commits the surface (see
    /// ``init(connection:title:appID:width:height:fullscreen:fullscreenOutput:committedByProgram:)``).
    public let committedByProgram: Bool
    private var suspendedHandlers = HandlerList<(Bool) -> Void>()
    private var outputHandlers = HandlerList<() -> Void>()
    /// The mode-change handler this window registered with each output it entered.
    private var modeHandlerIDs: [(output: WaylandOutput, id: Int)] = []
    /// The outputs whose mode changes this window follows (each registered once).
    private var watchedOutputs: Set<ObjectIdentifier> = []
    private var pendingSuspended = false
    private var configured = false
    private var pendingWidth: Int32 = 0
    private var pendingHeight: Int32 = 0
    private var pendingFullscreen = false
    private var pendingMaximized = false
    /// The size to go back to when a configure leaves the size to the client (0×0, e.g. on
    /// leaving fullscreen): the one asked for at creation, or the last one configured while
    /// neither fullscreen nor maximized.
    private var windowedWidth: Int32
    private var windowedHeight: Int32
    /// Whether ``destroy()`` ran (nothing may be requested on the surface after it).
    public var isDestroyed: Bool { destroyed }
    private var destroyed = false

    /// Creates the window and waits (a few roundtrips at most) for its first configure.
    /// `fullscreen` asks for the fullscreen state before the first commit, so the first
    /// configure (and the first buffer) already has the output's size when the compositor grants it;
    /// `fullscreenOutput` (one of the connection's ``WaylandConnection/outputs``) names the output
    /// to be fullscreen on (nil: the compositor chooses), e.g. for a kiosk. Throws
    /// ``WaylandError/unknownOutput(_:available:)`` when that output is not one of the connection's.
    /// `committedByProgram`: the program's graphics stack attaches and commits the buffers (a
    /// Vulkan swapchain): a frame source then sends its requests with the commit the program
    /// announces (``WaylandFrameSource/willCommit()``) and never commits the surface itself, and
    /// the window makes no `wp_fifo_v1` or `wp_commit_timer_v1` (one of each per surface at most,
    /// and Mesa's Vulkan WSI makes its own in FIFO mode).
    public init(
        connection: WaylandConnection, title: String, appID: String,
        width: Int32, height: Int32, fullscreen: Bool = false,
        fullscreenOutput: WaylandOutput? = nil, committedByProgram: Bool = false
    ) throws(WaylandError) {
        if let error = connection.error { throw error }
        guard let compositor = connection.compositor, let wmBase = connection.wmBase else {
            throw .missingGlobals(WaylandGlobals.required)
        }
        if let fullscreenOutput, !connection.outputs.contains(where: { $0 === fullscreenOutput }) {
            throw connection.unknownOutput(fullscreenOutput.label + " (an output of another connection, or one removed)")
        }
        self.connection = connection
        self.width = width
        self.height = height
        windowedWidth = width
        windowedHeight = height
        surface = wl_compositor_create_surface(compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(wmBase, surface)
        toplevel = xdg_surface_get_toplevel(xdgSurface)
        self.committedByProgram = committedByProgram
        if !committedByProgram {
            if let manager = connection.commitTimingManager { commitTimer = wp_commit_timing_manager_v1_get_timer(manager, surface) }
            if let manager = connection.fifoManager { fifo = wp_fifo_manager_v1_get_fifo(manager, surface) }
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        followFractionalScale(me)
        cwl_surface_add_listener(surface, WaylandWindow.surfaceListener, me)
        xdg_surface_add_listener(xdgSurface, WaylandWindow.xdgSurfaceListener, me)
        xdg_toplevel_add_listener(toplevel, WaylandWindow.toplevelListener, me)
        xdg_toplevel_set_title(toplevel, title)
        xdg_toplevel_set_app_id(toplevel, appID)
        if fullscreen { xdg_toplevel_set_fullscreen(toplevel, fullscreenOutput?.proxy) }
        wl_surface_commit(surface)
        var roundtrips = 0
        while !configured && roundtrips < 5 {
            switch connection.roundtrip() {
            case .done: break
            case .failed:
                connection.checkForFailure()
                destroy()
                throw connection.error ?? .connectionLost(errno: nil)
            case .timedOut:
                destroy()
                throw connection.notResponding
            }
            roundtrips += 1
        }
        guard configured else {
            destroy()
            throw .notConfigured
        }
        startDecidingScale()
    }

    isolated deinit {
        destroy()
    }

    /// The `wl_surface *`, for `wl_egl_window_create` and the like.
    public var surfaceHandle: OpaquePointer { surface }

    /// Asks the compositor to minimise the window (it may stop sending frame callbacks).
    public func minimize() {
        guard !destroyed else { return }
        xdg_toplevel_set_minimized(toplevel)
        connection.flush()
    }

    /// Asks the compositor to make the window fullscreen (on the output it chooses) or to leave
    /// fullscreen. Nothing changes until the compositor configures the window: ``onResize`` then
    /// reports the new size (leaving fullscreen, a 0×0 configure goes back to the windowed size).
    /// The compositor may refuse.
    public func setFullscreen(_ on: Bool) {
        guard !destroyed else { return }
        if on {
            xdg_toplevel_set_fullscreen(toplevel, nil)
        } else {
            xdg_toplevel_unset_fullscreen(toplevel)
        }
        connection.flush()
    }

    /// Asks the compositor to make the window fullscreen on `output` (one of the connection's
    /// ``WaylandConnection/outputs``), moving it there: the surface then enters that output, and a
    /// frame source learns its refresh period and phase afresh. As with ``setFullscreen(_:)`` the
    /// compositor decides (``onResize`` reports the size it configures). Throws
    /// ``WaylandError/unknownOutput(_:available:)`` when `output` is not one of the connection's outputs.
    public func setFullscreen(on output: WaylandOutput) throws(WaylandError) {
        guard connection.outputs.contains(where: { $0 === output }) else {
            throw connection.unknownOutput(output.label + " (an output of another connection, or one removed)")
        }
        guard !destroyed else { return }
        xdg_toplevel_set_fullscreen(toplevel, output.proxy)
        connection.flush()
    }

    /// The subsurface that releases a timed commit mutter holds (nil: not made).
    private(set) var heldCommitReleaser: HeldCommitReleaser?

    /// Makes ``heldCommitReleaser`` (once; nothing when the compositor lacks what it needs). Made
    /// before the window's first frame, the subsurface is mapped with it.
    func makeHeldCommitReleaser() {
        guard heldCommitReleaser == nil, !destroyed else { return }
        heldCommitReleaser = HeldCommitReleaser(connection: connection, parent: surface)
    }

    /// Destroys the window's objects. Idempotent.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        heldCommitReleaser?.destroy()
        if let commitTimer { wp_commit_timer_v1_destroy(commitTimer) }
        if let fifo { wp_fifo_v1_destroy(fifo) }
        destroyScaleObjects()
        commitTimer = nil
        fifo = nil
        xdg_toplevel_destroy(toplevel)
        xdg_surface_destroy(xdgSurface)
        wl_surface_destroy(surface)
        connection.flush()
        for (output, id) in modeHandlerIDs { output.removeModeChangeHandler(id) }
        modeHandlerIDs.removeAll()
    }

    /// Runs `handler` when ``isSuspended`` changes (frame sources: no requests while suspended).
    @discardableResult
    func addSuspendedHandler(_ handler: @escaping (Bool) -> Void) -> Int {
        suspendedHandlers.add(handler)
    }

    func removeSuspendedHandler(_ id: Int) { suspendedHandlers.remove(id) }

    /// How many handlers are registered (suspended, outputs changed): for tests.
    var handlerCounts: (suspended: Int, outputs: Int) { (suspendedHandlers.entries.count, outputHandlers.entries.count) }

    /// Runs `handler` when the surface enters or leaves an output, or the mode of one of its
    /// outputs changes (frame sources re-learn the rhythm).
    @discardableResult
    func addOutputsChangedHandler(_ handler: @escaping () -> Void) -> Int {
        outputHandlers.add(handler)
    }

    func removeOutputsChangedHandler(_ id: Int) { outputHandlers.remove(id) }

    func outputsChanged() {
        for entry in outputHandlers.entries { entry.handler() }
        updateScale()
    }

    // MARK: Events

    private func configure(serial: UInt32) {
        xdg_surface_ack_configure(xdgSurface, serial)
        configured = true
        isFullscreen = pendingFullscreen
        isMaximized = pendingMaximized
        if pendingSuspended != isSuspended {
            isSuspended = pendingSuspended
            for entry in suspendedHandlers.entries { entry.handler(isSuspended) }
            onSuspendedChange?(isSuspended)
        }
        // A zero width or height leaves that dimension to the client: the windowed size (not the
        // current one, which after fullscreen or maximized is the compositor's, not ours).
        let newWidth = pendingWidth > 0 ? pendingWidth : windowedWidth
        let newHeight = pendingHeight > 0 ? pendingHeight : windowedHeight
        if !isFullscreen && !isMaximized {
            windowedWidth = newWidth
            windowedHeight = newHeight
        }
        if newWidth != width || newHeight != height {
            width = newWidth
            height = newHeight
            onResize?(width, height)
        }
    }

    private func modeChanged(of output: WaylandOutput) {
        guard !destroyed, outputs.contains(where: { $0 === output }) else { return }
        outputsChanged()
    }

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandWindow {
        Unmanaged<WaylandWindow>.fromOpaque(data!).takeUnretainedValue()
    }

    private nonisolated(unsafe) static let surfaceListener = WaylandListeners.make(
        cwl_surface_listener(
            enter: { data, _, output in
                nonisolated(unsafe) let output = output
                let window = WaylandWindow.from(data)
                MainActor.assumeIsolated {
                    if let found = window.connection.output(for: output), !window.outputs.contains(where: { $0 === found }) {
                        window.outputs.append(found)
                        if window.watchedOutputs.insert(ObjectIdentifier(found)).inserted {
                            let id = found.addModeChangeHandler { [weak window, weak found] in
                                if let found { window?.modeChanged(of: found) }
                            }
                            window.modeHandlerIDs.append((found, id))
                            window.followOutputScale(found)
                        }
                        window.outputsChanged()
                    }
                }
            },
            leave: { data, _, output in
                nonisolated(unsafe) let output = output
                let window = WaylandWindow.from(data)
                MainActor.assumeIsolated {
                    let before = window.outputs.count
                    window.outputs.removeAll { $0.proxy == output }
                    if window.outputs.count != before { window.outputsChanged() }
                }
            },
            preferred_buffer_scale: { data, _, factor in
                let window = WaylandWindow.from(data)
                MainActor.assumeIsolated {
                    window.preferredBufferScale = factor
                    window.updateScale()
                }
            },
            // The buffer stays untransformed: the compositor transforms it as for any client.
            preferred_buffer_transform: { _, _, _ in }
        ))

    private nonisolated(unsafe) static let xdgSurfaceListener = WaylandListeners.make(
        xdg_surface_listener(
            configure: { data, _, serial in
                let object = WaylandWindow.from(data)
                MainActor.assumeIsolated { object.configure(serial: serial) }
            }
        ))

    private nonisolated(unsafe) static let toplevelListener = WaylandListeners.make(
        xdg_toplevel_listener(
            configure: { data, _, width, height, states in
                var fullscreen = false, maximized = false, suspended = false
                if let states, let bytes = states.pointee.data, states.pointee.size > 0 {
                    let count = states.pointee.size / MemoryLayout<UInt32>.stride
                    for state in UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt32.self), count: count) {
                        if state == XDG_TOPLEVEL_STATE_FULLSCREEN.rawValue { fullscreen = true }
                        if state == XDG_TOPLEVEL_STATE_MAXIMIZED.rawValue { maximized = true }
                        if state == XDG_TOPLEVEL_STATE_SUSPENDED.rawValue { suspended = true }
                    }
                }
                let window = WaylandWindow.from(data)
                MainActor.assumeIsolated {
                    window.pendingWidth = width
                    window.pendingHeight = height
                    window.pendingFullscreen = fullscreen
                    window.pendingMaximized = maximized
                    window.pendingSuspended = suspended
                }
            },
            close: { data, _ in
                let window = WaylandWindow.from(data)
                MainActor.assumeIsolated {
                    window.closeRequested = true
                    window.onClose?()
                }
            },
            configure_bounds: { _, _, _, _ in },
            wm_capabilities: { _, _, _ in }
        ))
}
