import Dispatch
import DisplayLinkCore
import EGLGraphics
import SurfaceBackend

/// A display that exists only in memory, on virtual time: a GLES context on Mesa's surfaceless
/// EGL platform drawing into a pbuffer, refreshed as fast as frames are presented.
///
/// Refresh `n` has the timestamp `startTime + rate.offset(ofRefresh: n)`, exactly (integer
/// nanoseconds; see ``VirtualRefreshRate``), and its target is refresh `n + 1`'s timestamp. No
/// clock is read: the next refresh is delivered, on the main queue, as soon as the callbacks of
/// the previous one returned (a frame presented there is done; a refresh whose callbacks present
/// nothing is an empty frame), so a link's `timestamp`, `targetTimestamp`, `duration` and
/// `deltaTime` are those of a display at the chosen rate, however fast or slow the machine
/// draws. The frame presented in the callbacks of refresh `n` is reported presented at refresh
/// `n + 1`'s time, just before that refresh. While no link wants refreshes, virtual time stands
/// still. The same program therefore draws the same frames at the same virtual times on every
/// run: what golden-frame tests and offline rendering need.
///
/// The per-refresh path allocates nothing (a dispatch source's data, the dispatcher's fixed
/// rings). `DisplaySurface` opens one with `Options.backend = .offscreen`; it can also be used on
/// its own as a `FrameSource` with a context.
@MainActor
public final class OffscreenDisplay: DisplaySurfaceBackend {
    /// How an offscreen display runs (its size is given separately).
    public struct Options: Sendable, Hashable {
        /// The refresh rate on virtual time (default 60 Hz).
        public var refreshRate: VirtualRefreshRate
        /// The timestamp of the first refresh, on the scale of `CLOCK_MONOTONIC` (default 0: the
        /// virtual clock has nothing to do with the machine's).
        public var startTime: MonotonicInstant
        /// Pixels per point the display reports (default 1): the pbuffer's size is in pixels, its
        /// size in points that over this (a HiDPI target for tests and golden frames).
        public var scale: Double = 1

        /// A display at `refreshRate` whose first refresh is at `startTime`.
        public init(refreshRate: VirtualRefreshRate = .hertz(60), startTime: MonotonicInstant = .zero) {
            self.refreshRate = refreshRate
            self.startTime = startTime
        }
    }

    /// Where the links on this display get their refreshes.
    public let dispatcher = RefreshDispatcher()
    /// Where the display reports a failure (it has no keys, sizes or windows to report).
    public var events = SurfaceBackendEvents()
    /// The pbuffer's size in pixels.
    public let width: Int32, height: Int32
    /// Pixels per point (``Options/scale``).
    public var scale: Double { options.scale }
    /// The refresh rate and start time it runs at.
    public let options: Options
    /// The GLES version of the context (3 when available, else 2).
    public var glesMajorVersion: Int32 { context.glesMajorVersion }
    /// Refreshes delivered so far: the next one is refresh number `refreshCount`.
    public private(set) var refreshCount: UInt64 = 0
    /// Frames presented so far.
    public private(set) var framesPresented = 0
    /// Whether ``close()`` ran: nothing is drawn or refreshed afterwards.
    public private(set) var isClosed = false

    private let context: EGLDisplayContext
    private let surface: EGLWindowSurface
    private var tick: DispatchSourceUserDataAdd?
    private var tickPending = false
    /// The dispatcher's index of the refresh being delivered or last delivered: what a present
    /// reports feedback for.
    private var currentRefreshIndex: UInt64?
    /// The refresh whose frame was presented and is reported at the next refresh.
    private var presentedRefreshIndex: UInt64?

    /// Opens a `width`×`height` pbuffer with a GLES context (3 when available, else 2).
    ///
    /// Throws ``OffscreenError`` (wrapped in `SurfaceBackendError`): a size without pixels, a
    /// rate without a positive period, or EGL's refusal.
    public init(width: Int32, height: Int32, options: Options = Options()) throws(SurfaceBackendError) {
        guard width > 0, height > 0 else { throw OffscreenDisplay.failure(.invalidSize(width: width, height: height)) }
        guard options.refreshRate.isValid else { throw OffscreenDisplay.failure(.invalidRefreshRate(options.refreshRate)) }
        do {
            context = try EGLDisplayContext(platform: .surfaceless)
            surface = try EGLWindowSurface(context: context, pbufferWidth: width, height: height)
            // Bound once here, so that a context or pbuffer that cannot be used fails the open.
            try surface.beginFrame()
            surface.releaseCurrent()
        } catch {
            throw OffscreenDisplay.failure(.graphics(error))
        }
        self.width = width
        self.height = height
        self.options = options
        let tick = DispatchSource.makeUserDataAddSource(queue: .main)
        tick.setEventHandler { [weak self] in
            onMainActor(self) { $0?.deliverRefresh() }
        }
        tick.resume()
        self.tick = tick
        dispatcher.onDemandChange = { [weak self] wanted in
            if wanted { self?.scheduleRefresh() }
        }
    }

