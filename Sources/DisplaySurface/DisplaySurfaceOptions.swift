import DisplayLinkCore
import DRMBackend
import ConsoleSeat
import OffscreenBackend
import SurfaceBackend

extension DisplaySurface {
    /// The backend a surface is open on.
    public enum Backend: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// An xdg toplevel window on a Wayland compositor.
        case wayland
        /// A DRM/KMS output (a console without a compositor).
        case drm
        /// A pbuffer on Mesa's surfaceless EGL platform, refreshed on virtual time (no display).
        case offscreen

        public var description: String {
            switch self {
            case .wayland: "Wayland"
            case .drm: "DRM/KMS"
            case .offscreen: "offscreen"
            }
        }
    }

    /// Which backend to open.
    public enum BackendChoice: String, Sendable, Hashable, CaseIterable {
        /// Wayland when a compositor is reachable, else DRM/KMS.
        case auto
        case wayland
        case drm
        /// Offscreen on virtual time (never chosen by `.auto`); see ``Options/offscreen``.
        case offscreen
    }

    /// A DRM/KMS mode: a size, and optionally an exact refresh rate (a listed mode of that size
    /// is retimed to it when the connector does not list one); parsed from `WxH` or `WxH@Hz`.
    public typealias ModeRequest = DisplayLinkCore.ModeRequest

    /// The KMS API on DRM/KMS: atomic first with legacy as the fallback, or one of them (the
    /// DRM backend's own type: one definition, no conversion).
    public typealias KMSAPI = DRMBackend.KMSAPI

    /// How the DRM/KMS device is reached: through a seat manager (seatd, systemd-logind), which
    /// lets an ordinary user become DRM master and follows VT switches, or directly (the seat
    /// session's own type).
    public typealias SeatAccess = SeatSession.Options.Manager

    /// What a program's own graphics API draws into (``Options/graphics`` `.external`; the
    /// backends' own type).
    public typealias NativeWindow = SurfaceBackend.NativeWindow

    /// How the offscreen backend runs: its refresh rate on virtual time and the time of its first
    /// refresh (the offscreen backend's own type).
    public typealias OffscreenOptions = OffscreenDisplay.Options

    /// What draws into the surface.
    public enum Graphics: String, Sendable, Hashable, CaseIterable {
        /// The surface's own GLES context (EGL): ``DisplaySurface/beginFrame()`` and
        /// ``DisplaySurface/present(damage:)`` draw and show frames, with `GLESRenderer` or the
        /// program's own GL.
        case gles
        /// No EGL context: the program draws and presents with its own API (a Vulkan swapchain on
        /// ``DisplaySurface/nativeWindow``), calling ``DisplaySurface/willCommit(bufferWidth:bufferHeight:)`` right before
        /// each present. Wayland only: on DRM/KMS and offscreen the open fails with
        /// ``DisplaySurfaceError/externalGraphicsUnsupported(_:reason:)``.
        case external
    }

    /// How to open a surface.
    public struct Options: Sendable {
        /// The window title (Wayland).
        public var title: String
        /// The application id (Wayland: compositors group windows and pick icons by it).
        public var appID: String
        /// The window size asked for, in points (Wayland's surface-local units; the compositor may
        /// configure another, and at scale 2 the buffers have twice as many pixels each way:
        /// ``DisplaySurface/pointSize`` and ``DisplaySurface/pixelSize``), or the offscreen
        /// pbuffer's size in points at ``scale``. On DRM/KMS the size is the mode's, in pixels
        /// (see ``mode``).
        public var width: Int32
        public var height: Int32
        /// Which backend to open; `.auto` tries Wayland, then DRM/KMS.
        public var backend: BackendChoice
        /// The DRM device, e.g. `/dev/dri/card0` (nil: the first card with a connected display).
        public var devicePath: String?
        /// The DRM/KMS mode (nil: the connector's preferred mode).
        public var mode: ModeRequest?
        /// The Wayland socket: a name in `XDG_RUNTIME_DIR` or an absolute path (nil:
        /// `WAYLAND_DISPLAY`, else `wayland-0`).
        public var waylandSocket: String?
        /// On DRM/KMS, read keys and report them through ``DisplaySurface/onKey``: from the
        /// controlling terminal (put in raw mode while the surface is open), or without one (a
        /// systemd unit) from the console's keyboards, pointers and touchscreens through the seat
        /// (libinput, which needs udev's database entry for each device), whose input also goes
        /// to ``DisplaySurface/onInput``. When neither can be read, the surface opens all the same
        /// and logs one warning (`displaylink.surface`) saying what was found for each device;
        /// `false` reads no input and logs nothing.
        public var readsConsoleKeys: Bool
        /// Open fullscreen (Wayland: asked of the compositor before the window is first committed,
        /// so the first frame can already have the output's size; ``width``/``height`` remain the
        /// size to go back to on ``DisplaySurface/setFullscreen(_:)`` `false`). On DRM/KMS the
        /// surface is always the whole output, so this changes nothing there.
        public var fullscreen: Bool
        /// On Wayland, the output to be fullscreen on (with ``fullscreen``, and on
        /// ``DisplaySurface/setFullscreen(_:)`` `true`), by its `wl_output` name (e.g. `HDMI-A-1`;
        /// a kiosk on one of several screens). nil: the compositor chooses. A name the compositor
        /// does not have fails the open, naming the outputs it has (names need `wl_output` version
        /// 4: weston 10's outputs have none, so no name selects them). DRM/KMS ignores it
        /// (``devicePath`` and the first connected connector choose the output there).
        public var waylandOutput: String?
        /// The KMS API on DRM/KMS (`.automatic`: atomic when the driver has it, else legacy).
        public var kmsAPI: KMSAPI = .automatic
        /// When callbacks start: at the refresh (`.throughput`, the default), or as late as each
        /// frame's deadline less the learned render time allows (`.lowLatency`): on Wayland, and
        /// on DRM/KMS with vblank events (with timer pacing and offscreen, callbacks start at the
        /// refresh).
        public var latency: LatencyPolicy = .throughput
        /// On DRM/KMS: how the device is opened and master obtained (``SeatAccess``).
        public var seatAccess: SeatAccess = .automatic
        /// On Wayland, give frames' commits their target time when the compositor offers
        /// `wp_commit_timing_manager_v1` (true, the default), so no frame is shown before the
        /// time it was computed for, and with a preferred rate below the refresh the wake-ups no
        /// link uses are not made. Commits are timed only while the presentation feedback on the
        /// window's output carries `VSYNC` (see ``waylandCommitTimingWithoutVsync``). If the
        /// compositor holds a timed commit anyway (no presentation and no frame callback three
        /// periods past its target), the surface stops timed commits on that output for the rest
        /// of the run, releases the held frame and logs one warning (the environment's
        /// `commit_timing` says `stopped: a timed commit was held`). False: present as soon as
        /// possible, as without the protocol. (Timed commits with no fallback, for measuring a
        /// compositor: `WaylandFrameSource.Configuration.fallsBackFromHeldCommits`.)
        public var waylandCommitTiming = true
        /// On Wayland, time commits even where the presentation feedback lacks `VSYNC` (false by
        /// default: mutter 48 to 50 may hold a timed commit for good on such an output, as on
        /// their virtual monitors; weston 16's headless backend applies them). The held-commit
        /// watchdog still stops them on an output where one is held.
        /// `WaylandFrameSource.Configuration.requiresVsyncForTimedCommits`.
        public var waylandCommitTimingWithoutVsync = false
        /// On Wayland, order frames with FIFO barriers when the compositor offers
        /// `wp_fifo_manager_v1` (true, the default): each frame paced by the compositor waits until
        /// the previous one was shown, so no frame replaces another unseen. False: frames replace
        /// unapplied ones, as without the protocol.
        public var waylandFifo = true
        /// On Wayland, how long opening the surface waits for each reply of the compositor before
        /// failing with `WaylandError.notResponding` (a compositor that accepted the connection
        /// but is stopped or hung would otherwise block the caller, and its signal handling, for
        /// ever). Default 30 s.
        public var waylandReplyTimeout = Nanoseconds(30_000_000_000)
        /// Offscreen (``BackendChoice/offscreen``): the refresh rate on virtual time (default
        /// `.hertz(60)`; exact, e.g. `.hertz(60_000, per: 1001)` or `.period(Nanoseconds(20_000_000))`)
        /// and the first refresh's timestamp (default 0). Refresh `n` is at start + `n` periods,
        /// exactly; the size is ``width``×``height``.
        public var offscreen = OffscreenOptions()
        /// Pixels per point, for programs that lay out in points (``DisplaySurface/pointSize``).
        /// nil (the default): the display's own. On Wayland the compositor's (its fractional
        /// scale with a viewporter, else the largest `wl_output.scale` of the outputs the window
        /// is on); this option does not override it. On DRM/KMS set it to override the scale the
        /// connector's physical size gives (≥ 192 DPI: 2; an unknown size: 1). Offscreen the
        /// scale reported (nil: 1), the pbuffer then being ``width``×``height`` points at it.
        /// From above 0 up to 8; another value fails the open with ``DisplaySurfaceError/invalidScale(_:)``.
        public var scale: Double?
        /// What draws into the surface: its own GLES context (`.gles`, the default), or the
        /// program's own graphics API, e.g. Vulkan (`.external`, Wayland only).
        public var graphics: Graphics = .gles

        public init(
            title: String = "DisplayLink", appID: String = "org.displaylink.app",
            width: Int32 = 640, height: Int32 = 480, backend: BackendChoice = .auto,
            devicePath: String? = nil, mode: ModeRequest? = nil, waylandSocket: String? = nil,
            readsConsoleKeys: Bool = true, fullscreen: Bool = false
        ) {
            self.title = title
            self.appID = appID
            self.width = width
            self.height = height
            self.backend = backend
            self.devicePath = devicePath
            self.mode = mode
            self.waylandSocket = waylandSocket
            self.readsConsoleKeys = readsConsoleKeys
            self.fullscreen = fullscreen
        }
    }
}
