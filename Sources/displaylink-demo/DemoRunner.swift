import Dispatch
import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import EGLGraphics
import GLESRenderer
import Glibc
import Logging
import PNGImage
import Scenes

/// Runs one scene on one display surface with a display link: each callback updates the scene,
/// draws it, and (with --report or --plot) records the frame's timing; at the end it writes the
/// report, plot and screenshot, and exits.
@MainActor
final class DemoRunner {
    typealias SceneFactory = @MainActor (Renderer, Int32, Int32) -> Scene

    let surface: DisplaySurface
    let scene: Scene
    let renderer: Renderer
    let hud: HUDOverlay
    let caption: Caption?
    let options: RunOptions
    /// The options every frame reads, as plain values (a parsed option's getter costs a generic
    /// metadata lookup and a copy each time).
    private let perFrame: (fixedStep: Double, hud: Bool, screenshot: Bool, frames: Int?, seconds: Double?)
    /// Whether the surface is on a private weston this run started (--headless).
    let headlessWeston: Bool
    private var link: DisplayLink?
    /// Per-frame records, kept only when a report or plot is asked for.
    private var recorder: FrameRecorder?
    private var callbackCount = 0
    private var startedAt: MonotonicInstant?
    /// Frames the scene was moved on the virtual clock (RunOptions.fixedStep).
    private var fixedSteps: Int64 = 0
    private var finishing = false
    /// The first callback after a resume by key logs a line (tests wait for it).
    private var logsResume = false
    private var hudValues = HUDValues()
    /// When the link was created, and when its last callback began (for `--seconds` runs that the
    /// display stops pacing: see ``checkDeadline()``).
    private var linkStartedAt: MonotonicInstant?
    private var lastCallbackAt: MonotonicInstant?
    /// How the run ended (set by ``finish(status:reason:)``).
    private var ending: RunEnding?
    /// No callback for this long after `--seconds` is up: the link stalled, the run ends without
    /// waiting for one (the Wayland backend's stall timeout too).
    static let stallTimeout = Nanoseconds(500_000_000)
    private var lastPixels: [UInt8]?
    private var size: (Int32, Int32)
    /// Whether the scene shows the newest pointer or touch position (the follow scene).
    private let followsInput: Bool
    /// Input events that moved the marker, with a report or plot (ring sized at the start).
    private var inputRing: InputRing?
    /// The events so far, and the newest position (points) with its sequence: the next frame
    /// takes it when its callback begins.
    private var inputCount = 0
    private var latestInput: (sequence: Int, x: Double, y: Double)?

    init(surface: DisplaySurface, options: RunOptions, headlessWeston: Bool, makeScene: SceneFactory) throws {
        self.surface = surface
        self.options = options
        perFrame = (options.fixedStep, options.hud, options.screenshot != nil, options.frames, options.seconds)
        self.headlessWeston = headlessWeston
        try surface.beginFrame()
        let atlas = try GlyphAtlas(pixelSizes: [14, 20])
        renderer = try Renderer(atlas: atlas, glesMajorVersion: surface.glesMajorVersion)
        scene = makeScene(renderer, surface.width, surface.height)
        hud = HUDOverlay(renderer: renderer)
        caption = Caption(options.caption, renderer: renderer)
        // Warm-up frames, drawn and finished but never presented (the surface does it: shader
        // variants built now, on DRM every scan-out buffer registered); returns with the
        // context released; frames bind it on the thread that runs them (the main thread, in
        // DisplaySurface.runMainLoop()).
        let (scene, hud, renderer, showsHUD, caption) = (self.scene, self.hud, self.renderer, options.hud, self.caption)
        let (width, height) = (surface.width, surface.height)
        try surface.prepare {
            renderer.beginFrame(width: width, height: height, clearColor: scene.background)
            scene.draw()
            caption?.draw(renderer, height: height)  // its glyphs rasterised now, not in the first frames
            if showsHUD { hud.draw(HUDValues()) }
            renderer.warmUp()
        }
        size = (surface.width, surface.height)
        followsInput = scene.followsInput
        if options.report != nil || options.plot != nil {
            recorder = FrameRecorder(expectedFrames: options.expectedFrames)
            // Room for a mouse reporting at 1 kHz while frames come at 120 Hz; the oldest make
            // room beyond that (the report counts them).
            if followsInput { inputRing = InputRing(capacity: min(1 << 20, max(4096, options.expectedFrames * 8))) }
        }
    }

