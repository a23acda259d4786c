import Dispatch
import DisplayLinkCore
import Logging
internal import WaylandBackend

/// The display link on a `wl_surface` the program owns: a window from SDL 3
/// (`SDL_PROP_WINDOW_WAYLAND_DISPLAY_POINTER`, `SDL_PROP_WINDOW_WAYLAND_SURFACE_POINTER`), GLFW
/// (`glfwGetWaylandDisplay`, `glfwGetWaylandWindow`), winit's raw handles, a toolkit's, or the
/// program's own.
///
/// ```swift
/// let paced = try ForeignWaylandSurface(display: wlDisplay, surface: wlSurface)
/// let link = DisplayLink(source: paced, target: game) { game, link in
///     game.update(to: link.targetTimestamp)
///     game.draw()
///     paced.willCommit()          // right before the call that commits the surface
///     SDL_GL_SwapWindow(window)   // or eglSwapBuffers, vkQueuePresentKHR, wl_surface_commit
/// }
/// ```
///
/// - The surface's role, buffers, commits and events stay the program's. The library binds its
///   own `wp_presentation` and outputs on an event queue of its own, requests frame callbacks
///   on a wrapper of the surface on that queue, and reads the display only with
///   `wl_display_prepare_read_queue` and `wl_display_read_events`: it neither takes the program's
///   events nor blocks its dispatch, whether the program dispatches from its toolkit's event pump,
///   a `poll` loop, or inside `eglSwapBuffers` or `vkQueuePresentKHR`.
/// - **The commit hook.** ``willCommit()`` goes right before each call that commits the surface:
///   the latest refresh's frame callback and presentation feedback are requested then, for that
///   commit. The surface is never committed by the library. A callback may draw and commit, or
///   leave it to the program's loop until the next vblank; a refresh without a commit is followed
///   by a tick at the next predicted vblank (estimated timestamps), so the link never stops. When
///   no commit came through the hook for ``missingCommitHookRefreshes`` refreshes
///   in a row, one warning says so (label `displaylink.foreign`).
/// - **Reading the display.** The library watches the display's socket on the main queue
///   (`dispatchMain()`, `DisplaySurface.runMainLoop()`). Events for the library that the
///   program's own reading took off the socket (its toolkit's event pump, or a thread of the
///   toolkit's: SDL 3 reads from a cursor thread) wait in the library's queue until
///   ``dispatchPending()``: call it after the toolkit's event pump. A loop of the program's own
///   waits through ``reader``, as the C library's `dl_dispatch` does, and then nothing waits.
/// - `wp_fifo_v1` and `wp_commit_timer_v1` allow one object per surface, and the program's stack
///   may hold them (Mesa's Vulkan WSI in FIFO mode): ``Options/usesFifo`` and
///   ``Options/usesCommitTiming`` hand them to the library only when the program says so.
/// - The outputs the surface is on come from the feedback (each presented frame names them): a
///   move to another output, or its mode changing, starts the rhythm afresh, as on the library's
///   own window. The `suspended` state is the program's to tell (``isSuspended``); until then a
///   compositor that stops calling back is a stall. The compositor going away invalidates the links
///   and sets ``error``.
/// - Main actor (main thread) only. Close it (or let it go) before the program destroys the
///   surface or disconnects the display.
@MainActor
public final class ForeignWaylandSurface: FrameSource {
    static let log = Logger(label: "displaylink.foreign")

    /// Refreshes in a row without a commit through ``willCommit()`` after which one warning (or
    /// ``onCommitHookMissing``) says the program may be missing the hook.
    public static var missingCommitHookRefreshes: Int { WaylandFrameSource.missingCommitHookRefreshes }

    public struct Options: Sendable {
        /// When callbacks start: at the frame event, or as late as the frame can still be committed.
        public var latency: LatencyPolicy = .throughput
        /// The program leaves the surface's `wp_fifo_v1` to the library (the protocol allows one):
        /// each compositor-paced commit then waits for the previous frame's presentation.
        public var usesFifo = false
        /// The program leaves the surface's `wp_commit_timer_v1` to the library: each commit then
        /// asks not to be shown before its target.
        public var usesCommitTiming = false
        /// No frame event for this long is a stall (the window hidden, the compositor not repainting).
        public var stallTimeout = Nanoseconds(500_000_000)
        /// While stalled, tick this often (timer fallback provenance); nil: wait without ticking.
        /// On by default on a program's surface (4 Hz): a commit announced by the hook that never
        /// came (a present that failed) looks like a hidden window, and the ticks keep a program
        /// that draws only in its callbacks going, without spinning.
        public var fallbackTickInterval: Nanoseconds? = Nanoseconds(250_000_000)
        /// How long the first round trips wait for the compositor before failing.
        public var replyTimeout = Nanoseconds(30_000_000_000)
        /// Bind `wp_presentation` (false: timestamps are estimates from frame callbacks; for tests).
        public var usesPresentationTime = true

