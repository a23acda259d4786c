import Dispatch
import DisplayLinkCore
import EGLGraphics
import Glibc
import WaylandBackend

/// Runs one scene on one host with a display link: the callback updates the scene, draws, and
/// records timing; at the end it writes the report and exits.
@MainActor
final class DemoRunner {
    let host: DisplayHost
    let scene: DemoScene
    let options: RunOptions
    private var link: DisplayLink?
    private var recorder: FrameRecorder
    private var startedAt: MonotonicInstant?
    private var finishing = false
    private var signalSources: [DispatchSourceSignal] = []
    private var fpsWindow: (start: MonotonicInstant, frames: Int) = (.zero, 0)
    private var hud = HUDText(fps: 0, deltaMilliseconds: 0, missed: 0, provenance: .frameCallbackEstimate, paused: false)

    init(host: DisplayHost, scene: DemoScene, options: RunOptions) {
        self.host = host
        self.scene = scene
        self.options = options
        recorder = FrameRecorder(expectedFrames: options.expectedFrames)
    }

    /// Chooses the backend, builds the scene and runs until done. Never returns.
    static func launch(options: RunOptions, makeScene: () -> DemoScene) -> Never {
        let host: DisplayHost
        do {
            host = try BackendSelection.makeHost(options: options, title: "displaylink-demo")
        } catch {
            printError("\(error)")
            exit(1)
        }
        let runner = DemoRunner(host: host, scene: makeScene(), options: options)
        runner.start()
        dispatchMain()
    }

    func start() {
        host.onQuit = { [weak self] in self?.finish(status: 0) }
        host.onFatalError = { [weak self] message in
            printError(message)
            self?.finish(status: 1)
        }
        host.onKey = { [weak self] key in self?.handle(key) }
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { [weak self] in
                MainActor.assumeIsolated { self?.finish(status: 0) }
            }
            source.resume()
            signalSources.append(source)
        }
        let link = DisplayLink(source: host.frameSource, target: self) { runner, link in runner.tick(link) }
        link.preferredFramesPerSecond = options.preferredFPS
        link.presentationHandler = { [weak self] feedback in self?.recorder.apply(feedback) }
        self.link = link
    }

    private func handle(_ key: DemoKey) {
        switch key {
        case .quit: finish(status: 0)
        case .togglePause:
            link?.isPaused.toggle()
            hud.paused = link?.isPaused ?? false
        case .scroll: scene.handle(.scroll)
        }
    }

    private func tick(_ link: DisplayLink) {
        let cpuStart = threadCPUTime()
        let frame = link.frame
        if startedAt == nil {
            startedAt = frame.timestamp
            fpsWindow = (frame.timestamp, 0)
        }
        updateHUD(frame)
        scene.update(frame)
        do {
            try host.beginFrame()
            let damage = scene.draw(width: host.width, height: host.height, hud: hud)
            try host.present(damage: damage)
        } catch {
            printError("\(error)")
            finish(status: 1)
            return
        }
        recorder.append(FrameRecord(frame: frame, presented: nil, cpuTime: threadCPUTime() - cpuStart,
                                    scroll: scene.scrollSample))
        if isDone(frame) { finish(status: 0) }
    }

    private func updateHUD(_ frame: DisplayFrame) {
        fpsWindow.frames += 1
        let span = (frame.timestamp - fpsWindow.start).seconds
        if span >= 0.5 {
            hud.fps = Double(fpsWindow.frames) / span
            fpsWindow = (frame.timestamp, 0)
        }
        hud.deltaMilliseconds = frame.deltaTime * 1000
        hud.missed += frame.missedFrames
        hud.provenance = frame.provenance
    }

    private func isDone(_ frame: DisplayFrame) -> Bool {
        if let frames = options.frames { return recorder.records.count >= frames }
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
            if let path = options.report {
                let report = FrameReport(backend: host.backendName, scene: scene.name,
                                         environment: host.environment + [("size", .string("\(host.width)x\(host.height)"))],
                                         records: recorder.records, discarded: recorder.discardedCount,
                                         sceneCount: scene.sizeField)
                if !writeFile(path, report.json()) { exitStatus = 1 }
                let s = report.summary
                print("report: \(path): \(s.frames) frames, \(s.presented) presented, median interval "
                      + "\(ms(s.medianInterval)) ms, median |target−presented| \(ms(s.medianPredictionError)) ms, "
                      + "cpu/frame \(ms(s.cpuPerFrame)) ms")
            }
            host.shutDown()
            exit(exitStatus)
        }
    }

    private func waitForFeedback(attempts: Int, then body: @escaping @MainActor () -> Void) {
        // Frames drawn near the end are presented within a few periods; give them 400 ms at most.
        if attempts == 0 || recorder.outstanding == 0 || options.report == nil {
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
