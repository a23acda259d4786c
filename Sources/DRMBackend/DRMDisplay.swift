import Dispatch
import DisplayLinkCore
import EGLGraphics
internal import FrameSchedulers
import Glibc
import Logging
import SystemPackage
import ConsoleSeat
internal import CDRM

/// A DRM/KMS display as a frame source: mode set, GBM surface with EGL, page flips with
/// `DRM_MODE_PAGE_FLIP_EVENT`, and the flip event's vblank time as the truth.
///
/// - KMS API (``Options/kmsAPI``): atomic first (`AtomicKMS`: the first frame's mode set
///   validated by a `TEST_ONLY` commit, then one `ALLOW_MODESET` commit; a `NONBLOCK |
///   PAGE_FLIP_EVENT` commit per presented frame), legacy (`drmModeSetCrtc`, then one
///   `drmModePageFlip` per frame) for drivers without atomic or when asked.
/// - Pacing (``pacing``): by the kernel's vblank events, every decision made by
///   `KMSFrameScheduler` (frames in flight, held frames, lateness, targets, restarts, idle ticks
///   queued with `drmCrtcQueueSequence` when nothing was drawn); or, on drivers without vblank
///   events (``DRMQuirks/noVblankEvents``), by a `CLOCK_MONOTONIC` timer at the mode's exact
///   period, decided by `KMSTimerPacer`, with `timer-fallback` provenance; a frame is flipped
///   when the timer fires for its target (such drivers show a flip at once), not when drawn.
/// - Start: when the CRTC is already running (a console), frame 0 is its current vblank.
/// - `timestamp` is the vblank time (`CLOCK_MONOTONIC`, required: `DRM_CAP_TIMESTAMP_MONOTONIC`),
///   `sequence` the vblank counter (32-bit flip sequences extended across wraps), `duration` the
///   exact period from the mode timings, `targetTimestamp` one or two periods after `timestamp`
///   (frames in flight) plus the lateness learned from recent frames, never before the previous
///   callback's target (held at it when the kernel stamps a vblank off the grid).
/// - ``shutDown()`` (also on deinit) restores the CRTC that was there before and drops master.
/// - Logs (label `displaylink.drm`, all at `.debug`: silent unless the program bootstraps a
///   handler at that level) only on state changes, never per frame in the steady state: the mode
///   chosen or retimed with its exact period, the quirks, frames in flight 1→2 and back, idle
///   ticks starting and ending, the CRTC restore.
///
/// This class coordinates: the device probe (`DRMDevice`), the output chosen
/// (`OutputSelection`), the CRTC's kernel commands (`CRTCControl`), the scan-out buffers, the
/// pacing (`VblankPacing` or `TimerPacing`), the seat's pauses and the event reader.
@MainActor
public final class DRMDisplay: FrameSource {
    nonisolated static let log = Logger(label: "displaylink.drm")

    public struct Options: Sendable {
        public var devicePath: String?
        public var mode: ModeRequest?
        /// The KMS API: atomic first with legacy as the fallback (`.automatic`), or one of them.
        public var kmsAPI: KMSAPI
        /// How the device is opened and master obtained: through a seat manager (seatd,
        /// systemd-logind) when one runs, else directly. See `SeatSession`.
        public var session: SeatSession.Options
        /// When callbacks start: at the flip event (`.throughput`), or as late as each frame's
        /// deadline less the learned render time allows (`.lowLatency`, vblank pacing only).
        public var latency: LatencyPolicy
        public init(
            devicePath: String? = nil, mode: ModeRequest? = nil, kmsAPI: KMSAPI = .automatic,
            session: SeatSession.Options = .init(), latency: LatencyPolicy = .throughput
        ) {
            self.devicePath = devicePath
            self.mode = mode
            self.kmsAPI = kmsAPI
            self.session = session
            self.latency = latency
        }
    }

