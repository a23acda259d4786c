import Dispatch
import DisplayLinkCore
import EGLGraphics
internal import FrameSchedulers
import Glibc
import Logging
internal import CDRM
internal import CGBM

/// A DRM/KMS display as a frame source: mode set, GBM surface with EGL, page flips with
/// `DRM_MODE_PAGE_FLIP_EVENT`, and the flip event's vblank time as the truth.
///
/// - KMS API (``Options/kmsAPI``): atomic first (``AtomicKMS``: the first frame's mode set
///   validated by a `TEST_ONLY` commit, then one `ALLOW_MODESET` commit; a `NONBLOCK |
///   PAGE_FLIP_EVENT` commit per presented frame), legacy (`drmModeSetCrtc`, then one
///   `drmModePageFlip` per frame) for drivers without atomic or when asked. Events are read with
///   `drmHandleEvent` from a read source on the main queue (`page_flip_handler2` where the driver
///   has `DRM_CAP_CRTC_IN_VBLANK_EVENT`).
/// - Drivers without vblank events (``pacing`` `.timer`: vblank queries refused with EOPNOTSUPP,
///   queued vblanks refused, or two flips completing at one vblank count): refreshes come from a
///   `CLOCK_MONOTONIC` timer at the mode's exact period, decided by ``KMSTimerPacer``; timestamps
///   are the timer's schedule with `timer-fallback` provenance, at most one flip per period.
/// - Start: when the CRTC is already running (a console), frame 0 is its current vblank.
/// - Every decision (frames in flight, held frames, lateness, targets, sequences, start-up and
///   restarts, idle ticks) is made by ``KMSFrameScheduler``, a value type tested on virtual time;
///   this class does the C calls and clock reads, feeds it, and keeps the buffer objects parallel
///   to its frames. `targetTimestamp` is one or two periods after `timestamp` (frames in flight),
///   plus the lateness learned from recent frames.
/// - A refresh in which nothing was drawn still ticks: the next vblank is queued with
///   `drmCrtcQueueSequence` instead of re-flipping.
/// - `timestamp` is the vblank time (`CLOCK_MONOTONIC`, required: `DRM_CAP_TIMESTAMP_MONOTONIC`),
///   `sequence` the vblank counter (32-bit flip sequences extended across wraps), `duration` the
///   exact period from the mode timings, `targetTimestamp` the next vblank.
/// - ``shutDown()`` (also on deinit) restores the CRTC that was there before and drops master.
/// - Logs (label `displaylink.drm`, all at `.debug`: silent unless the program bootstraps a
///   handler at that level) only on state changes, never per frame in the steady state: the mode
///   chosen or retimed with its exact period, the EGL driver and whether buffers are kept mapped,
///   frames in flight 1→2 and back, idle ticks starting and ending, the CRTC restore.
@MainActor
public final class DRMDisplay: FrameSource {
    static let log = Logger(label: "displaylink.drm")

    public struct Options: Sendable {
        public var devicePath: String?
        public var mode: ModeRequest?
        /// The KMS API: atomic first with legacy as the fallback (`.automatic`), or one of them.
        public var kmsAPI: KMSAPI
        /// How the device is opened and master obtained: through a seat manager (seatd,
        /// systemd-logind) when one runs, else directly. See ``SeatSession``.
        public var session: SeatSession.Options
        public init(devicePath: String? = nil, mode: ModeRequest? = nil, kmsAPI: KMSAPI = .automatic,
                    session: SeatSession.Options = .init()) {
            self.devicePath = devicePath
            self.mode = mode
            self.kmsAPI = kmsAPI
            self.session = session
        }
    }

    public let dispatcher = RefreshDispatcher()
    public let devicePath: String
    public let connectorName: String
    public let mode: DisplayMode
    public let context: EGLDisplayContext
    public let surface: EGLWindowSurface
    public let driverName: String
    /// The KMS API in use: `.atomic` or `.legacy` (``Options/kmsAPI`` `.automatic` resolved; it
    /// becomes `.legacy` if the driver refuses the first frame's atomic test commit).
    public var kmsAPI: KMSAPI { output.api }
    /// How refreshes are paced: by vblank events, or by a timer at the mode's period on a driver
    /// without them (found at start, or when vblank events are refused or flips never move the
    /// vblank counter).
    public private(set) var pacing: KMSPacing = .vblank
    /// The errno with which the kernel refused a vblank query or queued vblank event (95,
    /// EOPNOTSUPP: the driver has no vblank support), or nil while it never refused one.
    public private(set) var vblankRefusal: Int32?
    /// What the primary plane scans out (from `IN_FORMATS`), when the driver lists its planes.
    public let planeFormats: PlaneFormats?
    /// Page flips submitted and completed.
    public private(set) var flipsSubmitted = 0
    public private(set) var flipsCompleted = 0
    /// Vblank events queued because nothing was drawn.
    public private(set) var idleTicks = 0
    public private(set) var error: DRMError?
    public var onError: ((DRMError) -> Void)?
    /// The session the device was opened in (also for input devices: ``ConsoleInput``).
    public let session: SeatSession
    /// Whether the session lets this display use the device now (false while another VT has it).
    public var isSessionActive: Bool { sessionActive }
    /// Called after the session was disabled (`false`: no callbacks until it comes back) and
    /// after it was enabled and the mode set again (`true`).
    public var onSessionChange: ((Bool) -> Void)?

    public var width: Int32 { Int32(mode.width) }
    public var height: Int32 { Int32(mode.height) }

    private let fd: Int32
    private let device: SeatSession.Device
    private var sessionActive = true
    /// Enabled again while a flip from before the pause was still pending: resume at its event.
    private var resumeAwaitsFlip = false
    private var sessionObserver: Int?
    private let crtcID: UInt32
    private var connectorID: UInt32
    private var modeInfo: drmModeModeInfo
    private let savedCrtc: UnsafeMutablePointer<drmModeCrtc>?
    private let gbmDevice: OpaquePointer
    private let gbmSurface: OpaquePointer
    private let hasCrtcInVblankEvent: Bool
    private var readSource: DispatchSourceRead?
    /// Runs ``startNextFrame()`` on the main queue when data is added: made once, so a late
    /// frame's early start allocates nothing (a block given to `DispatchQueue.main.async` is
    /// allocated on every call).
    private var startNextSource: DispatchSourceUserDataAdd?
    /// The decisions; the buffer objects of its `flipping` and `held` frames are kept here.
    private var scheduler: KMSFrameScheduler
    private var flippingBO: OpaquePointer?
    private var heldBuffer: (bo: OpaquePointer, fb: UInt32)?
    private var shownBO: OpaquePointer?
    private var nextCallbackPending = false
    /// The last vblanks the kernel reported (flip and vblank events, and current-vblank reads), for
    /// tests and diagnostics: a ring, filled without allocating.
    private var kernelVblankRing: [KernelVblank]
    private var flipSubmissionRing: [MonotonicInstant]
    /// The KMS calls (atomic or legacy) and the timer pacing for drivers without vblank events.
    private var output: any KMSOutput
    private let requestedAPI: KMSAPI
    private var outputValidated = false
    private var pacer: KMSTimerPacer
    private var timerFD: Int32 = -1
    private var timerSource: DispatchSourceRead?
    private var lastFlipSequence32: UInt32?
    private var pendingFeedback: PresentationFeedback?
    private var kernelVblankCount = 0
    private var framebuffers: [(bo: OpaquePointer, fb: UInt32, mapping: UnsafeMutableRawPointer?)] = []
    /// Whether each buffer is kept mapped for its lifetime (software rasterisation, see ``framebuffer(for:)``).
    public let keepsBuffersMapped: Bool
    private var startPending = false
    private var shutDownDone = false
    private var eventContext = drmEventContext()
    /// Frames in flight as last logged, and whether idle ticks (nothing drawn) are running.
    private var loggedDepth = 1
    private var idling = false