    /// The running demo, for signal handling installed before it exists.
    private static var current: DemoRunner?

    /// Opens the display surface the options ask for (with --headless on a private weston that
    /// the surface stops when it closes).
    private static func openSurface(options: RunOptions) throws -> (DisplaySurface, headless: Bool) {
        var mode: DisplaySurface.ModeRequest?
        if let text = options.mode {
            mode = try DisplaySurface.ModeRequest(parsing: text)
        }
        var surfaceOptions = DisplaySurface.Options(
            title: "displaylink-demo", appID: "org.displaylink.demo",
            width: options.size.width, height: options.size.height,
            devicePath: options.device, mode: mode)
        surfaceOptions.kmsAPI = options.kmsAPI
        surfaceOptions.waylandCommitTiming = options.commitTiming
        surfaceOptions.waylandFifo = options.fifo
        surfaceOptions.latency = options.startsLate ? .lowLatency : .throughput
        surfaceOptions.waylandCommitTimingWithoutVsync = options.commitTimingWithoutVsync
        surfaceOptions.backend = options.backend == .auto && options.headless ? .wayland : options.backend
        guard options.headless else { return (try DisplaySurface(options: surfaceOptions), false) }
        let weston = try HeadlessWeston(width: Int(max(options.size.width, 640)), height: Int(max(options.size.height, 480)))
        surfaceOptions.waylandSocket = weston.socketPath
        do {
            let surface = try DisplaySurface(options: surfaceOptions)
            surface.addCloseHandler { weston.stop() }
            return (surface, true)
        } catch {
            weston.stop()
            throw error
        }
    }

