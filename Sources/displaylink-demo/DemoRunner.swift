import Dispatch
import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import Glibc
import PNGImage
import Scenes
import WaylandBackend

/// Runs one scene on one host with a display link: each callback updates the scene, draws it,
/// and records the frame's timing; at the end it writes the report, plot and screenshot, and exits.
@MainActor
final class DemoRunner {
    typealias SceneFactory = @MainActor (Renderer, Int32, Int32) -> Scene

    let host: DisplayHost
    let scene: Scene
    let renderer: Renderer
    let hud: HUDOverlay
    let options: RunOptions
    private var link: DisplayLink?
    private var recorder: FrameRecorder
    private var startedAt: MonotonicInstant?
    private var finishing = false
    /// The first callback after a resume by key logs a line (tests wait for it).
    private var logsResume = false
    private var hudValues = HUDValues()
    private var lastPixels: [UInt8]?
    private var size: (Int32, Int32)

    init(host: DisplayHost, options: RunOptions, makeScene: SceneFactory) throws {
        self.host = host
        self.options = options
        try host.beginFrame()
        let atlas = try GlyphAtlas(pixelSizes: [14, 20])
        renderer = try Renderer(atlas: atlas, glesMajorVersion: host.glesMajorVersion)
        scene = makeScene(renderer, host.width, host.height)
        hud = HUDOverlay(renderer: renderer)
        // Warm-up frames, drawn and finished but never presented: the driver builds its shader
        // and clipping variants now (llvmpipe compiles them with LLVM: seconds under emulation)
        // instead of during the first frames, which would otherwise miss their vblanks.
        let (scene, hud, renderer, showsHUD) = (self.scene, self.hud, self.renderer, options.hud)
        try host.warmUp {
            renderer.beginFrame(width: host.width, height: host.height, clearColor: scene.background)
            scene.draw()
            if showsHUD { hud.draw(HUDValues()) }
            renderer.warmUp()
        }
        host.releaseGL()  // dispatchMain() retires this thread; frames bind on whichever thread runs them
        size = (host.width, host.height)
        recorder = FrameRecorder(expectedFrames: options.expectedFrames)
    }

    /// Chooses the backend, builds the scene and runs until done. Never returns.
    /// The running demo, for signal handling installed before it exists.
    private static var current: DemoRunner?
    private static var signalSources: [DispatchSourceSignal] = []

