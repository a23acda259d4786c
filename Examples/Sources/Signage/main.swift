// Signage: an image carousel that slides on targetTimestamp, a ticker clipped to a band, a clock
// hand drawn as a stroke and turned by its layer's transform, and a text field that keys type
// into. Every moving thing is a function of the frame's targetTimestamp (Board.swift), so it
// moves at the same speed at any refresh rate and a late frame shows where things are by then.
//
//   Signage [--frames N]                      a Wayland window, or a DRM/KMS output without a compositor
//   Signage --golden DIR [--frames N] [--refresh HZ]
//                                             offscreen on virtual time (60 Hz unless given): each frame as
//                                             DIR/frame-<µs>.png, the time since the virtual clock's start
//
// Its check (printed last, exit status 1 if it fails) asserts what holds at any speed: the first
// delta is 0, each later delta is exactly the time between the two frames' timestamps (or 0 after
// a stall), and targets only go forward.
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc

@MainActor
final class App: DisplayUpdateReceiver {
    let surface: DisplaySurface
    let renderer: Renderer
    let board: Board
    let golden: String?
    let frameLimit: Int
    var link: DisplayLink?
    var text = ""
    var start: MonotonicInstant?
    var frames: [DisplayFrame] = []

    init(golden: String?, refresh: Int, frames: Int) throws {
        self.golden = golden
        frameLimit = frames
        var options = DisplaySurface.Options(title: "Signage", width: 640, height: 400)
        if golden != nil {
            options.backend = .offscreen
            options.offscreen = .init(refreshRate: .hertz(refresh))
        }
        surface = try DisplaySurface(options: options)
        try surface.beginFrame()  // the GL context is current: build the renderer
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [16, 20]), glesMajorVersion: surface.glesMajorVersion)
        try renderer.setScale(surface.scale)  // points at the display's pixels per point
        board = try Board(renderer: renderer, width: 640, height: 400)
        try surface.prepare { draw(at: 0) }  // a warm-up frame, never shown
        surface.onScaleChange = { [unowned self] scale in
            do { try renderer.setScale(scale) } catch { fail(error) }
        }
        surface.onInput = { [unowned self] event in
            guard case .key(let key) = event.kind, key.phase != .released else { return }
            if key.symbol == .backspace {
                if !text.isEmpty { text.removeLast() }
            } else if !key.text.isEmpty, key.text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) {
                text += key.text
            }
        }
        surface.onError = { [unowned self] error in fail(error) }
        link = DisplayLink(source: surface, receiver: self)
    }

    /// Draws the board `t` seconds after the first frame. Golden frames are drawn whole (buffer
    /// age 0), so each depends on its time alone.
    func draw(at t: Double) {
        renderer.beginFrame(
            width: surface.width, height: surface.height, clearColor: RGBA(0.07, 0.08, 0.11), bufferAge: golden != nil ? 0 : nil)
        board.draw(at: t, text: text, caretOn: t.truncatingRemainder(dividingBy: 1) < 0.5)
        renderer.endFrame()
    }

    func displayWillUpdate(_ frame: DisplayFrame) {
        // Golden frames: time since the virtual clock's start, so that runs at any rate draw the
        // same picture for the same time.
        let start = self.start ?? (golden != nil ? surface.options.offscreen.startTime : frame.targetTimestamp)
        self.start = start
        let t = (frame.targetTimestamp - start).seconds
        do {
            try surface.beginFrame()
            draw(at: t)
            if let golden {
                let micros = (frame.targetTimestamp - surface.options.offscreen.startTime).value / 1000
                try surface.screenshot(to: golden + "/frame-" + String(1_000_000_000 + micros).dropFirst() + ".png")
            }
            try surface.present()
        } catch {
            fail(error)
        }
        frames.append(frame)
        if frames.count == frameLimit { finish() }
    }

    func finish() {
        link?.invalidate()
        surface.close()
        let first = frames[0], last = frames[frames.count - 1]
        let forward = zip(frames, frames.dropFirst()).allSatisfy { $1.targetTimestamp > $0.targetTimestamp }
        // A delta is the time between the two timestamps, or 0 after a stall (the link's default
        // stall policy: a frame that comes after a long gap does not jump everything ahead).
        let deltas = zip(frames, frames.dropFirst()).allSatisfy { $1.delta == $1.timestamp - $0.timestamp || $1.delta == .zero }
        let ok = first.delta == .zero && deltas && forward
        let t = (last.targetTimestamp - first.targetTimestamp).seconds
        print(
            "Signage: \(frames.count) frames on \(surface.backend), targets \(first.targetTimestamp.seconds)…"
                + "\(last.targetTimestamp.seconds) s, carousel at poster \(rounded(Board.carouselPosition(at: t), 3)), "
                + "hand at \(rounded(Board.handAngle(at: t) * 180 / .pi, 1))°\(golden.map { ", frames in \($0)" } ?? ""); check "
                + (ok
                    ? "ok (first delta 0, each delta the time between timestamps or 0 after a stall, targets forward)"
                    : "FAILED (first delta \(first.deltaTime), deltas exact: \(deltas), targets forward: \(forward))"))
        exit(ok ? 0 : 1)
    }

    func fail(_ error: any Error) -> Never {
        print("Signage: \(error)")
        exit(1)
    }
}

/// `value` to `decimals` places, for the summary line.
func rounded(_ value: Double, _ decimals: Int) -> Double {
    let scale = Double((0..<decimals).reduce(1) { r, _ in r * 10 })
    return (value * scale).rounded() / scale
}

func value(of flag: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: flag), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

let golden = value(of: "--golden")
let frameLimit = max(1, value(of: "--frames").flatMap { Int($0) } ?? 600)
guard let refresh = Int(value(of: "--refresh") ?? "60"), refresh > 0 else {
    print("Signage: --refresh takes whole hertz, got \(value(of: "--refresh") ?? "")")
    exit(2)
}
if let golden, mkdir(golden, 0o755) != 0 && errno != EEXIST {
    print("Signage: cannot create \(golden): \(String(cString: strerror(errno)))")
    exit(1)
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(golden: golden, refresh: refresh, frames: frameLimit)
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("Signage: \(error)")
    exit(1)
}