    /// Chooses the backend, builds the scene and runs until done. Never returns.
    static func launch(options: RunOptions, makeScene: SceneFactory) -> Never {
        // The library's log, only when asked for (before any logger exists): its decisions are at
        // debug, so without this nothing is printed (swift-log's default handler prints info and up).
        if let level = options.logLevel.flatMap(Logger.Level.init(rawValue:)) {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        // SIGINT/SIGTERM quit cleanly from the very start, even while the surface is still
        // opening (handled once the main queue runs): the surface restores the display, then the
        // runner writes its outputs and exits.
        DisplaySurface.installSignalHandlers { _ in
            if let runner = DemoRunner.current { runner.finish(status: 0, reason: .signal) } else { exit(0) }
        }
        let runner: DemoRunner
        do {
            let (surface, headless) = try openSurface(options: options)
            do {
                runner = try DemoRunner(surface: surface, options: options, headlessWeston: headless, makeScene: makeScene)
            } catch {
                surface.close()
                throw error
            }
        } catch let error as DisplaySurfaceError {
            if case .noDisplay = error {
                printError("\(error)\nUse --headless to start a private weston compositor for this run.")
            } else {
                printError("\(error)")
            }
            exit(1)
        } catch {
            printError("\(error)")
            exit(1)
        }
        runner.start()
        // Swift may end a value's lifetime at its last use; the runner must live while the main
        // queue runs (release builds otherwise free it, and with it the link's target).
        withExtendedLifetime(runner) { DisplaySurface.runMainLoop() }
    }

    /// `frame` on the virtual clock of RunOptions.fixedStep: the n-th frame at the first frame's
    /// timestamp plus n steps, aimed one step later, a delta of one step (0 for the first).
    private func virtualFrame(_ frame: DisplayFrame) -> DisplayFrame {
        let step = Nanoseconds(seconds: perFrame.fixedStep)
        var virtual = frame
        virtual.timestamp = (startedAt ?? frame.timestamp) + Nanoseconds(step.value &* fixedSteps)
        virtual.targetTimestamp = virtual.timestamp + step
        virtual.duration = step
        virtual.delta = fixedSteps == 0 ? Nanoseconds(0) : step
        fixedSteps += 1
        return virtual
    }

    func start() {
        surface.onCloseRequest = { [weak self] in self?.finish(status: 0, reason: .close) }
        surface.onError = { [weak self] error in
            printError("\(error)")
            self?.finish(status: 1, reason: .error)
        }
        surface.onKey = { [weak self] key in self?.handle(key) }
        if followsInput { surface.onInput = { [weak self] event in self?.handle(event) } }
        DemoRunner.current = self
        let link = DisplayLink(source: surface, target: self) { runner, link in runner.tick(link) }
        link.preferredFramesPerSecond = options.preferredFPS
        if recorder != nil {
            link.presentationHandler = { [weak self] feedback in self?.recorder?.apply(feedback) }
        }
        self.link = link
        linkStartedAt = MonotonicInstant.now()
        printError("running: \(scene.name) on \(surface.backend.rawValue)")  // tests wait for this line
        // `--seconds` is wall-clock time: a timer on the main queue ends the run even when the
        // display stops calling back (compositor stopped, window hidden).
        if let seconds = options.seconds { scheduleDeadlineCheck(in: Nanoseconds(seconds: seconds)) }
    }

    private func scheduleDeadlineCheck(in delay: Nanoseconds) {
        let nanos = Int(clamping: max(delay.value, 1_000_000))
        DispatchQueue.main.asyncAfter(deadline: .now() + .nanoseconds(nanos)) { [weak self] in
            MainActor.assumeIsolated { self?.checkDeadline() }
        }
    }

    /// The `--seconds` timer. The run's time counts from the first frame's timestamp (from the
    /// link's start while no frame came). While frames come, the frame that reaches the time ends
    /// the run, as before (with its screenshot); when the time is up and no callback came for
    /// ``stallTimeout``, the run ends here and the report says the link stalled and since when.
    /// So a run ends at most ``stallTimeout`` after its time, whatever the display does.
    private func checkDeadline() {
        guard !finishing, let seconds = options.seconds, let linkStartedAt else { return }
        let now = MonotonicInstant.now()
        let deadline = (startedAt ?? linkStartedAt) + Nanoseconds(seconds: seconds)
        if now < deadline {
            scheduleDeadlineCheck(in: deadline - now)
            return
        }
        if link?.isPaused == true {
            finish(status: 0, reason: .seconds)  // paused by key: no callbacks expected
            return
        }
        let quietSince = lastCallbackAt ?? linkStartedAt
        let quiet = now - quietSince
        if quiet < DemoRunner.stallTimeout {
            scheduleDeadlineCheck(in: DemoRunner.stallTimeout - quiet)
            return
        }
        printError(
            "stalled: no frame callback for \(ms(quiet.seconds)) ms (since \(quietSince)); "
                + "ending the run at its time (\(seconds) s)")
        finish(status: 0, reason: .seconds, stallBeganAt: quietSince)
    }

    private func handle(_ key: KeyEvent) {
        switch key.symbol {
        case .q, .escape:
            printError("key: quit")
            finish(status: 0, reason: .key)
        case .space:
            link?.isPaused.toggle()
            hudValues.paused = link?.isPaused ?? false
            if hudValues.paused { printError("key: paused") } else { logsResume = true }
        case .returnKey, .keypadEnter:
            scene.toggleScroll()
        default:
            break
        }
    }

    /// A pointer or touch event: the newest position for the next frame (follow scene).
    private func handle(_ event: InputEvent) {
        guard let (kind, point) = InputRecord.position(of: event) else { return }
        inputCount += 1
        latestInput = (inputCount, point.x, point.y)
        inputRing?.append(
            InputRecord(sequence: inputCount, kind: kind, x: point.x, y: point.y, time: event.time, deliveredAt: MonotonicInstant.now()))
    }

    private func tick(_ link: DisplayLink) {
        let cpuStart = recorder != nil ? threadCPUTime() : 0  // a system call: only when recorded
        let callbackAt = MonotonicInstant.now()
        lastCallbackAt = callbackAt
        // The input this frame shows: every event delivered before its callback began.
        let input = latestInput
        if let input {
            let scale = surface.scale
            scene.follow(x: input.x * scale, y: input.y * scale)
        }
        var encodedAt = callbackAt
        let frame = link.frame
        if startedAt == nil { startedAt = frame.timestamp }
        if logsResume {
            logsResume = false
            printError("key: resumed at refresh \(frame.refreshIndex)")
        }
        hudValues.record(frame)
        let width = surface.width, height = surface.height
        if (width, height) != size {
            size = (width, height)
            scene.resize(width: width, height: height)
        }
        scene.update(perFrame.fixedStep > 0 ? virtualFrame(frame) : frame)
        callbackCount += 1
        let done = isDone(frame)
        do {
            try surface.beginFrame()
            renderer.beginFrame(width: width, height: height, clearColor: scene.background)
            scene.draw()
            caption?.draw(renderer, height: height)
            if perFrame.hud { hud.draw(hudValues) }
            renderer.endFrame()
            encodedAt = MonotonicInstant.now()
            if done && perFrame.screenshot { lastPixels = try surface.readPixels() }
            try surface.present(damage: pixelDamage(renderer.damage))
        } catch {
            printError("\(error)")
            finish(status: 1, reason: .error)
            return
        }
        recorder?.append(
            FrameRecord(
                frame: frame, presented: nil, cpuTime: threadCPUTime() - cpuStart,
                callbackAt: callbackAt, encodedAt: encodedAt, submittedAt: MonotonicInstant.now(),
                scroll: scene.scrollSample, inputSequence: input?.sequence))
        if done { finish(status: 0, reason: perFrame.frames != nil ? .frames : .seconds) }
    }

    private func pixelDamage(_ damage: Renderer.Damage) -> PixelRect? {
        switch damage {
        case .full, .none: return nil  // .none still swaps: the link ticks whether or not anything changed
        case .region(let r): return PixelRect(x: Int32(r.x), y: Int32(r.y), width: Int32(r.width), height: Int32(r.height))
        }
    }

    private func isDone(_ frame: DisplayFrame) -> Bool {
        if let frames = perFrame.frames { return callbackCount >= frames }
        if let seconds = perFrame.seconds, let startedAt { return (frame.timestamp - startedAt).seconds >= seconds }
        return false
    }

    /// Stops the link, waits briefly for the last frames' presentation feedback, writes the
    /// outputs, closes the surface and exits.
    func finish(status: Int32, reason: RunEnding.Reason, stallBeganAt: MonotonicInstant? = nil) {
        guard !finishing else { return }
        finishing = true
        ending = RunEnding(
            reason: reason, endedAt: MonotonicInstant.now(), linkStartedAt: linkStartedAt,
            lastCallbackAt: lastCallbackAt, stallBeganAt: stallBeganAt)
        link?.isPaused = true
        waitForFeedback(attempts: 40) { [self] in
            link?.invalidate()
            var exitStatus = status
            if !writeOutputs() { exitStatus = 1 }
            surface.close()
            exit(exitStatus)
        }
    }

    /// The report's environment: the surface's facts, then the demo's own.
    private var environment: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = surface.environment.map { entry in
            switch entry.value {
            case .string(let s): (entry.key, .string(s))
            case .int(let i): (entry.key, .int(i))
            case .number(let d): (entry.key, .number(d))
            case .bool(let b): (entry.key, .bool(b))
            case .list(let names): (entry.key, .array(names.map { .string($0) }))
            case .unknown: (entry.key, .null)
            }
        }
        if surface.backend == .wayland { fields.append(("headless_weston", .bool(headlessWeston))) }
        fields.append(("size", .string("\(surface.width)x\(surface.height)")))
        return fields
    }