    public init(options: Options = Options()) throws(DRMError) {
        let path: String
        let session = try SeatSession.open(options: options.session)
        if let given = options.devicePath { path = given } else { path = try DRMDisplay.findDevice(session: session) }
        devicePath = path
        let device = try session.openDevice(path)
        self.session = session
        self.device = device
        let fd = device.fd
        self.fd = fd
        var cleanup = true
        defer { if cleanup { session.closeDevice(device) } }

        // Through a seat the descriptor is master already (the seat manager made it so).
        if drmIsMaster(fd) == 0 && drmSetMaster(fd) != 0 { throw .notMaster(path: path) }
        var value: UInt64 = 0
        guard drmGetCap(fd, UInt64(DRM_CAP_TIMESTAMP_MONOTONIC), &value) == 0, value == 1 else { throw .noMonotonicTimestamps }
        value = 0
        hasCrtcInVblankEvent = drmGetCap(fd, UInt64(DRM_CAP_CRTC_IN_VBLANK_EVENT), &value) == 0 && value == 1
        // Universal planes (the primary plane's formats); atomic unless legacy was asked for.
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let atomicCap = options.kmsAPI != .legacy && drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1) == 0
        requestedAPI = options.kmsAPI
        if let version = drmGetVersion(fd) {
            driverName = version.pointee.name.map { String(cString: $0) } ?? "unknown"
            drmFreeVersion(version)
        } else { driverName = "unknown" }

