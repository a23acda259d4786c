import DisplayLinkCore
import Dispatch
import Glibc
import KernelCall
import SystemPackage
internal import CWayland
internal import CWaylandClient

// This file holds the connection's options, its state, connecting and tearing down. The rest
// lives in extensions, one job a file: binding globals and finding outputs (+Globals), round
// trips (+Roundtrip), reading and dispatching events (+EventLoop), and failure (+Failure); the
// listener tables are in WaylandListeners.swift.

/// A connection to a Wayland compositor: the globals it offers, and the event loop that reads
/// its socket on the main dispatch queue.
///
/// The loop is the standard `prepare_read` / `read_events` / `dispatch_pending` sequence run by a
/// read source on the display's fd (no polling thread, no busy wait), with flushes that wait for
/// the socket to become writable on `EAGAIN`. When the compositor goes away or kills the
/// connection, ``error`` is set, ``onError`` runs, and every later request is dropped.
@MainActor
public final class WaylandConnection {
    public struct Options: Sendable {
        /// Bind `wp_presentation` when offered (turn off to test the frame-callback fallback).
        public var bindPresentationTime = true
        /// Bind `wp_commit_timing_manager_v1` when offered: each frame's commit then asks not to
        /// be presented before its target (turn off to compare, or on a compositor that
        /// mishandles it).
        public var bindCommitTiming = true
        /// Bind `wp_fifo_manager_v1` when offered: each refresh's commit sets a FIFO barrier and
        /// waits for the previous one.
        public var bindFifo = true
        /// Bind `zwp_input_timestamps_manager_v1` when offered: input events then carry the
        /// compositor's precise timestamps rather than its milliseconds.
        public var bindInputTimestamps = true
        /// How long connecting (and opening a window) waits for each reply of the compositor
        /// before failing with ``WaylandError/notResponding(socket:seconds:)``: a compositor that
        /// accepted the connection but is stopped or hung would otherwise block the caller for
        /// ever (and with it the main queue, where signal handlers run). Default 30 s.
        public var replyTimeout: Nanoseconds = WaylandConnection.defaultReplyTimeout
        public init(
            bindPresentationTime: Bool = true, bindCommitTiming: Bool = true, bindFifo: Bool = true,
            bindInputTimestamps: Bool = true, replyTimeout: Nanoseconds = WaylandConnection.defaultReplyTimeout
        ) {
            self.bindPresentationTime = bindPresentationTime
            self.bindCommitTiming = bindCommitTiming
            self.bindFifo = bindFifo
            self.bindInputTimestamps = bindInputTimestamps
            self.replyTimeout = replyTimeout
        }
    }

    /// ``Options/replyTimeout``'s default: 30 s.
    public nonisolated static let defaultReplyTimeout = Nanoseconds(30_000_000_000)

    /// The socket name connected to (`WAYLAND_DISPLAY`, or `wayland-0`).
    public let socketName: String
    /// Every global the compositor advertised.
    public internal(set) var globals: [WaylandGlobal] = []
    /// The clock of `wp_presentation` times, once the compositor said (nil without it).
    public internal(set) var presentationClock: ClockDomain?
    /// Set once the connection failed; nothing works after that.
    public internal(set) var error: WaylandError?
    /// Called once, on the main actor, when the connection fails.
    public var onError: ((WaylandError) -> Void)?
    /// How many times the socket woke the loop (for tests: a paused link must cost none).
    public internal(set) var wakeupCount = 0
    /// The name of the compositor's process, from the socket's peer credentials (e.g. "weston").
    public private(set) var compositorName: String?

    let display: OpaquePointer
    let options: Options
    /// Whether the display is the program's (``init(borrowing:options:)``): it is never
    /// disconnected here, and only the library's own objects are made on it.
    public let isBorrowed: Bool
    /// A borrowed connection's event queue, and the display wrapper on it that every object of
    /// ours is made from, so that only our dispatch runs our listeners and the program's dispatch
    /// never runs them (nil: the display's default queue, on a connection of our own).
    let queue: OpaquePointer?
    /// What requests that make objects go to: the display itself, or its wrapper on ``queue``.
    let displayProxy: OpaquePointer