        public init(
            latency: LatencyPolicy = .throughput, usesFifo: Bool = false, usesCommitTiming: Bool = false,
            stallTimeout: Nanoseconds = Nanoseconds(500_000_000), fallbackTickInterval: Nanoseconds? = Nanoseconds(250_000_000),
            replyTimeout: Nanoseconds = Nanoseconds(30_000_000_000), usesPresentationTime: Bool = true
        ) {
            self.latency = latency
            self.usesFifo = usesFifo
            self.usesCommitTiming = usesCommitTiming
            self.stallTimeout = stallTimeout
            self.fallbackTickInterval = fallbackTickInterval
            self.replyTimeout = replyTimeout
            self.usesPresentationTime = usesPresentationTime
        }
    }

    public let dispatcher: RefreshDispatcher
    public let options: Options
    /// The first failure (the compositor went away or killed the connection); nothing works after it.
    public private(set) var error: ForeignSourceError?
    /// Called once on the main actor when the connection fails; the links are invalidated.
    public var onError: ((ForeignSourceError) -> Void)?
    /// Called once, instead of the library's warning, when no commit came through ``willCommit()``
    /// for ``missingCommitHookRefreshes`` refreshes in a row.
    public var onCommitHookMissing: (() -> Void)? {
        didSet { installHookWarning() }
    }
    public private(set) var isClosed = false

    /// The borrowed connection (shared by every source on the display) and the frame source on
    /// it, until ``close()``, and this source's error handler with the connection.
    private var parts: (connection: WaylandConnection, source: WaylandFrameSource)?
    private var errorHandler = 0

    /// Attaches to `surface` (a `struct wl_surface *`) on `display` (its `struct wl_display *`).
    /// Throws ``ForeignSourceError/invalidHandle(_:)`` for a null pointer, and the display's
    /// failure when the compositor does not answer within ``Options/replyTimeout``.
    public init(display: UnsafeMutableRawPointer?, surface: UnsafeMutableRawPointer?, options: Options = Options())
        throws(ForeignSourceError)
    {
        guard let display else { throw .invalidHandle("the wl_display pointer is null") }
        guard let surface else { throw .invalidHandle("the wl_surface pointer is null") }
        self.options = options
        let connection: WaylandConnection, source: WaylandFrameSource
        do {
            connection = try BorrowedDisplays.connection(
                on: display, presentation: options.usesPresentationTime, replyTimeout: options.replyTimeout)
        } catch {
            throw .display(error.description)
        }
        do {
            source = try WaylandFrameSource(
                programSurface: OpaquePointer(surface), connection: connection, usesFifo: options.usesFifo,
                usesCommitTiming: options.usesCommitTiming,
                configuration: .init(
                    stallTimeout: options.stallTimeout, fallbackTickInterval: options.fallbackTickInterval,
                    allowsCommitTiming: options.usesCommitTiming, latency: options.latency))
        } catch {
            BorrowedDisplays.release(connection)
            throw .display(error.description)
        }
        dispatcher = source.dispatcher
        parts = (connection, source)
        errorHandler = connection.addErrorHandler { [weak self] failure in self?.failed(failure) }
        installHookWarning()
    }

    isolated deinit {
        close()
    }

    /// The commit hook: call it right before each call that commits the surface
    /// (`eglSwapBuffers`, `vkQueuePresentKHR`, `SDL_RenderPresent`, `SDL_GL_SwapWindow`, the
    /// program's own `wl_surface_commit`). See the type's notes.
    public func willCommit() {
        parts?.source.willCommit()
    }

    /// Whether the program's window is suspended (its xdg_toplevel's `suspended` state, or its
    /// toolkit's occluded one): set it as the program learns it. While suspended nothing is
    /// requested and no timer runs; the first callback after it has a zero delta.
    public var isSuspended: Bool = false {
        didSet {
            guard isSuspended != oldValue else { return }
            parts?.source.setProgramSurfaceSuspended(isSuspended)
        }
    }

    /// Dispatches the library's events that the program's own reading of the display took off
    /// the socket (its toolkit's event pump): call it after that pump, before the program waits.
    public func dispatchPending() {
        parts?.connection.dispatchPending()
    }

    /// The display's socket (the program's; -1 once closed). The library watches it on the main
    /// queue; a loop of the program's own may wait on it instead, through ``reader``, after
    /// ``beginDirectReading()``.
    public var fileDescriptor: Int32 { parts?.connection.fileDescriptor ?? -1 }