        // Connector, CRTC and mode.
        guard let resources = drmModeGetResources(fd) else { throw .kernel(operation: "drmModeGetResources(\(path))", errno: errno) }
        defer { drmModeFreeResources(resources) }
        var chosen: (connector: UnsafeMutablePointer<drmModeConnector>, name: String)?
        for i in 0..<Int(resources.pointee.count_connectors) {
            guard let c = drmModeGetConnector(fd, resources.pointee.connectors[i]) else { continue }
            if c.pointee.connection == DRM_MODE_CONNECTED && c.pointee.count_modes > 0 {
                chosen = (c, DRMDisplay.connectorName(c.pointee))
                break
            }
            drmModeFreeConnector(c)
        }
        guard let (connector, name) = chosen else { throw .noConnectedConnector(path: path) }
        defer { drmModeFreeConnector(connector) }
        connectorName = name
        connectorID = connector.pointee.connector_id
        var modes: [(DisplayMode, drmModeModeInfo)] = []
        for i in 0..<Int(connector.pointee.count_modes) {
            let info = connector.pointee.modes[i]
            modes.append((DisplayMode(info), info))
        }
        let selected: DisplayMode
        if let request = options.mode {
            selected = try request.select(from: modes.map(\.0))
        } else {
            selected = modes.first(where: { $0.0.isPreferred })?.0 ?? modes[0].0
        }
        var info: drmModeModeInfo
        if let listed = modes.first(where: { $0.0 == selected }) {
            info = listed.1
            DRMDisplay.log.debug("mode \(selected) \(options.mode.map { "chosen for \($0)" } ?? "(the connector's preferred)"), listed: exact period \(selected.period.value) ns (htotal \(selected.htotal) · vtotal \(selected.vtotal) / \(selected.clock) kHz) on \(name)")
        } else {
            // Retimed from the listed mode `select` took: the preferred (or first) progressive
            // mode of that size (an interlaced one's sync timings and flags would not fit).
            let sameSize = modes.filter { $0.0.width == selected.width && $0.0.height == selected.height && !$0.0.interlaced }
            guard let baseInfo = (sameSize.first(where: { $0.0.isPreferred }) ?? sameSize.first)?.1 else {
                throw .modeNotFound(requested: "\(selected)", available: modes.map { "\($0.0.width)x\($0.0.height)" })
            }
            let base = DisplayMode(baseInfo)
            info = try DRMDisplay.custom(selected, basedOn: baseInfo)
            DRMDisplay.log.debug("mode \(selected) retimed for \(options.mode.map { "\($0)" } ?? "the request") from the listed \(base) (htotal·vtotal/clock \(base.htotal)·\(base.vtotal)/\(base.clock) kHz → \(selected.htotal)·\(selected.vtotal)/\(selected.clock) kHz): exact period \(selected.period.value) ns on \(name)")
        }
        mode = selected
        modeInfo = info
        scheduler = KMSFrameScheduler(period: selected.period)
        kernelVblankRing = Array(repeating: KernelVblank(sequence: 0, time: .zero, kind: .vblank), count: DRMDisplay.kernelVblankCapacity)
        flipSubmissionRing = Array(repeating: .zero, count: DRMDisplay.kernelVblankCapacity)
        guard let crtc = DRMDisplay.findCrtc(fd: fd, resources: resources, connector: connector) else {
            throw .noCRTC(connector: name)
        }
        crtcID = crtc
        savedCrtc = drmModeGetCrtc(fd, crtc)
        let crtcIndex = (0..<Int(resources.pointee.count_crtcs)).first { resources.pointee.crtcs[$0] == crtc } ?? 0
        let plane = PrimaryPlane.find(fd: fd, crtcIndex: crtcIndex)
        planeFormats = plane?.formats
        let connectorIDValue = connector.pointee.connector_id, driver = driverName
        if options.kmsAPI == .atomic && !atomicCap { throw .atomicUnavailable(path: path, driver: driver) }
        let legacy = LegacyKMS(fd: fd, crtcID: crtc, connectorID: connectorIDValue, modeInfo: info, modeName: "\(selected)")
        if atomicCap, let plane {
            let listed = modes.first { $0.0.isPreferred && $0.0 != selected } ?? modes.first { $0.0 != selected }
            do {
                output = try AtomicKMS(fd: fd, crtcID: crtc, connectorID: connectorIDValue, plane: plane, modeInfo: info,
                                       modeName: "\(selected)", alternativeMode: listed.map { ($0.1, "\($0.0)") })
            } catch {
                if options.kmsAPI == .atomic { throw error }
                DRMDisplay.log.debug("atomic modesetting unusable (\(error)); legacy KMS")
                output = legacy
            }
        } else {
            if options.kmsAPI == .atomic { throw .atomicUnavailable(path: path, driver: driver) }
            output = legacy
        }
        pacer = KMSTimerPacer(period: selected.period)
        // A driver without vblank support refuses vblank queries outright (EOPNOTSUPP); an inactive
        // CRTC answers EINVAL, which says nothing yet (the first queued vblank tells).
        var probeSequence: UInt64 = 0, probeTime: UInt64 = 0
        if drmCrtcGetSequence(fd, crtc, &probeSequence, &probeTime) != 0 && errno == EOPNOTSUPP {
            pacing = .timer
            vblankRefusal = EOPNOTSUPP
        }
        DRMDisplay.log.debug("KMS API \(output.api) (asked: \(options.kmsAPI)); primary plane \(plane.map { "\($0.id): \($0.formats)" } ?? "not listed"); pacing: \(pacing == .timer ? "timer at the mode's period (the driver has no vblank events)" : "vblank events")")

        // GBM surface and EGL on it.
        guard let device = gbm_create_device(fd) else { throw .graphics("gbm_create_device failed on \(path)") }
        guard let gbmSurface = gbm_surface_create(device, UInt32(selected.width), UInt32(selected.height),
                                                  DRMDisplay.xrgb8888, UInt32(GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_RENDERING.rawValue)) else {
            gbm_device_destroy(device)
            throw .graphics("gbm_surface_create(\(selected.width)×\(selected.height), XRGB8888) failed")
        }
        gbmDevice = device
        self.gbmSurface = gbmSurface
        do {
            // Made in a function of its own: when it throws, what it made is gone (EGL) before
            // the GBM objects here, and they before the descriptor (the defer above).
            (context, surface) = try DRMDisplay.makeEGL(device: device, gbmSurface: gbmSurface)
            keepsBuffersMapped = context.rendersInSoftware
            DRMDisplay.log.debug("EGL driver \(context.driverName ?? "unknown") (\(driverName) on \(path)): \(keepsBuffersMapped ? "software rendering, scan-out buffers kept mapped" : "buffers not kept mapped")")
        } catch {
            gbm_surface_destroy(gbmSurface)
            gbm_device_destroy(device)
            throw .graphics(error.description)
        }
        cleanup = false
        framebuffers.reserveCapacity(8)
        eventContext.version = 4
        eventContext.page_flip_handler = DRMDisplay.pageFlipHandler
        eventContext.page_flip_handler2 = hasCrtcInVblankEvent ? DRMDisplay.pageFlipHandler2 : nil
        eventContext.sequence_handler = DRMDisplay.sequenceHandler
        dispatcher.onDemandChange = { [weak self] wanted in self?.demandChanged(wanted) }
        sessionObserver = session.addObserver(disabled: { [weak self] in self?.sessionDisabled() },
                                              enabled: { [weak self] in self?.sessionEnabled() })
        startEventLoop()
    }

    isolated deinit {
        shutDown()
        if let savedCrtc { drmModeFreeCrtc(savedCrtc) }
    }

    private static func makeEGL(device: OpaquePointer, gbmSurface: OpaquePointer) throws(EGLError) -> (EGLDisplayContext, EGLWindowSurface) {
        let context = try EGLDisplayContext(platform: .gbm(device: device), nativeVisualID: Int32(bitPattern: DRMDisplay.xrgb8888))
        let surface = try EGLWindowSurface(context: context, nativeWindow: UnsafeMutableRawPointer(gbmSurface))
        do {
            try surface.configure(swapInterval: 0)
        } catch {
            surface.destroy()
            context.terminate()
            throw error
        }
        return (context, surface)
    }

    /// The exact refresh period of the mode.
    public var refreshPeriod: Nanoseconds { mode.period }

    // MARK: Drawing

    /// Binds the GL context for this frame.
    public func beginFrame() throws(EGLError) { try surface.beginFrame() }

    /// Unbinds the GL context from this thread.
    public func releaseCurrent() { surface.releaseCurrent() }

    /// Whether the context stays current after a flip's swap (see ``EGLWindowSurface/staysCurrentAfterSwap``).
    public var staysCurrentAfterSwap: Bool {
        get { surface.staysCurrentAfterSwap }
        set { surface.staysCurrentAfterSwap = newValue }
    }

    /// Before the first frame: draws with `draw` into each buffer of the GBM surface in turn (up
    /// to four, as many as it hands out), and registers each for scanout (framebuffer, mapping),
    /// then gives them all back. Nothing is shown: the mode is set by the first presented frame.
    /// Allocating and faulting in a buffer costs a frame its vblank otherwise (tens of ms under
    /// emulation). Leaves the context unbound; does nothing once the mode is set.
    public func prepareBuffers(upTo count: Int = 4, draw: () -> Void) throws(DRMError) {
        guard !scheduler.isModeSet, !pacer.isModeSet, error == nil, !shutDownDone else { return }
        var locked: [OpaquePointer] = []
        defer { for bo in locked { gbm_surface_release_buffer(gbmSurface, bo) } }
        for _ in 0..<count where gbm_surface_has_free_buffers(gbmSurface) != 0 {
            do {
                try surface.beginFrame()
                draw()
                try surface.swapBuffers(damage: nil, surfaceHeight: height)
            } catch { throw .graphics(error.description) }
            guard let bo = gbm_surface_lock_front_buffer(gbmSurface) else { throw .graphics("gbm_surface_lock_front_buffer failed") }
            locked.append(bo)
            _ = try framebuffer(for: bo)
        }
    }

    /// Presents the frame: swap, then set the mode (first frame) or queue a page flip.
    ///
    /// When the kernel refuses the buffer, the mode or the flip, the display has failed: the error
    /// is thrown here and also goes to ``onError``, and the links are invalidated (the schedulers
    /// counted on the frame reaching the screen; nothing would come after it).
    public func present() throws(DRMError) {
        guard error == nil, !shutDownDone else { return }
        do { try surface.swapBuffers(damage: nil, surfaceHeight: height) } catch { throw .graphics(error.description) }
        guard let bo = gbm_surface_lock_front_buffer(gbmSurface) else { throw .graphics("gbm_surface_lock_front_buffer failed") }
        do {
            try submit(bo)
        } catch {
            // The seat took master before its disable arrived (a VT switch during the first
            // frame's mode set): paused; the enable sets the mode again.
            if case .kernel(_, let code) = error, lostMasterToSeat(code) { return }
            fail(error)
            throw error
        }
    }

    /// Puts the swapped buffer on screen (mode set or flip), holds it, or drops it while another
    /// VT has the display.
    private func submit(_ bo: OpaquePointer) throws(DRMError) {
        guard sessionActive else {
            // Another VT has the display: nothing is submitted (drawn outside a callback; dropped).
            gbm_surface_release_buffer(gbmSurface, bo)
            return
        }
        let fb: UInt32
        do { fb = try framebuffer(for: bo) } catch {
            gbm_surface_release_buffer(gbmSurface, bo)
            throw error
        }
        if pacing == .timer {
            try presentTimed(bo: bo, fb: fb)
            return
        }
        let action = scheduler.presented(now: MonotonicInstant.now())
        if scheduler.pipeline.depth != loggedDepth { logDepthChange() }
        if idling {
            idling = false
            DRMDisplay.log.debug("idle ticks end: frames flip again")
        }
        switch action {
        case .setMode:
            try setMode(bo: bo, fb: fb)
            shownBO = bo
            queueVblank()
        case .hold(let discarded):
            if let stale = heldBuffer {  // not reached: no callback runs while a frame is held
                gbm_surface_release_buffer(gbmSurface, stale.bo)
                if let discarded { dispatcher.deliver(discarded) }
            }
            heldBuffer = (bo, fb)
        case .flip:
            try flip(bo: bo, fb: fb)
        case .flipAndStartNext:
            try flip(bo: bo, fb: fb)
            startNextFrameNow()
        }
    }

    private func logDepthChange() {
        loggedDepth = scheduler.pipeline.depth
        if loggedDepth == 2 {
            DRMDisplay.log.debug("frames in flight 1→2: a frame missed its vblank; the next is drawn while the flip is pending (one more period of latency)")
        } else {
            DRMDisplay.log.debug("frames in flight 2→1: \(FlipPipeline.fastFramesToReturn) frames in a row drawn within half a period")
        }
    }

    /// The first frame: validated (atomic: a TEST_ONLY commit; under `.automatic` a refusal
    /// falls back to legacy), then the mode set with it on screen.
    private func setMode(bo: OpaquePointer, fb: UInt32) throws(DRMError) {
        if !outputValidated {
            outputValidated = true
            do {
                try output.validate(fb: fb, format: DRMDisplay.xrgb8888, modifier: gbm_bo_get_modifier(bo))
            } catch {
                guard requestedAPI == .automatic, output.api == .atomic else {
                    gbm_surface_release_buffer(gbmSurface, bo)
                    throw error
                }
                DRMDisplay.log.debug("atomic test commit refused (\(error)); legacy KMS")
                output.release()
                output = LegacyKMS(fd: fd, crtcID: crtcID, connectorID: connectorID, modeInfo: modeInfo, modeName: "\(mode)")
            }
        }
        do { try output.setMode(fb: fb) } catch {
            gbm_surface_release_buffer(gbmSurface, bo)
            throw error
        }
    }

    /// - Parameter time: when the flip was decided (recorded; default now).
    private func flip(bo: OpaquePointer, fb: UInt32, at time: MonotonicInstant? = nil) throws(DRMError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        let code = output.flip(fb: fb, userData: me)
        guard code == 0 else {
            gbm_surface_release_buffer(gbmSurface, bo)
            if lostMasterToSeat(code) { return }
            throw .kernel(operation: output.api == .atomic ? "drmModeAtomicCommit(NONBLOCK | PAGE_FLIP_EVENT)" : "drmModePageFlip", errno: code)
        }
        flippingBO = bo
        flipSubmissionRing[flipsSubmitted % DRMDisplay.kernelVblankCapacity] = time ?? MonotonicInstant.now()
        flipsSubmitted += 1
    }

    /// The vblank this frame was meant for has passed: run the callback for that vblank (read
    /// from the kernel) now, so the next frame is drawn while this one's flip is pending.
    ///
    /// Only for the vblank right after the late frame's own: its flip was queued after that
    /// one, so it cannot have completed yet. A later vblank may already carry the flip's
    /// completion, still unread; then its event brings the next callback instead.
    private func startNextFrameNow() {
        guard !nextCallbackPending, let startNextSource else { return }
        nextCallbackPending = true
        startNextSource.add(data: 1)
    }

    private func startNextFrame() {
        nextCallbackPending = false
        guard error == nil, !shutDownDone, sessionActive, dispatcher.wantsRefreshes, scheduler.wantsCurrentVblank else {
            scheduler.cancelCurrentVblank()
            return
        }
        var sequence: UInt64 = 0, nanoseconds: UInt64 = 0
        guard drmCrtcGetSequence(fd, crtcID, &sequence, &nanoseconds) == 0 else {
            scheduler.cancelCurrentVblank()
            return
        }
        let time = MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: nanoseconds))
        // After the read: an event waiting may be the flip completing at this very vblank.
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let eventPending = poll(&descriptor, 1, 0) != 0
        record(KernelVblank(sequence: sequence, time: time, kind: .current))
        if let event = scheduler.currentVblank(sequence: sequence, at: time, eventPending: eventPending,
                                               refreshIndex: dispatcher.nextRefreshIndex, now: MonotonicInstant.now()) {
            runCallback(event)
        }
    }