    public let dispatcher = RefreshDispatcher()
    public let devicePath: String
    public let connectorName: String
    /// The output's physical size in millimetres, as the connector reports it (from the EDID;
    /// 0×0 when unknown, e.g. vkms, bochs-display and projectors).
    public let physicalSize: (width: UInt32, height: UInt32)
    public let mode: DisplayMode
    public let context: EGLDisplayContext
    public let surface: EGLWindowSurface
    public let driverName: String
    /// What this driver does differently, and so this display (see ``DRMQuirks``): found when the
    /// device opened, and while frames run (vblank events missing, the atomic test refused).
    public var quirks: DRMQuirks {
        var found = deviceQuirks
        if crtc.fellBackToLegacy { found.insert(.legacyOnly) }
        if pacer.kind == .timer { found.insert(.noVblankEvents) }
        return found
    }
    private let deviceQuirks: DRMQuirks
    /// The KMS API in use: `.atomic` or `.legacy` (``Options/kmsAPI`` `.automatic` resolved; it
    /// becomes `.legacy` if the driver refuses the first frame's atomic test commit).
    public var kmsAPI: KMSAPI { crtc.api }
    /// How refreshes are paced: by vblank events, or by a timer at the mode's period on a driver
    /// without them (found at start, or when vblank events are refused or flips never move the
    /// vblank counter).
    public var pacing: KMSPacing { pacer.kind }
    /// How the kernel refused a vblank query or queued vblank event (EOPNOTSUPP: the driver has
    /// no vblank support), or nil while it never refused one.
    public internal(set) var vblankRefusal: Errno?
    /// What the primary plane scans out (from `IN_FORMATS`), when the driver lists its planes.
    public let planeFormats: PlaneFormats?
    /// When callbacks start (``Options/latency``; timer pacing always starts at the tick).
    public let latency: LatencyPolicy
    public private(set) var error: DRMError?
    public var onError: ((DRMError) -> Void)?
    /// The session the device was opened in (also for input devices: `SeatInput`).
    public let session: SeatSession
    /// Whether the session lets this display use the device now (false while another VT has it).
    public var isSessionActive: Bool { sessionActive }
    /// Called after the session was disabled (`false`: no callbacks until it comes back) and
    /// after it was enabled and the mode set again (`true`).
    public var onSessionChange: ((Bool) -> Void)?
    /// Whether each buffer is kept mapped for its lifetime (``DRMQuirks/softwareRendering``).
    public var keepsBuffersMapped: Bool { buffers.keepsBuffersMapped }

    public var width: Int32 { Int32(mode.width) }
    public var height: Int32 { Int32(mode.height) }
    /// The exact refresh period of the mode.
    public var refreshPeriod: Nanoseconds { mode.period }

    let device: SeatSession.Device
    let crtc: CRTCControl
    let buffers: ScanoutBuffers
    /// Set once at the end of init (the pacings hold this display), then only replaced.
    var pacer: (any RefreshPacing)!
    var diagnostics = KMSDiagnostics()
    private var events: DRMEventReader?
    var sessionActive = true
    /// Enabled again while a flip from before the pause was still pending: resume at its event.
    var resumeAwaitsFlip = false
    /// A start of refreshes is queued on the main queue (``requestStart()``).
    var startPending = false
    private var sessionObserver: Int?
    private(set) var shutDownDone = false
    /// Faults a test makes the kernel commit (``KMSFaultHooks``); none by default.
    package var faultHooks = KMSFaultHooks()

