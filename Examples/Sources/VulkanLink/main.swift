// VulkanLink: a quad drawn with Vulkan (lavapipe on Mesa), turned by the display link's
// targetTimestamp, on a Wayland window the library opens without EGL
// (DisplaySurface.Options.graphics = .external). The link follows the compositor's presentation
// feedback through the commit hook (DisplaySurface.willCommit(bufferWidth:bufferHeight:) right before vkQueuePresentKHR);
// the swapchain is FIFO, so Mesa's WSI paces it with wp_fifo_v1 and commit timing where offered.
// Where the driver has VK_KHR_present_wait, Vulkan's own word on each present is set beside the
// compositor's, frame by frame.
//
//   VulkanLink [--frames N] [--fullscreen-at K] [--latency low] [--validate] [--source fed]
//
// --fullscreen-at K asks for fullscreen at frame K (the swapchain is made again at the new size);
// --validate runs with the Khronos validation layer and fails the check on any error it reports;
// --source fed drives the link by a FedFrameSource instead, fed with Vulkan's present-wait times
// (or, where the driver lacks VK_KHR_present_wait, as Mesa 26.1's lavapipe does, with the
// compositor's feedback times); the window's source still requests the compositor's feedback with
// each present, to compare.
// Its check (printed last, exit status 1 if it fails) asserts what holds at any speed: the first
// delta is 0, each later delta is the time between timestamps (or 0 after a stall), targets never
// go back, every timestamp from presentation feedback is a time the compositor reported, a resize
// made the swapchain again, and the validation layer reported no error.
import CVulkan
import Dispatch
import DisplayLinkCore
import DisplaySurface
import ForeignSources
import Glibc

struct ExampleError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct RunOptions {
    var frames = 240
    var fullscreenAt: Int?
    var latency = LatencyPolicy.throughput
    var validate = false
    var source = TimingSource.compositor
}

/// Which source drives the link.
enum TimingSource: String {
    /// The window's frame source: the compositor's wp_presentation feedback.
    case compositor
    /// A FedFrameSource, fed with Vulkan's present-wait times where the driver offers
    /// VK_KHR_present_wait, else with the compositor's feedback times the window's source learns
    /// (what a program that learns its presentations itself does). The window's source watches
    /// either way: its feedback is set beside Vulkan's.
    case fed
}

/// The latest refresh of the window's frame source, when a fed source drives the frames: its
/// requests go with the next present (the commit hook), and its feedback names it.
@MainActor
final class WindowRefreshes: DisplayUpdateReceiver {
    var latest: UInt64?
    func displayWillUpdate(_ frame: DisplayFrame) { latest = frame.refreshIndex }
}

@MainActor
final class App: DisplayUpdateReceiver {
    /// Frames drawn after the checked ones, so that their presentations are reported too.
    static let tail = 6
    /// A quarter turn per second of target time, at any refresh rate.
    static let turnsPerSecond = 0.25

    let options: RunOptions
    let surface: DisplaySurface
    let device: VulkanDevice
    let swapchain: Swapchain
    let renderer: QuadRenderer
    let waiter: PresentWaiter?
    /// With `--source fed`: the source fed with present-wait (or feedback) times.
    let fed: FedFrameSource?
    let windowRefreshes = WindowRefreshes()
    var link: DisplayLink?
    var windowLink: DisplayLink?
    var log = FrameLog()
    /// A frame drawn while the fed source awaits the previous one's presentation.
    var held: QuadRenderer.Rendered?
    var needsSwapchain = false
    var resizes = 0
    var start: MonotonicInstant?
    var finished = false