    private func writeOutputs() -> Bool {
        var ok = true
        let report = FrameReport(
            backend: surface.backend.rawValue, scene: scene.name, environment: environment,
            records: recorder?.records ?? [], discarded: recorder?.discardedCount ?? 0,
            sceneCount: scene.sizeField, ending: ending,
            input: inputRing.map { InputLatencyReport(ring: $0, frames: recorder?.records ?? []) })
        if let path = options.report {
            if writeFile(path, report.json()) {
                let s = report.summary
                print(
                    "report: \(path): \(s.frames) frames, \(s.presented) presented, median interval "
                        + "\(ms(s.medianInterval)) ms, p99 \(ms(s.p99Interval)) ms, median |target−presented| "
                        + "\(ms(s.medianPredictionError)) ms, median latency \(ms(s.medianLatency)) ms, p99 \(ms(s.p99Latency)) ms, "
                        + "cpu/frame \(ms(s.cpuPerFrame)) ms, presented per refresh "
                        + "\(ratio(s.presentedPerRefresh))\(s.refreshShare.map { " = \($0)" } ?? "") (after "
                        + "\(FrameReport.startupFrames) start-up frames \(ratio(s.presentedPerRefreshAfterStartup))"
                        + "\(s.refreshShareAfterStartup.map { " = \($0)" } ?? ""))")
                if let input = report.input { print(input.line) }
            } else {
                ok = false
            }
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
        if attempts == 0 || surface.isClosed || (recorder?.outstanding ?? 0) == 0 {
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