    /// SIGINT/SIGTERM quit cleanly (restoring the display) from the very start, even while the
    /// backend is still initialising: the handler runs once the main queue runs.
    private static func installSignalHandlers() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler {
                MainActor.assumeIsolated {
                    if let runner = DemoRunner.current { runner.finish(status: 0) } else { exit(0) }
                }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    static func launch(options: RunOptions, makeScene: SceneFactory) -> Never {
        installSignalHandlers()
        let runner: DemoRunner
        do {
            let host = try BackendSelection.makeHost(options: options, title: "displaylink-demo")
            runner = try DemoRunner(host: host, options: options, makeScene: makeScene)
        } catch {
            printError("\(error)")
            exit(1)
        }
        runner.start()
        // Swift may end a value's lifetime at its last use; the runner must live while the main
        // queue runs (release builds otherwise free it, and with it the link's target).
        withExtendedLifetime(runner) { dispatchMain() }
    }

    func start() {
        host.onQuit = { [weak self] in self?.finish(status: 0) }
        host.onFatalError = { [weak self] message in
            printError(message)
            self?.finish(status: 1)
        }
        host.onKey = { [weak self] key in self?.handle(key) }
        DemoRunner.current = self
        let link = DisplayLink(source: host.frameSource, target: self) { runner, link in runner.tick(link) }
        link.preferredFramesPerSecond = options.preferredFPS
        link.presentationHandler = { [weak self] feedback in self?.recorder.apply(feedback) }
        self.link = link
    }

    private func handle(_ key: DemoKey) {
        switch key {
        case .quit:
            printError("key: quit")
            finish(status: 0)
        case .togglePause:
            link?.isPaused.toggle()
            hudValues.paused = link?.isPaused ?? false
            if hudValues.paused { printError("key: paused") } else { logsResume = true }
        case .scroll: scene.toggleScroll()
        }
    }

    private func tick(_ link: DisplayLink) {
        let cpuStart = threadCPUTime()
        let callbackAt = MonotonicInstant.now()
        var encodedAt = callbackAt
        let frame = link.frame
        if startedAt == nil { startedAt = frame.timestamp }
        if logsResume {
            logsResume = false
            printError("key: resumed at refresh \(frame.refreshIndex)")
        }
        hudValues.record(frame)
        let width = host.width, height = host.height
        if (width, height) != size {
            size = (width, height)
            scene.resize(width: width, height: height)
        }
        scene.update(frame)
        let done = isDone(frame)
        do {
            try host.beginFrame()
            renderer.beginFrame(width: width, height: height, clearColor: scene.background)
            scene.draw()
            if options.hud { hud.draw(hudValues) }
            renderer.endFrame()
            encodedAt = MonotonicInstant.now()
            if done && options.screenshot != nil { lastPixels = renderer.readPixels() }
            try host.present(damage: pixelDamage(renderer.damage))
        } catch {
            printError("\(error)")
            finish(status: 1)
            return
        }
        recorder.append(FrameRecord(frame: frame, presented: nil, cpuTime: threadCPUTime() - cpuStart,
                                    callbackAt: callbackAt, encodedAt: encodedAt, submittedAt: MonotonicInstant.now(),
                                    scroll: scene.scrollSample))
        if done { finish(status: 0) }
    }

    private func pixelDamage(_ damage: Renderer.Damage) -> PixelRect? {
        switch damage {
        case .full, .none: return nil  // .none still swaps: the link ticks whether or not anything changed
        case .region(let r): return PixelRect(x: Int32(r.x), y: Int32(r.y), width: Int32(r.width), height: Int32(r.height))
        }
    }

    private func isDone(_ frame: DisplayFrame) -> Bool {
        if let frames = options.frames { return recorder.records.count + 1 >= frames }
        if let seconds = options.seconds, let startedAt { return (frame.timestamp - startedAt).seconds >= seconds }
        return false
    }

    /// Stops the link, waits briefly for the last frames' presentation feedback, writes the
    /// outputs, shuts the host down and exits.
    func finish(status: Int32) {
        guard !finishing else { return }
        finishing = true
        link?.isPaused = true
        waitForFeedback(attempts: 40) { [self] in
            link?.invalidate()
            var exitStatus = status
            if !writeOutputs() { exitStatus = 1 }
            host.shutDown()
            exit(exitStatus)
        }
    }

    private func writeOutputs() -> Bool {
        var ok = true
        let report = FrameReport(backend: host.backendName, scene: scene.name,
                                 environment: host.environment + [("size", .string("\(host.width)x\(host.height)"))],
                                 records: recorder.records, discarded: recorder.discardedCount,
                                 sceneCount: scene.sizeField)
        if let path = options.report {
            if writeFile(path, report.json()) {
                let s = report.summary
                print("report: \(path): \(s.frames) frames, \(s.presented) presented, median interval "
                      + "\(ms(s.medianInterval)) ms, p99 \(ms(s.p99Interval)) ms, median |target−presented| "
                      + "\(ms(s.medianPredictionError)) ms, cpu/frame \(ms(s.cpuPerFrame)) ms, presented per refresh "
                      + "\(ratio(s.presentedPerRefresh)) (after \(FrameReport.startupFrames) start-up frames "
                      + "\(ratio(s.presentedPerRefreshAfterStartup)))")
            } else { ok = false }
        }
        if let path = options.plot {
            do {
                let plot = TimingPlot(report: report, atlas: renderer.atlas)
                try PNGImage.write(path: path, width: plot.width, height: plot.height, rgba: plot.render())
                print("plot: \(path)")
            } catch { printError("\(error)"); ok = false }
        }
        if let path = options.screenshot {
            if let pixels = lastPixels {
                do {
                    try PNGImage.write(path: path, width: Int(size.0), height: Int(size.1), rgba: pixels)
                    print("screenshot: \(path)")
                } catch { printError("\(error)"); ok = false }
            } else {
                printError("no screenshot: the run ended before its last frame was drawn (interrupted?)")
            }
        }
        return ok
    }

    private func waitForFeedback(attempts: Int, then body: @escaping @MainActor () -> Void) {
        // Frames drawn near the end are presented within a few periods; give them 400 ms at most.
        if attempts == 0 || recorder.outstanding == 0 {
            body()
            return
        }
        DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(10)) {
            MainActor.assumeIsolated { self.waitForFeedback(attempts: attempts - 1, then: body) }
        }
    }
}

func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func ratio(_ value: Double?) -> String {
    guard let value else { return "n/a" }
    return String((value * 1000).rounded() / 1000)
}

func ms(_ seconds: Double?) -> String {
    guard let seconds else { return "n/a" }
    return String((seconds * 1_000_000).rounded() / 1000)
}

/// Writes a whole file; says why on failure.
func writeFile(_ path: String, _ text: String) -> Bool {
    guard let file = fopen(path, "w") else {
        printError("cannot write \(path): \(String(cString: strerror(errno)))")
        return false
    }
    defer { fclose(file) }
    return text.utf8CString.withUnsafeBufferPointer { buffer in
        fwrite(buffer.baseAddress, 1, buffer.count - 1, file) == buffer.count - 1
    }
}