    /// Identifies the display's connection, which every source on the display shares: a loop
    /// waits once per display.
    public var displayIdentity: ObjectIdentifier? { parts.map { ObjectIdentifier($0.connection) } }

    /// The display's reader (shared by every source on the display): a loop of the program's
    /// waits with its ``DisplayReader/prepareToWait()`` and ``DisplayReader/finishWait(readable:)``,
    /// so that no other reader of the display (a toolkit's thread: SDL 3 reads from a cursor
    /// thread) takes the library's events off the socket while the loop sleeps. It outlives this
    /// source's ``close()``, so a wait prepared through it is always finished, whatever the
    /// callbacks close meanwhile. Nil once closed.
    public var reader: DisplayReader? { parts.map { DisplayReader(connection: $0.connection) } }

    /// From here on a loop of the program's reads the display (``reader``) and the main queue no
    /// longer watches it, for every source on the display.
    public func beginDirectReading() { parts?.connection.beginDirectReading() }

    /// The timing protocols in use (e.g. `wp_presentation 2`).
    public var timingProtocols: [String] { parts?.source.timingProtocolsInUse ?? [] }
    /// The compositor's process name, from the socket's peer.
    public var compositorName: String? { parts?.connection.compositorName }
    /// Refreshes in a row that ended without a commit through ``willCommit()``.
    public var uncommittedRefreshes: Int { parts?.source.uncommittedRefreshes ?? 0 }
    /// Times the rhythm was learned afresh because the surface's output (named by the feedback)
    /// or that output's mode changed.
    public var outputChangeCount: Int { parts?.source.outputChangeCount ?? 0 }
    /// `wl_surface.frame` requests sent with the program's commits.
    public var frameRequestCount: Int { parts?.source.frameRequestCount ?? 0 }
    /// What the source has learned about presentation times.
    public var timeline: PresentationTimeline { parts?.source.timeline ?? PresentationTimeline() }

    /// Invalidates the links and lets go of the library's objects on the display (the surface and
    /// the display stay the program's). Idempotent; also on deinit.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        dispatcher.invalidateAll()
        guard let (connection, source) = parts else { return }
        parts = nil
        // Now, so that the program may destroy the surface or disconnect the display at once:
        // the frame source's requests and objects first, then the connection (its globals, its
        // queue). The objects themselves go at the next turn of the main queue, in case this
        // runs inside one of their callbacks.
        connection.removeErrorHandler(errorHandler)
        source.close()
        BorrowedDisplays.release(connection)
        let held = (connection, source)
        DispatchQueue.main.async { withExtendedLifetime(held) {} }
    }

    private func failed(_ failure: WaylandError) {
        guard error == nil else { return }
        let failure = ForeignSourceError.display(failure.description)
        error = failure
        onError?(failure)
    }

    private func installHookWarning() {
        let custom = onCommitHookMissing
        parts?.source.onCommitHookMissing = {
            if let custom {
                custom()
            } else {
                ForeignWaylandSurface.log.warning(
                    """
                    no frame was committed through ForeignWaylandSurface.willCommit() in \
                    \(ForeignWaylandSurface.missingCommitHookRefreshes) refreshes: the links tick on the predicted vblanks \
                    (estimated timestamps). If the program draws, call willCommit() right before each call that commits \
                    the surface (eglSwapBuffers, SDL_RenderPresent, vkQueuePresentKHR, wl_surface_commit)
                    """)
            }
        }
    }
}

/// What a foreign or fed source can fail with, worded so a person can act on it.
public enum ForeignSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A handle the program passed is null or not what it should be.
    case invalidHandle(String)
    /// The display failed: the compositor went away, killed the connection, or did not answer.
    case display(String)

    public var description: String {
        switch self {
        case .invalidHandle(let why): "invalid handle: \(why)"
        case .display(let message): message
        }
    }
}

/// A program display's reading, for a loop of the program's that waits on it (the C library's
/// `dl_dispatch`): ``prepareToWait()`` before the wait, ``finishWait(readable:)`` after it, on the
/// main thread, with nothing between them that may read the display.
@MainActor
public struct DisplayReader {
    let connection: WaylandConnection

    /// The display's socket.
    public var fileDescriptor: Int32 { connection.fileDescriptor }
    /// Identifies the display (every source on it shares one reader).
    public var identity: ObjectIdentifier { ObjectIdentifier(connection) }
    /// Dispatches the library's queued events and prepares to read; false once the display
    /// failed or its last source closed (nothing prepared then).
    public func prepareToWait() -> Bool { connection.prepareToWait() }
    /// Reads the socket when the wait found it `readable` (else gives the read up) and dispatches.
    public func finishWait(readable: Bool) { connection.finishWait(readable: readable) }
}