    /// Whether the display still runs: not failed, not shut down.
    var isRunning: Bool { error == nil && !shutDownDone }
    /// What flips and queued vblanks carry to identify this display in their events.
    var eventToken: UInt64 { UInt64(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())) }

    public init(options: Options = Options()) throws(DRMError) {
        let session = try DRMDisplay.openSession(options.session)
        var path = options.devicePath ?? ""
        if options.devicePath == nil { path = try DRMDevice.find(session: session) }
        let device = try DRMDisplay.openDevice(path, in: session)
        var cleanup = true
        defer { if cleanup { session.closeDevice(device) } }
        var probe = try DRMDevice.probe(fd: device.fd, path: path, kmsAPI: options.kmsAPI)
        let selection = try OutputSelection.choose(device: probe, request: options.mode)
        let crtc = try CRTCControl(device: probe, selection: selection, kmsAPI: options.kmsAPI)
        if probe.refusesVblankQueries(crtc: selection.crtcID) {
            probe.quirks.insert(.noVblankEvents)
            vblankRefusal = .notSupported
        }
        let buffers = try ScanoutBuffers(fd: device.fd, path: path, width: selection.mode.width, height: selection.mode.height)
        do {
            // Made in a function of its own: when it throws, what it made is gone (EGL) before
            // the GBM objects, and they before the descriptor (the defer above).
            (context, surface) = try DRMDisplay.makeEGL(buffers)
        } catch {
            buffers.destroy()
            throw .graphics(error.description)
        }
        if context.rendersInSoftware { probe.quirks.insert(.softwareRendering) }
        buffers.keepsBuffersMapped = context.rendersInSoftware
        cleanup = false
        (self.session, self.device, devicePath, driverName) = (session, device, path, probe.driverName)
        latency = options.latency
        (connectorName, mode, planeFormats) = (selection.connectorName, selection.mode, selection.plane?.formats)
        physicalSize = selection.physicalSize
        (self.crtc, self.buffers, deviceQuirks) = (crtc, buffers, probe.quirks.subtracting(.noVblankEvents))
        pacer =
            probe.quirks.contains(.noVblankEvents)
            ? TimerPacing(display: self, period: mode.period, modeSet: false)
            : VblankPacing(display: self, period: mode.period, latency: options.latency)
        DRMDisplay.log.debug(
            """
            \(driverName) on \(path): KMS API \(crtc.api) (asked: \(options.kmsAPI)); primary plane \
            \(selection.plane.map { "\($0.id): \($0.formats)" } ?? "not listed"); EGL driver \(context.driverName ?? "unknown"); \
            quirks: \(quirks.explained)
            """)
        events = DRMEventReader(fd: device.fd, crtcInVblankEvent: !quirks.contains(.noCRTCInVblankEvent), display: self)
        dispatcher.onDemandChange = { [weak self] wanted in self?.pacer.demandChanged(wanted) }
        sessionObserver = session.addObserver(
            disabled: { [weak self] in self?.sessionDisabled() },
            enabled: { [weak self] in self?.sessionEnabled() })
    }

    isolated deinit {
        shutDown()
    }

    private static func makeEGL(_ buffers: ScanoutBuffers) throws(EGLError) -> (EGLDisplayContext, EGLWindowSurface) {
        let context = try EGLDisplayContext(
            platform: .gbm(device: buffers.gbmDevice),
            nativeVisualID: Int32(bitPattern: ScanoutBuffers.xrgb8888))
        let surface = try EGLWindowSurface(context: context, nativeWindow: UnsafeMutableRawPointer(buffers.gbmSurface))
        do {
            try surface.configure(swapInterval: 0)
        } catch {
            surface.destroy()
            context.terminate()
            throw error
        }
        return (context, surface)
    }

    /// From vblank events to a timer, for good: the driver has no vblank events after all.
    func switchToTimerPacing(reason: String) {
        guard pacer.kind == .vblank else { return }
        DRMDisplay.log.debug("no vblank events (\(reason)): pacing by a timer at the mode's period \(mode.period.value) ns")
        buffers.dropHeld()
        let modeSet = pacer.isModeSet
        pacer.displayFailed()  // the vblank scheduler decides nothing more
        pacer.stop()
        pacer = TimerPacing(display: self, period: mode.period, modeSet: modeSet)
        pacer.demandChanged(dispatcher.wantsRefreshes)
    }

    func fail(_ failure: DRMError) {
        guard error == nil else { return }
        DRMDisplay.log.debug("the display failed: \(failure); links invalidated")
        error = failure
        pacer.displayFailed()
        dispatcher.invalidateAll()
        onError?(failure)
    }

    // MARK: Shutdown

    /// Restores the CRTC that was there before, frees buffers and drops master. Idempotent.
    public func shutDown() {
        guard !shutDownDone else { return }
        shutDownDone = true
        // The descriptor is closed once the event reader's source has let go of it (libdispatch's
        // rule): on the main queue after this returns, so after EGL and GBM.
        let session = self.session, device = self.device
        if let events { events.stop { session.closeDevice(device) } } else { session.closeDevice(device) }
        events = nil
        pacer.stop()
        if let sessionObserver { session.removeObserver(sessionObserver) }
        sessionObserver = nil
        // Restore what was on screen before (fbcon's framebuffer, or nothing); not while another
        // VT has the display (its owner set it up, and this descriptor is not master).
        if !sessionActive {
            DRMDisplay.log.debug("CRTC not restored: the session is not active (another VT has the display)")
        } else if let restored = crtc.restore() {
            DRMDisplay.log.debug("\(restored)")  // not inside the log call: evaluated only when debug logging is on
        }
        crtc.release()
        if session.kind == .direct { drmDropMaster(device.fd) }  // through a seat, closing the device releases it
        // EGL (the surface, with it the buffers and their framebuffers, then the context and
        // display), then the GBM objects: now, in that order, whoever still holds this object,
        // its context or its surface. The descriptor is closed last (above).
        surface.destroy()
        context.terminate()
        buffers.destroy()
    }
}