    // MARK: Bound globals (see +Globals)

    var registry: OpaquePointer?
    var compositor: OpaquePointer?
    var wmBase: OpaquePointer?
    var presentation: OpaquePointer?
    var commitTimingManager: OpaquePointer?
    var fifoManager: OpaquePointer?
    /// `wp_viewporter` and `wp_fractional_scale_manager_v1`, when offered (fractional scales).
    var viewporter: OpaquePointer?
    var fractionalScaleManager: OpaquePointer?
    var inputTimestampsManager: OpaquePointer?
    /// `wl_subcompositor` and `wl_shm` (version 1), for the 1×1 subsurface that releases a timed
    /// commit mutter holds (``HeldCommitReleaser``).
    var subcompositor: OpaquePointer?
    var shm: OpaquePointer?
    /// Whether ``bindGlobals()`` ran: outputs advertised later are bound as they come.
    var globalsBound = false
    /// The versions bound, by interface (for ``timingProtocols``).
    var boundVersions: [(String, UInt32)] = []
    /// The compositor's outputs (`wl_output`), in the order it advertised them; outputs it
    /// removes leave the list (e.g. for ``WaylandWindow/setFullscreen(on:)``).
    public internal(set) var outputs: [WaylandOutput] = []
    /// The first seat's input (pointer, keyboard, touch), when the compositor has a seat.
    public internal(set) var seatInput: WaylandSeatInput?
    /// The version of `xdg_wm_base` bound (6 and above: the `suspended` state).
    public internal(set) var wmBaseVersion: UInt32 = 0

    // MARK: The event loop (see +EventLoop, +Failure)

    var readSource: DispatchSourceRead?
    var writeSource: DispatchSourceWrite?
    /// Whether the dispatch read source is suspended because a run loop on this thread reads the
    /// socket itself (``beginDirectReading()``).
    var readSourceSuspended = false
    /// Whether ``prepareToWait()`` prepared a read that ``finishWait(readable:)`` has not ended.
    var isPreparedToRead = false
    var afterDispatchHandlers: [AfterDispatchHandler] = []
    var nextAfterDispatchID = 0
    var runningAfterDispatchHandlers = false
    var afterDispatchHandlersAgain = false
    var errorHandlers = HandlerList<(WaylandError) -> Void>()
    /// Whether ``teardown()`` ran: once only. A connection that fails after `display` is set is
    /// torn down where it fails and then released by the throw, which runs deinit.
    private(set) var tornDown = false
    /// How deep the connection is in `wl_display_dispatch_queue_pending` (a listener's handler may
    /// close the connection: the queue being dispatched must outlive the dispatch), and whether a
    /// close waits for the outermost dispatch to return.
    var dispatchDepth = 0
    var teardownDeferred = false
    /// `wl_display.sync` requests whose answer has not come, by their request object: torn down
    /// with the connection (an answer queued on a destroyed queue is libwayland's abort).
    var pendingSyncs: [ObjectIdentifier: (callback: OpaquePointer, box: Unmanaged<SyncRequest>)] = [:]

    /// Connects to the compositor named by `socket` (default: `WAYLAND_SOCKET`/`WAYLAND_DISPLAY`),
    /// binds its globals and starts reading events on the main queue.
    public init(socket: String? = nil, options: Options = Options()) throws(WaylandError) {
        self.options = options
        let name = socket ?? getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
        socketName = name
        errno = 0  // libwayland leaves it unset for some failures
        let display: OpaquePointer
        do { display = try KernelCall.pointer { wl_display_connect(socket) } } catch {
            throw .cannotConnect(socket: name, errno: error.rawValue == 0 ? nil : error)
        }
        self.display = display
        displayProxy = display
        queue = nil
        isBorrowed = false
        try start()
    }