    private func framebuffer(for bo: OpaquePointer) throws(DRMError) -> UInt32 {
        if let known = framebuffers.first(where: { $0.bo == bo }) { return known.fb }
        var handles: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var modifiers: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let planes = max(1, min(4, Int(gbm_bo_get_plane_count(bo))))
        let modifier = gbm_bo_get_modifier(bo)
        withUnsafeMutableBytes(of: &handles) { h in
            withUnsafeMutableBytes(of: &pitches) { p in
                withUnsafeMutableBytes(of: &offsets) { o in
                    withUnsafeMutableBytes(of: &modifiers) { m in
                        for plane in 0..<planes {
                            h.storeBytes(of: gbm_bo_get_handle_for_plane(bo, Int32(plane)).u32, toByteOffset: plane * 4, as: UInt32.self)
                            p.storeBytes(of: gbm_bo_get_stride_for_plane(bo, Int32(plane)), toByteOffset: plane * 4, as: UInt32.self)
                            o.storeBytes(of: gbm_bo_get_offset(bo, Int32(plane)), toByteOffset: plane * 4, as: UInt32.self)
                            m.storeBytes(of: modifier, toByteOffset: plane * 8, as: UInt64.self)
                        }
                    }
                }
            }
        }
        var fb: UInt32 = 0
        let w = UInt32(mode.width), h = UInt32(mode.height)
        let status: Int32
        // Modifiers only when the buffer has a real one: DRM_FORMAT_MOD_INVALID with
        // DRM_MODE_FB_MODIFIERS is what makes vkms reject kmscube's buffers.
        if modifier != DRMDisplay.modInvalid {
            status = withUnsafePointer(to: &handles) { hp in withUnsafePointer(to: &pitches) { pp in
                withUnsafePointer(to: &offsets) { op in withUnsafePointer(to: &modifiers) { mp in
                    drmModeAddFB2WithModifiers(fd, w, h, DRMDisplay.xrgb8888,
                                               UnsafeRawPointer(hp).assumingMemoryBound(to: UInt32.self),
                                               UnsafeRawPointer(pp).assumingMemoryBound(to: UInt32.self),
                                               UnsafeRawPointer(op).assumingMemoryBound(to: UInt32.self),
                                               UnsafeRawPointer(mp).assumingMemoryBound(to: UInt64.self),
                                               &fb, UInt32(DRM_MODE_FB_MODIFIERS))
                } } } }
        } else {
            status = withUnsafePointer(to: &handles) { hp in withUnsafePointer(to: &pitches) { pp in
                withUnsafePointer(to: &offsets) { op in
                    drmModeAddFB2(fd, w, h, DRMDisplay.xrgb8888,
                                  UnsafeRawPointer(hp).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(pp).assumingMemoryBound(to: UInt32.self),
                                  UnsafeRawPointer(op).assumingMemoryBound(to: UInt32.self), &fb, 0)
                } } }
        }
        guard status == 0 else { throw .kernel(operation: "drmModeAddFB2", errno: errno) }
        framebuffers.append((bo, fb, keepsBuffersMapped ? DRMDisplay.holdMapping(bo, width: w, height: h) : nil))
        return fb
    }