    init(options: RunOptions) throws {
        self.options = options
        var surfaceOptions = DisplaySurface.Options(title: "VulkanLink", width: 480, height: 360)
        surfaceOptions.graphics = .external  // no EGL: Vulkan draws and presents
        surfaceOptions.latency = options.latency
        surface = try DisplaySurface(options: surfaceOptions)
        guard case .wayland(let display, let waylandSurface)? = surface.nativeWindow else {
            throw ExampleError("the surface has no Wayland window")
        }
        device = try VulkanDevice(display: display, waylandSurface: waylandSurface, validate: options.validate)
        swapchain = try Swapchain(device: device)
        renderer = try QuadRenderer(device: device, swapchain: swapchain)
        try swapchain.make(width: UInt32(surface.width), height: UInt32(surface.height), renderPass: renderer.renderPass)
        let vk = device.device
        waiter = device.waitForPresent.map { PresentWaiter(device: vk, wait: $0) }
        if options.source == .fed {
            // The fed source's period: the output's advertised refresh (60 Hz when unknown).
            var hertz = 60.0
            if case .number(let advertised)? = surface.environment.first(where: { $0.key == "refresh_advertised" })?.value,
                advertised > 0
            {
                hertz = advertised
            }
            fed = try FedFrameSource(refreshPeriod: Nanoseconds(Int64((1e9 / hertz).rounded())), latency: options.latency)
        } else {
            fed = nil
        }
        surface.onResize = { [unowned self] _, _ in
            needsSwapchain = true
            resizes += 1
        }
        surface.onScaleChange = { [unowned self] _ in needsSwapchain = true }
        surface.onError = { [unowned self] error in fail(error) }
        surface.onCloseRequest = { [unowned self] in finish() }
        if let fed {
            // The window's link first: its first refresh's requests then go with the first present.
            let watch = DisplayLink(source: surface, receiver: windowRefreshes)
            watch.presentationHandler = { [unowned self] feedback in
                log.feedback(feedback)
                // Without present wait, the compositor's word is what the fed source is told.
                if waiter == nil, case .presented(let time, _) = feedback.outcome, feedback.isTimePlausible { feed(time) }
            }
            windowLink = watch
            link = DisplayLink(source: fed, receiver: self)
        } else {
            let link = DisplayLink(source: surface, receiver: self)
            link.presentationHandler = { [unowned self] feedback in
                log.feedback(feedback)
                if case .presented(let time, _) = feedback.outcome, feedback.isTimePlausible { log.sourceTold(time) }
            }
            self.link = link
        }
    }

    func displayWillUpdate(_ frame: DisplayFrame) {
        guard !finished else { return }
        log.began(frame, at: MonotonicInstant.now())
        if fed == nil { windowRefreshes.latest = frame.refreshIndex }
        let start = self.start ?? frame.targetTimestamp
        self.start = start
        let angle = Float((frame.targetTimestamp - start).seconds * App.turnsPerSecond * 2 * Double.pi)
        do {
            if needsSwapchain { try makeSwapchain() }
            var drawn = try renderer.render(angle: angle)
            if case .outOfDate = drawn {
                try makeSwapchain()
                drawn = try renderer.render(angle: angle)
            }
            if case .rendered(let rendered) = drawn {
                if let fed, fed.willSubmit() == .presentAfterPending {
                    held = rendered  // presented when the pending one was shown (feed)
                } else {
                    try present(rendered)
                }
            }
        } catch {
            fail(error)
        }
        if log.rows.count == options.fullscreenAt { surface.setFullscreen(true) }
        if log.rows.count == options.frames + App.tail { finish() }
    }

    func present(_ rendered: QuadRenderer.Rendered) throws {
        let extent = swapchain.extent
        var submitted = MonotonicInstant.zero
        let willPresent = {
            submitted = MonotonicInstant.now()
            self.surface.willCommit(bufferWidth: Int32(extent.width), bufferHeight: Int32(extent.height))
        }
        switch try renderer.present(rendered, willPresent: willPresent) {
        case .outOfDate:
            needsSwapchain = true
        case .presented(let id, let suboptimal):
            if suboptimal { needsSwapchain = true }
            log.presented(id: id, windowRefresh: windowRefreshes.latest, submitted: submitted)
            if id != 0, let waiter {
                waiter.enqueue(id: id, swapchain: rendered.swapchain) { [weak self] id, result in self?.presentWaited(id, result) }
            }
        }
    }

    /// Vulkan's word on present `id`: logged, and with `--source fed` fed to the link.
    func presentWaited(_ id: UInt64, _ result: PresentWaiter.Result) {
        log.vulkan(id: id, result)
        if case .presented(let time) = result {
            feed(time)
        } else {
            presentHeld()  // the pending one's fate is unknown: the fed source takes it as lost
        }
    }

    /// Presents the frame held for the fed source, if any (its image is acquired: it must go out).
    func presentHeld() {
        guard let frame = held else { return }
        held = nil
        do { try present(frame) } catch { fail(error) }
    }

    /// A presentation at `time` told to the fed source (a held frame is presented first, as the
    /// fed source asks).
    func feed(_ time: MonotonicInstant) {
        guard !finished, let fed else { return }
        presentHeld()
        log.sourceTold(time)
        fed.presented(at: time)
    }

    /// The swapchain at the surface's size; no present wait may use the old one meanwhile.
    func makeSwapchain() throws {
        presentHeld()  // to the swapchain it was drawn for, before that one is retired
        waiter?.drain()
        try swapchain.make(width: UInt32(surface.width), height: UInt32(surface.height), renderPass: renderer.renderPass)
        needsSwapchain = false
    }