    /// A connection on a display the program opened (`wl_display *`, e.g. SDL's or GLFW's): the
    /// library binds its own `wp_presentation`, outputs and (when offered) the commit-timing and
    /// FIFO managers on an event queue of its own, through a display wrapper, and reads the socket
    /// only with `wl_display_prepare_read_queue` and `wl_display_read_events`, so that it neither
    /// takes the program's events nor blocks its dispatch. No windowing or input globals are bound
    /// (the program has its own), and the display is never disconnected here: the program closes
    /// it, after this connection is gone. The first round trips wait on the calling thread, at
    /// most ``Options/replyTimeout`` each.
    public init(borrowing display: OpaquePointer, options: Options = Options()) throws(WaylandError) {
        self.options = options
        self.display = display
        isBorrowed = true
        socketName = "the program's display"
        guard wl_display_get_error(display) == 0 else {
            let code = wl_display_get_error(display)
            throw .connectionLost(errno: Errno(rawValue: code))
        }
        let queue = wl_display_create_queue(display)
        guard let queue, let wrapper = wl_proxy_create_wrapper(UnsafeMutableRawPointer(display)) else {
            if let queue { wl_event_queue_destroy(queue) }
            throw .connectionLost(errno: nil)
        }
        wl_proxy_set_queue(OpaquePointer(wrapper), queue)
        self.queue = queue
        displayProxy = OpaquePointer(wrapper)
        try start()
    }

    /// Binds the globals, waits for their first events and starts reading.
    private func start() throws(WaylandError) {
        compositorName = WaylandConnection.peerProcessName(fd: wl_display_get_fd(display))
        registry = wl_display_get_registry(displayProxy)
        wl_registry_add_listener(registry, WaylandListeners.registry, Unmanaged.passUnretained(self).toOpaque())
        try roundtripOrTearDown()
        let missing = isBorrowed ? [] : WaylandGlobals.missing(from: globals)
        guard missing.isEmpty else {
            teardown()
            throw .missingGlobals(missing)
        }
        bindGlobals()
        // A second roundtrip delivers the events of the objects just bound (clock id, outputs).
        try roundtripOrTearDown()
        startEventLoop()
    }

    isolated deinit {
        teardown()
    }

    /// A ``roundtrip()`` while connecting: if it fails or times out, the connection is torn down
    /// and the error thrown.
    private func roundtripOrTearDown() throws(WaylandError) {
        switch roundtrip() {
        case .done:
            return
        case .failed:
            let failure = readFailure()
            teardown()
            throw failure
        case .timedOut:
            teardown()
            throw notResponding
        }
    }

    /// The `wl_display *`, for EGL, or for a program's own objects on this connection.
    public var displayHandle: OpaquePointer { display }

    // MARK: What was bound

    /// Whether `wp_presentation` is bound.
    public var hasPresentationTime: Bool { presentation != nil }
    /// Whether `wp_commit_timing_manager_v1` is bound.
    public var hasCommitTiming: Bool { commitTimingManager != nil }
    /// Whether the compositor is mutter: its process (or GNOME Shell's, which runs mutter), or,
    /// when the peer is not the compositor itself (a proxy, a sandbox's), its `gtk_shell1` global,
    /// which only mutter offers among the compositors here.
    public var isMutter: Bool {
        compositorName == "mutter" || compositorName == "gnome-shell" || globals.contains { $0.interface == "gtk_shell1" }
    }

    /// The compositor for reports: ``compositorName`` when that process is a compositor; through a
    /// proxy (waypipe, a sandbox's, `WaylandFaultProxy`), the compositor its globals name and the
    /// proxy, e.g. `mutter (through waypipe)`.
    public var compositorDescription: String {
        CompositorIdentity.describe(peer: compositorName, globals: globals.map(\.interface))
    }
    /// Whether `wp_fifo_manager_v1` is bound.
    public var hasFifo: Bool { fifoManager != nil }
    /// Whether `wp_fractional_scale_manager_v1` and `wp_viewporter` are both bound (fractional scales).
    public var hasFractionalScale: Bool { fractionalScaleManager != nil && viewporter != nil }

