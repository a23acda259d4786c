// VulkanLink: a quad drawn with Vulkan (lavapipe on Mesa), turned by the display link's
// targetTimestamp, on a Wayland window the library opens without EGL
// (DisplaySurface.Options.graphics = .external). The link follows the compositor's presentation
// feedback through the commit hook (DisplaySurface.willCommit() right before vkQueuePresentKHR);
// the swapchain is FIFO, so Mesa's WSI paces it with wp_fifo_v1 and commit timing where offered.
// Where the driver has VK_KHR_present_wait, Vulkan's own word on each present is set beside the
// compositor's, frame by frame.
//
//   VulkanLink [--frames N] [--fullscreen-at K] [--latency low] [--validate]
//
// --fullscreen-at K asks for fullscreen at frame K (the swapchain is made again at the new size);
// --validate runs with the Khronos validation layer and fails the check on any error it reports.
// Its check (printed last, exit status 1 if it fails) asserts what holds at any speed: the first
// delta is 0, each later delta is the time between timestamps (or 0 after a stall), targets never
// go back, every timestamp from presentation feedback is a time the compositor reported, a resize
// made the swapchain again, and the validation layer reported no error.
import CVulkan
import Dispatch
import DisplayLinkCore
import DisplaySurface
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
    var link: DisplayLink?
    var log = FrameLog()
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
        surface.onResize = { [unowned self] _, _ in
            needsSwapchain = true
            resizes += 1
        }
        surface.onScaleChange = { [unowned self] _ in needsSwapchain = true }
        surface.onError = { [unowned self] error in fail(error) }
        surface.onCloseRequest = { [unowned self] in finish() }
        let link = DisplayLink(source: surface, receiver: self)
        link.presentationHandler = { [unowned self] feedback in log.feedback(feedback) }
        self.link = link
    }

    func displayWillUpdate(_ frame: DisplayFrame) {
        guard !finished else { return }
        log.began(frame, at: MonotonicInstant.now())
        let start = self.start ?? frame.targetTimestamp
        self.start = start
        let angle = Float((frame.targetTimestamp - start).seconds * App.turnsPerSecond * 2 * Double.pi)
        do {
            if needsSwapchain { try makeSwapchain() }
            var outcome = try renderer.drawFrame(angle: angle) { surface.willCommit() }
            if case .outOfDate = outcome {
                try makeSwapchain()
                outcome = try renderer.drawFrame(angle: angle) { surface.willCommit() }
            }
            if case .presented(let id) = outcome, id != 0, let waiter, let handle = swapchain.handle {
                log.presented(id: id)
                waiter.enqueue(id: id, swapchain: handle) { [weak self] id, result in self?.log.vulkan(id: id, result) }
            }
        } catch {
            fail(error)
        }
        if log.rows.count == options.fullscreenAt { surface.setFullscreen(true) }
        if log.rows.count == options.frames + App.tail { finish() }
    }

    /// The swapchain at the surface's size; no present wait may use the old one meanwhile.
    func makeSwapchain() throws {
        waiter?.drain()
        try swapchain.make(width: UInt32(surface.width), height: UInt32(surface.height), renderPass: renderer.renderPass)
        needsSwapchain = false
    }

    func finish() {
        guard !finished else { return }
        finished = true
        link?.invalidate()
        // The waits' reports are on the main queue already: the summary comes after them.
        waiter?.drain()
        DispatchQueue.main.async { MainActor.assumeIsolated { self.report() } }
    }

    /// Tears down in order (Vulkan's objects, then the surface they were made on), then prints
    /// the check, the figures and the first ten frames.
    func report() {
        let extent = swapchain.extent
        let sizeMatches = extent.width == UInt32(surface.width) && extent.height == UInt32(surface.height)
        let environment = Dictionary(surface.environment.map { ($0.key, "\($0.value)") }, uniquingKeysWith: { a, _ in a })
        swapchain.destroy()
        renderer.destroy()
        device.destroy()
        surface.close()

        let checked = min(options.frames, log.rows.count)
        let check = log.check(frames: checked)
        let validationErrors = device.validation?.errors ?? 0
        let remade = resizes == 0 || swapchain.generation > 1
        let ok = check.ok && check.presentationTimestamps > 0 && validationErrors == 0 && remade && sizeMatches
        let figures = log.figures(frames: checked)
        print(
            "VulkanLink: \(checked) frames on \(environment["compositor"] ?? "?") (\(device.deviceName), \(device.driverInfo)), "
                + "latency \(options.latency), swapchain made \(swapchain.generation) times for \(resizes) resizes, "
                + "present wait \(waiter != nil ? "offered" : "not offered by the driver")"
                + (options.validate ? ", validation layer on: \(validationErrors) errors" : ""))
        print(
            "  from frame 3: median |target − presented| \(figures.targetError.map(fixed) ?? "—") ms, "
                + "median callback-to-presented \(figures.latency.map(fixed) ?? "—") ms, "
                + "largest |Vulkan − compositor| \(figures.vulkanDifference.map(fixed) ?? "—") ms over \(figures.compared) frames")
        for line in log.table(first: 10) { print("  " + line) }
        print(
            "VulkanLink: check "
                + (ok
                    ? "ok (first delta 0, each delta the time between timestamps or 0 after a stall, targets forward, "
                        + "\(check.presentationTimestamps) timestamps all the compositor's, swapchain made again on each resize"
                        + (options.validate ? ", no validation error)" : ")")
                    : "FAILED (first delta 0: \(check.firstDeltaZero), deltas exact: \(check.deltasExact), targets forward: "
                        + "\(check.targetsForward), timestamps the compositor's: \(check.timestampsFromCompositor) "
                        + "(\(check.presentationTimestamps)), swapchain made again: \(remade), its size the surface's: \(sizeMatches), "
                        + "validation errors: \(validationErrors))"))
        exit(ok ? 0 : 1)
    }

    func fail(_ error: any Error) -> Never {
        print("VulkanLink: \(error)")
        exit(1)
    }
}

func value(of flag: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: flag), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

var options = RunOptions()
options.frames = max(1, value(of: "--frames").flatMap { Int($0) } ?? 240)
options.fullscreenAt = value(of: "--fullscreen-at").flatMap { Int($0) }
options.validate = CommandLine.arguments.contains("--validate")
if let latency = value(of: "--latency") {
    guard let policy = LatencyPolicy(rawValue: latency == "low" ? "lowLatency" : latency) else {
        print("VulkanLink: --latency takes low or throughput, got \(latency)")
        exit(2)
    }
    options.latency = policy
}
DisplaySurface.installSignalHandlers()
do {
    let app = try App(options: options)
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("VulkanLink: \(error)")
    exit(1)
}
