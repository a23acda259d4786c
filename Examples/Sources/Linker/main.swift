// Linker: the seed's PWDisplayLinker, a small wrapper that owns a display link and tells its
// delegate the time since the previous frame, zero on the first frame and on the first frame after
// it becomes active again. Here it pauses and resumes twice and prints the deltas around each
// start, next to the link's own deltaTime (the library does the same: 0 after a resume).
//
//   Linker [--frames N]
import Dispatch
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc

/// The seed's wrapper: the delta from consecutive timestamps, zero after each (re)start.
@MainActor
final class DisplayLinker {
    weak var delegate: DisplayUpdateReceiver?
    private(set) var link: DisplayLink?
    private var previousTimestamp = 0.0
    private var nextDeltaIsZero = true

    init(source: some FrameSource, delegate: DisplayUpdateReceiver) {
        self.delegate = delegate
        link = DisplayLink(source: source, target: self) { linker, link in linker.updated(link) }
        link?.stallPolicy = .realGap  // zeros only where the seed has them: start and resume
    }

    /// Inactive: no callbacks (the display stops refreshing for us). Active again: delta 0 next.
    var isActive: Bool {
        get { link.map { !$0.isPaused } ?? false }
        set {
            if newValue && !isActive { nextDeltaIsZero = true }
            link?.isPaused = !newValue
        }
    }

    private func updated(_ link: DisplayLink) {
        let delta = nextDeltaIsZero ? 0 : link.timestamp - previousTimestamp
        nextDeltaIsZero = false
        previousTimestamp = link.timestamp
        delegate?.displayWillUpdate(deltaTime: delta)
    }
}

@MainActor
final class App: DisplayUpdateReceiver {
    let surface: DisplaySurface
    let renderer: Renderer
    let layer: Renderer.LayerID
    var linker: DisplayLinker?
    let frameLimit: Int
    var position = (x: 0.0, y: 0.0)
    var deltas: [(wrapper: Double, link: Double)] = []
    var starts = [0]  // the frames that follow a start or a resume

    init(frames: Int) throws {
        frameLimit = frames
        surface = try DisplaySurface(options: .init(title: "Linker"))
        try surface.beginFrame()
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14]), glesMajorVersion: surface.glesMajorVersion)
        layer = renderer.makeLayer(reserving: 1)
        try surface.prepare { draw() }  // a warm-up frame, never shown
        surface.onError = { error in
            print("Linker: \(error)"); exit(1)
        }
        linker = DisplayLinker(source: surface, delegate: self)
    }

    func draw() {
        renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.1, 0.1, 0.12))
        renderer.addRect(layer, Rect(x: Float(position.x), y: Float(position.y), width: 20, height: 20), color: RGBA(0.2, 0.4, 1))
        renderer.endFrame()
    }

    func displayWillUpdate(deltaTime: Double) {
        deltas.append((deltaTime, linker?.link?.deltaTime ?? -1))
        // The seed's view: 50 points per second across, 100 down (wrapping round the screen).
        position.x = (position.x + 50 * deltaTime).truncatingRemainder(dividingBy: Double(surface.width))
        position.y = (position.y + 100 * deltaTime).truncatingRemainder(dividingBy: Double(surface.height))
        do {
            try surface.beginFrame()
            draw()
            try surface.present()
        } catch {
            print("Linker: \(error)")
            exit(1)
        }
        if deltas.count == frameLimit { return finish() }
        if deltas.count % (frameLimit / 3) == 0 && starts.count < 3 {
            // Becomes inactive for a moment (as an app in the background), then active again.
            linker?.isActive = false
            starts.append(deltas.count)
            Task {
                try? await Task.sleep(for: .milliseconds(200))
                self.linker?.isActive = true
            }
        }
    }

    func finish() {
        linker?.link?.invalidate()
        surface.close()
        let ms = { (d: Double) in "\((d * 10_000).rounded() / 10)" }
        let shown = starts.map { start in deltas[start..<min(start + 3, deltas.count)].map { ms($0.wrapper) }.joined(separator: " ") }
        // Checks: the wrapper's delta is 0 exactly on the frames after a start or resume and
        // positive elsewhere, and always equals the library's link.deltaTime.
        let ok = deltas.indices.allSatisfy { i in
            (starts.contains(i) ? deltas[i].wrapper == 0 : deltas[i].wrapper > 0) && abs(deltas[i].wrapper - deltas[i].link) < 1e-6
        }
        print(
            "Linker: \(deltas.count) frames on \(surface.backend), \(starts.count - 1) pauses; delta ms after start and "
                + "each resume: [\(shown.joined(separator: " | "))]; check "
                + (ok ? "ok (zero after start and resume, = link.deltaTime)" : "FAILED"))
        exit(ok ? 0 : 1)
    }
}

var frameLimit = 60
if let i = CommandLine.arguments.firstIndex(of: "--frames"), i + 1 < CommandLine.arguments.count {
    frameLimit = max(3, Int(CommandLine.arguments[i + 1]) ?? frameLimit)
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(frames: frameLimit)
    withExtendedLifetime(app) { dispatchMain() }
} catch {
    print("Linker: \(error)")
    exit(1)
}