    /// The timing protocols in use, with the versions bound, e.g. `["wp_presentation 2",
    /// "wp_commit_timing_v1 1", "wp_fifo_v1 1", "xdg_wm_base 6"]` (`xdg_wm_base` listed from
    /// version 6, which has the `suspended` state).
    public var timingProtocols: [String] {
        var names: [String] = []
        for (interface, version) in boundVersions {
            switch interface {
            case "wp_presentation": names.append("wp_presentation \(version)")
            case "wp_commit_timing_manager_v1": names.append("wp_commit_timing_v1 \(version)")
            case "wp_fifo_manager_v1": names.append("wp_fifo_v1 \(version)")
            case "xdg_wm_base" where version >= 6: names.append("xdg_wm_base \(version)")
            default: break
            }
        }
        return names
    }

    // MARK: Teardown

    /// Tears the connection down now rather than at deinit: every object of the library's goes
    /// (a borrowed display stays open, its queue is destroyed), and every later request is
    /// dropped (``error`` is ``WaylandError/closed``; no error handler runs). For a program that
    /// disconnects its display right after letting go of the library. Idempotent.
    public func close() {
        if error == nil { error = .closed }
        guard dispatchDepth == 0 else {
            // Inside a listener of this connection: after the dispatch returns.
            teardownDeferred = true
            return
        }
        teardown()
    }

    private func teardown() {
        guard !tornDown else { return }
        tornDown = true
        if isPreparedToRead {
            isPreparedToRead = false
            wl_display_cancel_read(display)
        }
        for (_, pending) in pendingSyncs {
            wl_callback_destroy(pending.callback)
            pending.box.release()
        }
        pendingSyncs.removeAll()
        // The seat's devices (and their timestamp objects) before the manager they came from.
        seatInput?.destroy()
        seatInput = nil
        if let inputTimestampsManager { zwp_input_timestamps_manager_v1_destroy(inputTimestampsManager) }
        inputTimestampsManager = nil
        for output in outputs { output.destroy() }
        outputs.removeAll()
        if let presentation { wp_presentation_destroy(presentation) }
        if let commitTimingManager { wp_commit_timing_manager_v1_destroy(commitTimingManager) }
        if let fifoManager { wp_fifo_manager_v1_destroy(fifoManager) }
        commitTimingManager = nil; fifoManager = nil
        if let fractionalScaleManager { wp_fractional_scale_manager_v1_destroy(fractionalScaleManager) }
        if let viewporter { wp_viewporter_destroy(viewporter) }
        fractionalScaleManager = nil; viewporter = nil
        if let subcompositor { wl_subcompositor_destroy(subcompositor) }
        if let shm { wl_shm_destroy(shm) }
        subcompositor = nil; shm = nil
        if let wmBase { xdg_wm_base_destroy(wmBase) }
        if let compositor { wl_compositor_destroy(compositor) }
        if let registry { wl_registry_destroy(registry) }
        presentation = nil; wmBase = nil; compositor = nil; registry = nil
        writeSource?.cancel()
        writeSource = nil
        let display = self.display
        endDirectReading()  // a suspended source never runs its cancel handler
        if isBorrowed {
            // The program's display stays open: only what is ours goes, the queue last (nothing
            // of ours may be left on it), and the read source stops watching the program's socket.
            readSource?.cancel()
            readSource = nil
            wl_proxy_wrapper_destroy(UnsafeMutableRawPointer(displayProxy))
            if let queue { wl_event_queue_destroy(queue) }
            if wl_display_get_error(display) == 0 { _ = wl_display_flush(display) }
        } else if let readSource {
            // The fd belongs to the display: close it only once the read source has let go.
            nonisolated(unsafe) let display = display
            readSource.setCancelHandler { wl_display_disconnect(display) }
            readSource.cancel()
            self.readSource = nil
        } else {
            wl_display_disconnect(display)
        }
    }

    private static func peerProcessName(fd: Int32) -> String? {
        let pid = cwl_socket_peer_pid(fd)
        guard pid > 0, let file = fopen("/proc/\(pid)/comm", "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while bytes.count < 64 {
            let c = fgetc(file)
            if c == EOF || c == 10 { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Listener trampolines

    nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandConnection {
        Unmanaged<WaylandConnection>.fromOpaque(data!).takeUnretainedValue()
    }
}