    /// Maps a buffer and keeps it mapped until shutdown. Mesa's software rasteriser maps a dumb
    /// buffer for every frame it draws and unmaps it after, when no other mapping is open: each
    /// frame then faults every page of the buffer in again (300 faults at 640×480; 3 ms a frame
    /// under emulation). An open mapping keeps the pages in place. Only for software drivers: a
    /// GPU driver would answer `gbm_bo_map` with a staging copy. Failure only costs the speed-up.
    private static func holdMapping(_ bo: OpaquePointer, width: UInt32, height: UInt32) -> UnsafeMutableRawPointer? {
        var stride: UInt32 = 0
        var mapping: UnsafeMutableRawPointer?
        guard gbm_bo_map(bo, 0, 0, width, height, UInt32(GBM_BO_TRANSFER_READ.rawValue), &stride, &mapping) != nil else {
            return nil
        }
        return mapping
    }

    // MARK: Refreshes

    private func demandChanged(_ wanted: Bool) {
        if pacing == .timer {
            timerDemandChanged(wanted)
            return
        }
        guard wanted, error == nil, sessionActive, !scheduler.isWaitingForEvent, !startPending else { return }
        startPending = true
        let index = dispatcher.nextRefreshIndex
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.startPending = false
                guard self.dispatcher.wantsRefreshes, self.error == nil, !self.shutDownDone, self.sessionActive else { return }
                // A refresh came meanwhile (a pre-mode-set start again): the rhythm runs already.
                guard self.dispatcher.nextRefreshIndex == index else { return }
                // Before the mode set: the CRTC's current vblank, if it is running (a console on it).
                var current: (sequence: UInt64, time: MonotonicInstant)?
                if !self.scheduler.isModeSet {
                    var sequence: UInt64 = 0, nanoseconds: UInt64 = 0
                    if drmCrtcGetSequence(self.fd, self.crtcID, &sequence, &nanoseconds) == 0, nanoseconds > 0 {
                        let time = MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: nanoseconds))
                        self.record(KernelVblank(sequence: sequence, time: time, kind: .current))
                        current = (sequence, time)
                    }
                }
                switch self.scheduler.start(now: MonotonicInstant.now(), refreshIndex: self.dispatcher.nextRefreshIndex, currentVblank: current) {
                case .none: break
                case .queueVblank: self.queueVblank()  // a vblank event restarts the rhythm
                case .dispatch(let event): self.runCallback(event)  // nothing on screen yet: its frame sets the mode
                }
            }
        }
    }

    /// Queues a vblank event for the next vblank (the scheduler already counts it as on its way).
    private func queueVblank() {
        guard sessionActive else { return }
        var queued: UInt64 = 0
        let token = UInt64(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()))
        if drmCrtcQueueSequence(fd, crtcID, UInt32(DRM_CRTC_SEQUENCE_RELATIVE), 1, &queued, token) == 0 {
            idleTicks += 1
        } else if errno == EOPNOTSUPP || errno == EINVAL {
            // The mode is set, so the CRTC is on: the driver has no vblank events.
            vblankRefusal = errno
            switchToTimerPacing(reason: "drmCrtcQueueSequence refused (errno \(errno))")
        } else {
            let code = errno
            if !lostMasterToSeat(code) { fail(.kernel(operation: "drmCrtcQueueSequence", errno: code)) }
        }
    }

    private func flipEvent(sequence32: UInt32, time: MonotonicInstant) {
        guard error == nil, !shutDownDone else { return }
        guard sessionActive, !resumeAwaitsFlip else {
            // A flip queued before the pause completed: only the buffers move on.
            if let shown = shownBO { gbm_surface_release_buffer(gbmSurface, shown) }
            shownBO = flippingBO
            flippingBO = nil
            record(KernelVblank(sequence: KMSFrameScheduler.extend(sequence32, after: scheduler.lastSequence), time: time, kind: .flip))
            if resumeAwaitsFlip {
                resumeAwaitsFlip = false
                sessionEnabled()
            }
            return
        }
        if pacing == .timer {
            timedFlipEvent(time: time)
            return
        }
        flipsCompleted += 1
        // Two flips cannot complete at one vblank: a counter that does not move is no counter.
        defer { lastFlipSequence32 = sequence32 }
        if lastFlipSequence32 == sequence32 {
            record(KernelVblank(sequence: UInt64(sequence32), time: time, kind: .flip))
            if let shown = shownBO { gbm_surface_release_buffer(gbmSurface, shown) }
            shownBO = flippingBO
            flippingBO = nil
            switchToTimerPacing(reason: "two page flips completed at vblank \(sequence32)")
            return
        }
        let outcome = scheduler.flipCompleted(sequence32: sequence32, at: time)
        record(KernelVblank(sequence: scheduler.lastSequence, time: time, kind: .flip))
        // The flipped frame is on screen from this vblank; a held frame follows it at once.
        if let shown = shownBO { gbm_surface_release_buffer(gbmSurface, shown) }
        shownBO = flippingBO
        flippingBO = nil
        if outcome.flipHeld, let next = heldBuffer {
            heldBuffer = nil
            do { try flip(bo: next.bo, fb: next.fb) } catch {
                fail(error)
                return
            }
        }
        follow(outcome)
    }

    private func vblankEvent(sequence: UInt64, time: MonotonicInstant) {
        guard error == nil, !shutDownDone, sessionActive, !resumeAwaitsFlip else { return }
        record(KernelVblank(sequence: sequence, time: time, kind: .vblank))
        follow(scheduler.vblankEvent(sequence: sequence, at: time))
    }

    private func follow(_ outcome: KMSFrameScheduler.EventOutcome) {
        if let feedback = outcome.feedback { dispatcher.deliver(feedback) }
        guard error == nil, !shutDownDone, sessionActive, dispatcher.wantsRefreshes else { return }
        switch outcome.next {
        case .none: break
        case .queueVblank:
            scheduler.idleVblankQueued()
            queueVblank()
        case .callback:
            runCallback(scheduler.beginCallback(refreshIndex: dispatcher.nextRefreshIndex, now: MonotonicInstant.now()))
        }
    }

    private func runCallback(_ event: RefreshEvent) {
        dispatcher.dispatch(event)
        guard error == nil, !shutDownDone, sessionActive else { return }
        switch scheduler.callbackEnded(wantsRefreshes: dispatcher.wantsRefreshes) {
        case .none:
            break
        case .startAgain(let time):
            startAgain(at: time)
        case .queueVblank:
            if !idling {
                idling = true
                DRMDisplay.log.debug("idle ticks start: nothing drawn, the next vblank is queued (drmCrtcQueueSequence) instead of a flip")
            }
            queueVblank()  // nothing drawn: tick on the next vblank without flipping
        }
    }

    /// Before the first frame was drawn: the next refresh starts at `time` (one period after the
    /// callback that drew nothing), unless another refresh ran first.
    private func startAgain(at time: MonotonicInstant) {
        let index = dispatcher.nextRefreshIndex
        let wait = max(0, (time - MonotonicInstant.now()).value)
        DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { [weak self] in
            MainActor.assumeIsolated {
                guard let self, self.dispatcher.nextRefreshIndex == index, self.error == nil, !self.shutDownDone,
                      self.sessionActive, self.dispatcher.wantsRefreshes, !self.scheduler.isModeSet else { return }
                if case .dispatch(let event) = self.scheduler.start(now: MonotonicInstant.now(), refreshIndex: index) {
                    self.runCallback(event)
                }
            }
        }
    }

    // MARK: Timer pacing (drivers without vblank events)

    /// Pacing by a timer from now on: the driver has no vblank events. Refreshes come at the
    /// mode's exact period from a `CLOCK_MONOTONIC` timer (``KMSTimerPacer`` decides), never faster.
    private func switchToTimerPacing(reason: String) {
        guard pacing == .vblank else { return }
        pacing = .timer
        DRMDisplay.log.debug("no vblank events (\(reason)): pacing by a timer at the mode's period \(mode.period.value) ns")
        if let held = heldBuffer {
            gbm_surface_release_buffer(gbmSurface, held.bo)
            heldBuffer = nil
        }
        pacer = KMSTimerPacer(period: mode.period, modeSet: scheduler.isModeSet)
        scheduler.failed()  // the vblank scheduler decides nothing more
        timerDemandChanged(dispatcher.wantsRefreshes)
    }

    /// Refreshes wanted or not: the start is run from the main queue, never inside the call that
    /// changed the demand (a link being created).
    private func timerDemandChanged(_ wanted: Bool) {
        guard error == nil, !shutDownDone, sessionActive else { return }
        guard wanted else {
            pacer.stopped()
            return
        }
        guard !startPending else { return }
        startPending = true
        let index = dispatcher.nextRefreshIndex
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.startPending = false
                guard self.dispatcher.wantsRefreshes, self.error == nil, !self.shutDownDone, self.sessionActive else { return }
                // A timer armed before (its expiry queued while refreshes were not wanted, or
                // while another VT had the display) may have brought a refresh in the meantime,
                // the restart: the ticks run already, and a second restart would zero one more delta.
                guard self.dispatcher.nextRefreshIndex == index else { return }
                if let event = self.pacer.start(now: MonotonicInstant.now(), refreshIndex: self.dispatcher.nextRefreshIndex) {
                    self.runTimedCallback(event)
                } else {
                    self.armTimer()
                }
            }
        }
    }

    /// Arms the timer for the pacer's next tick (absolute, `CLOCK_MONOTONIC`).
    private func armTimer() {
        guard let deadline = pacer.deadline, error == nil, !shutDownDone else { return }
        if timerFD < 0 {
            timerFD = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
            guard timerFD >= 0 else {
                fail(.kernel(operation: "timerfd_create(CLOCK_MONOTONIC)", errno: errno))
                return
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: timerFD, queue: .main)
            source.setEventHandler { [weak self] in
                onMainActor(self) { $0?.timerFired() }
            }
            timerSource = source
            source.resume()
        }
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(deadline.nanoseconds / 1_000_000_000)
        spec.it_value.tv_nsec = Int(deadline.nanoseconds % 1_000_000_000)
        if timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) != 0 {
            fail(.kernel(operation: "timerfd_settime", errno: errno))
        }
    }

    private func stopTimer() {
        timerSource?.cancel()
        timerSource = nil
        if timerFD >= 0 { close(timerFD) }
        timerFD = -1
    }

    private func timerFired() {
        var expirations: UInt64 = 0
        _ = read(timerFD, &expirations, 8)
        guard error == nil, !shutDownDone, sessionActive else { return }
        guard dispatcher.wantsRefreshes else {
            pacer.stopped()
            return
        }
        let now = MonotonicInstant.now()
        let tick = pacer.timerFired(now: now, refreshIndex: dispatcher.nextRefreshIndex)
        if tick.flipHeld { flipHeldBuffer(decidedAt: now) }
        if let event = tick.event {
            runTimedCallback(event)
        } else {
            armTimer()  // woke before the tick
        }
    }

    private func runTimedCallback(_ event: RefreshEvent) {
        dispatcher.dispatch(event)
        if let feedback = pendingFeedback {
            pendingFeedback = nil
            dispatcher.deliver(feedback)
        }
        guard error == nil, !shutDownDone else { return }
        if dispatcher.wantsRefreshes { armTimer() } else { pacer.stopped() }
    }

    private func presentTimed(bo: OpaquePointer, fb: UInt32) throws(DRMError) {
        let now = MonotonicInstant.now()
        switch pacer.presented(now: now) {
        case .setMode:
            try setMode(bo: bo, fb: fb)
            shownBO = bo
            pendingFeedback = pacer.modeSet(at: MonotonicInstant.now())
        case .flip:
            try flip(bo: bo, fb: fb, at: now)
        case .hold(let discarded):
            if let stale = heldBuffer {
                gbm_surface_release_buffer(gbmSurface, stale.bo)
                if let discarded { pendingFeedback = discarded }
            }
            heldBuffer = (bo, fb)
        }
    }

    private func flipHeldBuffer(decidedAt time: MonotonicInstant) {
        guard let next = heldBuffer else { return }
        heldBuffer = nil
        do { try flip(bo: next.bo, fb: next.fb, at: time) } catch { fail(error) }
    }

    private func timedFlipEvent(time: MonotonicInstant) {
        flipsCompleted += 1
        record(KernelVblank(sequence: 0, time: time, kind: .flip))
        if let shown = shownBO { gbm_surface_release_buffer(gbmSurface, shown) }
        shownBO = flippingBO
        flippingBO = nil
        let completion = pacer.flipCompleted(at: time)
        if completion.flipHeld { flipHeldBuffer(decidedAt: time) }
        if let feedback = completion.feedback { dispatcher.deliver(feedback) }
    }

    // MARK: Session (VT switches)

    /// The seat is about to take the display away (another VT comes to the front): no flip,
    /// vblank request or callback from now on. A flip already queued completes (its event only
    /// moves the buffers). The seat manager drops master after this returns.
    private func sessionDisabled() {
        guard sessionActive, !shutDownDone else { return }
        sessionActive = false
        resumeAwaitsFlip = false
        scheduler.cancelCurrentVblank()
        if pacing == .timer { pacer.stopped() }  // the timer is not armed again while away
        DRMDisplay.log.debug("session disabled: no flips and no callbacks until the session is back\(flippingBO != nil ? " (a flip queued before completes)" : "")")
        onSessionChange?(false)
    }

    /// The display is ours again: the mode is set again with the frame last shown (the buffers
    /// are kept), and refreshes restart with a vblank event: the first callback is a restart
    /// (zero delta, the kernel's sequence taken up without counting the time away as missed).
    private func sessionEnabled() {
        guard !shutDownDone, error == nil else { return }
        sessionActive = true
        if flippingBO != nil {
            // That flip's event is still to come (the kernel completes it): resume after it.
            sessionActive = false
            resumeAwaitsFlip = true
            DRMDisplay.log.debug("session enabled: waiting for the flip queued before the pause to complete")
            return
        }
        if let held = heldBuffer {
            gbm_surface_release_buffer(gbmSurface, held.bo)
            heldBuffer = nil
        }
        if scheduler.isModeSet || pacer.isModeSet {
            let fb = shownBO.flatMap { bo in framebuffers.first(where: { $0.bo == bo })?.fb }
                ?? framebuffers.first?.fb ?? 0
            do { try output.setMode(fb: fb) } catch {
                // The seat may already have taken master back for the next switch away (an
                // enable and a disable queued together): its enable brings the display back.
                if case .kernel(_, let code) = error, lostMasterToSeat(code) { return }
                fail(error)
                return
            }
            // The first refresh after this one is a restart (zero delta, no misses counted for
            // the time away): the vblank scheduler takes up the kernel's sequence; the timer's
            // grid continues at its next tick.
            if pacing == .timer { pacer.sessionResumed() } else { scheduler.sessionResumed() }
            DRMDisplay.log.debug("session enabled: mode \(mode) set again with framebuffer \(fb); refreshes restart at the next vblank")
        } else {
            DRMDisplay.log.debug("session enabled before the first frame: the next frame sets the mode")
        }
        onSessionChange?(true)
        if dispatcher.wantsRefreshes { demandChanged(true) }
    }

    /// A request refused for want of master while the device is the seat's: the seat manager
    /// took master away before its disable reached us (logind drops DRM master first, then
    /// tells). Paused as for a disable; the seat's enable brings the display back.
    private func lostMasterToSeat(_ code: Int32) -> Bool {
        guard session.kind != .direct, code == EACCES || code == EPERM else { return false }
        DRMDisplay.log.debug("the seat took DRM master away (errno \(code)) before its disable arrived: paused")
        sessionDisabled()
        return true
    }

    // MARK: Kernel vblanks (for tests and diagnostics)

    /// A vblank the kernel reported: by a flip event, a queued vblank event, or a read of the
    /// current vblank (after a late frame).
    public struct KernelVblank: Sendable, Hashable {
        public enum Kind: Sendable, Hashable { case flip, vblank, current }
        /// The 64-bit sequence (flip events' 32-bit counter extended).
        public var sequence: UInt64
        public var time: MonotonicInstant
        public var kind: Kind
    }

    static let kernelVblankCapacity = 4096

    /// The last (up to 4096) vblanks the kernel reported, oldest first.
    public var recentKernelVblanks: [KernelVblank] {
        let n = min(kernelVblankCount, DRMDisplay.kernelVblankCapacity)
        let start = kernelVblankCount - n
        return (start..<kernelVblankCount).map { kernelVblankRing[$0 % DRMDisplay.kernelVblankCapacity] }
    }

    /// When the last (up to 4096) page flips were submitted, oldest first (the mode set is not one).
    public var recentFlipSubmissions: [MonotonicInstant] {
        let n = min(flipsSubmitted, DRMDisplay.kernelVblankCapacity)
        return (flipsSubmitted - n..<flipsSubmitted).map { flipSubmissionRing[$0 % DRMDisplay.kernelVblankCapacity] }
    }

    private func record(_ vblank: KernelVblank) {
        kernelVblankRing[kernelVblankCount % DRMDisplay.kernelVblankCapacity] = vblank
        kernelVblankCount &+= 1
    }

    // MARK: Event loop

    private func startEventLoop() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
        source.setEventHandler { [weak self] in
            onMainActor(self) { $0?.readEvents() }
        }
        readSource = source
        source.resume()
        let start = DispatchSource.makeUserDataAddSource(queue: .main)
        start.setEventHandler { [weak self] in
            onMainActor(self) { $0?.startNextFrame() }
        }
        startNextSource = start
        start.resume()
    }

    private func readEvents() {
        guard error == nil, !shutDownDone else { return }
        if drmHandleEvent(fd, &eventContext) != 0 { fail(.kernel(operation: "drmHandleEvent", errno: errno)) }
    }

    private func fail(_ failure: DRMError) {
        guard error == nil else { return }
        DRMDisplay.log.debug("the display failed: \(failure); links invalidated")
        error = failure
        scheduler.failed()
        dispatcher.invalidateAll()
        onError?(failure)
    }

    // MARK: Shutdown

    /// Restores the CRTC that was there before, frees buffers and drops master. Idempotent.
    public func shutDown() {
        guard !shutDownDone else { return }
        shutDownDone = true
        // The descriptor is closed once the read source has let go of it (libdispatch's rule):
        // its cancel handler runs on the main queue after this returns, so after EGL and GBM.
        let closesOnCancel = readSource != nil
        if let readSource {
            let session = self.session, device = self.device
            readSource.setCancelHandler { MainActor.assumeIsolated { session.closeDevice(device) } }
            readSource.cancel()
        }
        readSource = nil
        startNextSource?.cancel()
        startNextSource = nil
        stopTimer()
        if let sessionObserver { session.removeObserver(sessionObserver) }
        sessionObserver = nil
        // Restore what was on screen before (fbcon's framebuffer, or nothing); not while another
        // VT has the display (its owner set it up, and this descriptor is not master).
        if !sessionActive {
            DRMDisplay.log.debug("CRTC not restored: the session is not active (another VT has the display)")
        } else if let saved = savedCrtc?.pointee {
            // Not inside the log call: its message is only evaluated when debug logging is on.
            let restored = output.restore(saved)
            DRMDisplay.log.debug("\(restored)")
        }
        output.release()
        for entry in framebuffers {
            if let mapping = entry.mapping { gbm_bo_unmap(entry.bo, mapping) }
            drmModeRmFB(fd, entry.fb)
        }
        framebuffers.removeAll()
        if session.kind == .direct { drmDropMaster(fd) }  // through a seat, closing the device releases it
        // EGL (the surface, then the context and display), the GBM objects, the descriptor: now,
        // in that order, whoever still holds this object, its context or its surface.
        surface.destroy()
        context.terminate()
        gbm_surface_destroy(gbmSurface)
        gbm_device_destroy(gbmDevice)
        if !closesOnCancel { session.closeDevice(device) }
    }

    /// The current CRTC's framebuffer, mode validity and size (for checking the restore).
    /// Opening the device makes the opener master while no other program is: a program that
    /// opens it at the same moment cannot become master. To watch while a program starts, use a
    /// ``CRTCWatcher``.
    public static func crtcState(devicePath: String) -> (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? {
        let fd = open(devicePath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return crtcState(fd: fd)
    }

    nonisolated static func crtcState(fd: Int32) -> (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? {
        guard let resources = drmModeGetResources(fd) else { return nil }
        defer { drmModeFreeResources(resources) }
        guard resources.pointee.count_crtcs > 0, let crtc = drmModeGetCrtc(fd, resources.pointee.crtcs[0]) else { return nil }
        defer { drmModeFreeCrtc(crtc) }
        return (crtc.pointee.buffer_id, crtc.pointee.mode_valid != 0, Int(crtc.pointee.width), Int(crtc.pointee.height))
    }

    // MARK: Helpers

    /// The error for a failed open of a DRM device.
    public nonisolated static func openError(path: String, errno code: Int32) -> DRMError {
        switch code {
        case ENOENT, ENODEV, ENXIO: .noDevice(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        default: .kernel(operation: "open(\(path))", errno: code)
        }
    }

    static let xrgb8888: UInt32 = 0x3432_5258  // 'X' 'R' '2' '4'
    static let modInvalid: UInt64 = 0x00FF_FFFF_FFFF_FFFF

    /// The first /dev/dri/cardN with a connected connector (each opened in the session: through
    /// the seat, or directly).
    static func findDevice(session: SeatSession) throws(DRMError) -> String {
        var sawDevice = false
        for n in 0..<16 {
            let path = "/dev/dri/card\(n)"
            guard access(path, F_OK) == 0 else { continue }
            sawDevice = true
            let device: SeatSession.Device
            do { device = try session.openDevice(path) } catch {
                if case .noDevice = error { continue }
                if case .kernel = error { continue }
                throw error
            }
            let fd = device.fd
            defer { session.closeDevice(device) }
            guard let resources = drmModeGetResources(fd) else { continue }
            defer { drmModeFreeResources(resources) }
            for i in 0..<Int(resources.pointee.count_connectors) {
                guard let c = drmModeGetConnector(fd, resources.pointee.connectors[i]) else { continue }
                let connected = c.pointee.connection == DRM_MODE_CONNECTED
                drmModeFreeConnector(c)
                if connected { return path }
            }
        }
        if sawDevice { throw .noConnectedConnector(path: "/dev/dri/card*") }
        throw .noDevices
    }

    static func connectorName(_ c: drmModeConnector) -> String {
        let type: String
        switch c.connector_type {
        case UInt32(DRM_MODE_CONNECTOR_VIRTUAL): type = "Virtual"
        case UInt32(DRM_MODE_CONNECTOR_HDMIA): type = "HDMI-A"
        case UInt32(DRM_MODE_CONNECTOR_DisplayPort): type = "DP"
        case UInt32(DRM_MODE_CONNECTOR_eDP): type = "eDP"
        case UInt32(DRM_MODE_CONNECTOR_VGA): type = "VGA"
        case UInt32(DRM_MODE_CONNECTOR_DVII), UInt32(DRM_MODE_CONNECTOR_DVID): type = "DVI"
        case UInt32(DRM_MODE_CONNECTOR_LVDS): type = "LVDS"
        default: type = "Connector\(c.connector_type)"
        }
        return "\(type)-\(c.connector_type_id)"
    }

    static func findCrtc(fd: Int32, resources: UnsafeMutablePointer<drmModeRes>,
                         connector: UnsafeMutablePointer<drmModeConnector>) -> UInt32? {
        if let encoder = drmModeGetEncoder(fd, connector.pointee.encoder_id) {
            defer { drmModeFreeEncoder(encoder) }
            if encoder.pointee.crtc_id != 0 { return encoder.pointee.crtc_id }
        }
        for e in 0..<Int(connector.pointee.count_encoders) {
            guard let encoder = drmModeGetEncoder(fd, connector.pointee.encoders[e]) else { continue }
            defer { drmModeFreeEncoder(encoder) }
            for c in 0..<Int(resources.pointee.count_crtcs) where encoder.pointee.possible_crtcs & (1 << UInt32(c)) != 0 {
                return resources.pointee.crtcs[c]
            }
        }
        return nil
    }

    /// A kernel mode struct with the timings of `mode`, stretching `base`'s vertical blanking.
    static func custom(_ mode: DisplayMode, basedOn base: drmModeModeInfo) throws(DRMError) -> drmModeModeInfo {
        guard let clock = UInt32(exactly: mode.clock), let htotal = UInt16(exactly: mode.htotal),
              let vtotal = UInt16(exactly: mode.vtotal), let vrefresh = UInt32(exactly: mode.vrefresh), vtotal >= base.vtotal else {
            throw .graphics("The mode \(mode) cannot be made from the listed \(mode.width)x\(mode.height) mode: its timings "
                            + "(htotal \(mode.htotal), vtotal \(mode.vtotal), clock \(mode.clock) kHz) do not fit a kernel mode. "
                            + "Choose another rate (mode in DisplaySurface.Options or DRMDisplay.Options).")
        }
        var info = base
        info.clock = clock
        info.htotal = htotal
        let extra = vtotal - base.vtotal
        info.vtotal = vtotal
        info.vsync_start = base.vsync_start &+ extra
        info.vsync_end = base.vsync_end &+ extra
        info.vrefresh = vrefresh
        info.type = UInt32(DRM_MODE_TYPE_USERDEF)
        let name = Array("\(mode.width)x\(mode.height)@\(mode.vrefresh)".utf8.prefix(31)) + [0]
        withUnsafeMutableBytes(of: &info.name) { raw in
            for (i, b) in name.enumerated() { raw[i] = b }
        }
        return info
    }

    // MARK: C callbacks

    // Every frame passes through these and the event source's handler: `onMainActor` rather than
    // `MainActor.assumeIsolated`, which allocates on every call. libdrm calls
    // them from `drmHandleEvent`, which `readEvents` makes on the main actor.

    /// Both page-flip callbacks (with and without the CRTC id) report the same thing.
    private nonisolated static func flipCompleted(_ sequence: UInt32, _ seconds: UInt32, _ microseconds: UInt32,
                                                  _ data: UnsafeMutableRawPointer?) {
        guard let data else { return }
        let display = Unmanaged<DRMDisplay>.fromOpaque(data).takeUnretainedValue()
        let nanoseconds = Int64(seconds) * 1_000_000_000 + Int64(microseconds) * 1000  // < 2⁶³: no overflow
        onMainActor((display, sequence, MonotonicInstant(nanoseconds: nanoseconds))) { event in
            event.0.flipEvent(sequence32: event.1, time: event.2)
        }
    }

    private nonisolated static let pageFlipHandler: @convention(c) (Int32, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Void = {
        _, sequence, seconds, microseconds, data in flipCompleted(sequence, seconds, microseconds, data)
    }

    private nonisolated static let pageFlipHandler2: @convention(c) (Int32, UInt32, UInt32, UInt32, UInt32, UnsafeMutableRawPointer?) -> Void = {
        _, sequence, seconds, microseconds, _, data in flipCompleted(sequence, seconds, microseconds, data)
    }

    private nonisolated static let sequenceHandler: @convention(c) (Int32, UInt64, UInt64, UInt64) -> Void = {
        _, sequence, nanoseconds, token in
        guard let pointer = UnsafeMutableRawPointer(bitPattern: UInt(token)) else { return }
        let display = Unmanaged<DRMDisplay>.fromOpaque(pointer).takeUnretainedValue()
        onMainActor((display, sequence, MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: nanoseconds)))) { event in
            event.0.vblankEvent(sequence: event.1, time: event.2)
        }
    }
}

/// Reads the first CRTC's state through one descriptor that is never DRM master, so watching the
/// display never keeps a program that starts meanwhile from becoming master (opening the device
/// anew for each look would: the opener is master while nobody else is).
public final class CRTCWatcher {
    private let fd: Int32

    /// Nil if the device cannot be opened.
    public init?(devicePath: String = "/dev/dri/card0") {
        fd = open(devicePath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        if drmIsMaster(fd) != 0 { drmDropMaster(fd) }
    }

    deinit { close(fd) }

    /// The current CRTC's framebuffer, mode validity and size.
    public var state: (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? { DRMDisplay.crtcState(fd: fd) }
}

extension DisplayMode {
    init(_ info: drmModeModeInfo) {
        self.init(width: Int(info.hdisplay), height: Int(info.vdisplay), htotal: Int(info.htotal), vtotal: Int(info.vtotal),
                  clock: Int(info.clock), interlaced: info.flags & UInt32(DRM_MODE_FLAG_INTERLACE) != 0,
                  doubleScan: info.flags & UInt32(DRM_MODE_FLAG_DBLSCAN) != 0, vrefresh: Int(info.vrefresh),
                  isPreferred: info.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0)
    }
}