    isolated deinit {
        close()
    }

    private static func failure(_ error: OffscreenError) -> SurfaceBackendError {
        SurfaceBackendError(backend: "offscreen", error)
    }

    /// The timestamp of refresh `n`: ``Options/startTime`` plus `n` periods, exactly.
    public func timestamp(ofRefresh n: UInt64) -> MonotonicInstant {
        options.startTime + options.refreshRate.offset(ofRefresh: n)
    }

    // MARK: Virtual time

    private func scheduleRefresh() {
        guard !tickPending, !isClosed, dispatcher.wantsRefreshes else { return }
        tickPending = true
        tick?.add(data: 1)
    }

    private func deliverRefresh() {
        tickPending = false
        guard !isClosed, dispatcher.wantsRefreshes else { return }
        let n = refreshCount
        refreshCount &+= 1
        let time = timestamp(ofRefresh: n)
        if let presented = presentedRefreshIndex {
            presentedRefreshIndex = nil
            dispatcher.deliver(
                PresentationFeedback(
                    refreshIndex: presented, outcome: .presented(at: time, sequence: n),
                    flags: [.vsync, .hardwareClock, .hardwareCompletion]))
            guard !isClosed else { return }
        }
        currentRefreshIndex = dispatcher.nextRefreshIndex
        dispatcher.dispatch(
            RefreshEvent(
                timestamp: time, sequence: n, refreshPeriod: options.refreshRate.period,
                targetTimestamp: timestamp(ofRefresh: n &+ 1), provenance: .hardwareVBlank))
        // Whether or not the callbacks presented a frame, the next refresh follows at once.
        scheduleRefresh()
    }

    // MARK: Drawing

    /// Makes the context current on the calling thread with the pbuffer (nothing once closed).
    public func beginFrame() throws(SurfaceBackendError) {
        guard !isClosed else { return }
        do { try surface.beginFrame() } catch { throw SurfaceBackendError(backend: "offscreen", error) }
    }

    /// Hands the frame to the driver (`glFlush`: a pbuffer's swap does nothing, and the swap that
    /// follows is there for tools that count frames by swaps); the whole pbuffer is the frame, so
    /// `damage` changes nothing.
    public func present(damage: PixelRect?, keepsContextCurrent: Bool) throws(SurfaceBackendError) {
        guard !isClosed else { return }
        surface.flush()
        surface.staysCurrentAfterSwap = keepsContextCurrent
        do { try surface.swapBuffers(damage: nil, surfaceHeight: height) } catch { throw SurfaceBackendError(backend: "offscreen", error) }
        framesPresented += 1
        presentedRefreshIndex = currentRefreshIndex
    }

    /// Releases the context from the calling thread; harmless when it is not bound.
    public func releaseContext() {
        guard !isClosed else { return }
        surface.releaseCurrent()
    }

    /// The pbuffer's pixels as RGBA rows from the top (the context must be current: between
    /// ``beginFrame()`` and the present); nil once closed.
    public func readPixels() -> [UInt8]? {
        guard !isClosed else { return nil }
        return surface.readPixels(width: width, height: height)
    }

    /// Always: the pbuffer is the whole (virtual) output.
    public var isFullscreen: Bool { true }

    /// Nothing to do: the pbuffer is the whole (virtual) output.
    public func setFullscreen(_ on: Bool) {}

    /// `platform`, `size`, `presentation_clock` (`virtual`), `refresh_advertised` and
    /// `refresh_exact` (Hz), `period_exact` (s), `start_time` (s), `refreshes`,
    /// `frames_presented`, `egl_vendor`, `egl_driver`, `gles_version`.
    public var environment: [EnvironmentEntry] {
        [
            EnvironmentEntry("platform", .string("EGL_PLATFORM_SURFACELESS_MESA")),
            EnvironmentEntry("size", .string("\(width)x\(height)")),
            EnvironmentEntry("presentation_clock", .string("virtual")),
            EnvironmentEntry("refresh_advertised", .number(options.refreshRate.hertz)),
            EnvironmentEntry("refresh_exact", .string(options.refreshRate.description)),
            EnvironmentEntry(
                "period_exact",
                .number(
                    Double(options.refreshRate.periodNumerator) / 1e9
                        / Double(options.refreshRate.periodDenominator))),
            EnvironmentEntry("start_time", .number(options.startTime.seconds)),
            EnvironmentEntry("refreshes", .int(Int(clamping: refreshCount))),
            EnvironmentEntry("frames_presented", .int(framesPresented)),
            EnvironmentEntry("egl_vendor", .string(context.vendor)),
            EnvironmentEntry("egl_driver", context.driverName.map { .string($0) } ?? .unknown),
            EnvironmentEntry("gles_version", .int(Int(context.glesMajorVersion)))
        ]
    }

    // MARK: Closing

    /// The refreshes stop, then the pbuffer goes, then the context and (with its last user) the
    /// EGL display. Idempotent.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        events = SurfaceBackendEvents()
        tick?.cancel()
        tick = nil
        surface.destroy()
        context.terminate()
    }
}