    func finish() {
        guard !finished else { return }
        finished = true
        link?.invalidate()
        windowLink?.invalidate()
        // The waits' reports are on the main queue already: the summary comes after them.
        waiter?.drain()
        DispatchQueue.main.async { MainActor.assumeIsolated { self.report() } }
    }

    /// Vulkan's objects, then the surface they were made on. Once.
    func tearDown() {
        guard !surface.isClosed else { return }
        link?.invalidate()
        windowLink?.invalidate()
        waiter?.drain()
        swapchain.destroy()
        renderer.destroy()
        device.destroy()
        surface.close()
    }

    /// Tears down, then prints the check, the figures and the first ten frames.
    func report() {
        let extent = swapchain.extent
        let sizeMatches = extent.width == UInt32(surface.width) && extent.height == UInt32(surface.height)
        let environment = Dictionary(surface.environment.map { ($0.key, "\($0.value)") }, uniquingKeysWith: { a, _ in a })
        tearDown()

        let checked = min(options.frames, log.rows.count)
        let check = log.check(frames: checked)
        let validationErrors = device.validation?.errors ?? 0
        let remade = resizes == 0 || swapchain.generation > 1
        let ok = check.ok && check.presentationTimestamps > 0 && validationErrors == 0 && remade && sizeMatches
        let figures = log.figures(frames: checked)
        let told =
            options.source == .compositor
            ? "the compositor's" : waiter != nil ? "fed from Vulkan's present wait" : "fed from the compositor's feedback"
        print(
            "VulkanLink: \(checked) frames on \(environment["compositor"] ?? "?") (\(device.deviceName), \(device.driverInfo)), "
                + "timestamps \(told), "
                + "latency \(options.latency), swapchain made \(swapchain.generation) times for \(resizes) resizes, "
                + "present wait \(waiter != nil ? "offered" : "not offered by the driver")"
                + (options.validate ? ", validation layer on: \(validationErrors) errors" : ""))
        print(
            "  from frame 3: median |target − presented| \(figures.targetError.map(fixed) ?? "—") ms, "
                + "median callback-to-presented \(figures.latency.map(fixed) ?? "—") ms, "
                + "median callback-to-present-call \(figures.render.map(fixed) ?? "—") ms, "
                + "largest |Vulkan − compositor| \(figures.vulkanDifference.map(fixed) ?? "—") ms over \(figures.compared) frames "
                + "(presented: the compositor's feedback)")
        for line in log.table(first: 10) { print("  " + line) }
        print(
            "VulkanLink: check "
                + (ok
                    ? "ok (first delta 0, each delta the time between timestamps or 0 after a stall, targets forward, "
                        + "\(check.presentationTimestamps) timestamps all \(told), swapchain made again on each resize"
                        + (options.validate ? ", no validation error)" : ")")
                    : "FAILED (first delta 0: \(check.firstDeltaZero), deltas exact: \(check.deltasExact), targets forward: "
                        + "\(check.targetsForward), timestamps \(told): \(check.timestampsFromSource) "
                        + "(\(check.presentationTimestamps)), swapchain made again: \(remade), its size the surface's: \(sizeMatches), "
                        + "validation errors: \(validationErrors))"))
        exit(ok ? 0 : 1)
    }

    func fail(_ error: any Error) -> Never {
        print("VulkanLink: \(error)")
        exit(1)
    }
}

/// The value after the last `flag` (a later one overrides an earlier one).
func value(of flag: String) -> String? {
    guard let i = CommandLine.arguments.lastIndex(of: flag), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

var options = RunOptions()
options.frames = max(1, value(of: "--frames").flatMap { Int($0) } ?? 240)
options.fullscreenAt = value(of: "--fullscreen-at").flatMap { Int($0) }
options.validate = CommandLine.arguments.contains("--validate")
if let source = value(of: "--source") {
    guard let chosen = TimingSource(rawValue: source) else {
        print("VulkanLink: --source takes compositor or fed, got \(source)")
        exit(2)
    }
    options.source = chosen
}
if let latency = value(of: "--latency") {
    guard let policy = LatencyPolicy(rawValue: latency == "low" ? "lowLatency" : latency) else {
        print("VulkanLink: --latency takes low or throughput, got \(latency)")
        exit(2)
    }
    options.latency = policy
}
do {
    let app = try App(options: options)
    // Ctrl-C, SIGTERM: Vulkan's objects go before the window they were made on.
    DisplaySurface.installSignalHandlers { signal in
        app.tearDown()
        exit(128 + signal)
    }
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("VulkanLink: \(error)")
    exit(1)
}
