// Signage: an image carousel that slides on targetTimestamp, a ticker clipped to a band, a clock
// hand drawn as a stroke and turned by its layer's transform, and a text field that keys type
// into. Every moving thing is a function of the frame's targetTimestamp (Board.swift), so it
// moves at the same speed at any refresh rate and a late frame shows where things are by then.
//
//   Signage [--frames N]                      a Wayland window, or a DRM/KMS output without a compositor
//   Signage --golden DIR [--frames N]         offscreen on virtual time (60 Hz): each frame as DIR/frame-<µs>.png
//
// Its check (printed last, exit status 1 if it fails) asserts what holds at any speed: the first
// delta is 0, targets only go forward, and the carousel and the hand never move backwards.
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
    var check = (carousel: -Double.infinity, hand: -Double.infinity, wentBack: false)

    init(golden: String?, frames: Int) throws {
        self.golden = golden
        frameLimit = frames
        var options = DisplaySurface.Options(title: "Signage", width: 640, height: 400)
        if golden != nil { options.backend = .offscreen }
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
        let start = self.start ?? frame.targetTimestamp
        self.start = start
        let t = (frame.targetTimestamp - start).seconds
        // What the check asserts: positions taken from target times, which only go forward.
        let carousel = Board.carouselPosition(at: t), hand = Board.handAngle(at: t)
        if carousel < check.carousel || hand < check.hand { check.wentBack = true }
        (check.carousel, check.hand) = (carousel, hand)
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
        let ok = first.deltaTime == 0 && frames.allSatisfy { $0.deltaTime >= 0 } && forward && !check.wentBack
        print(
            "Signage: \(frames.count) frames on \(surface.backend), targets \(first.targetTimestamp.seconds)…"
                + "\(last.targetTimestamp.seconds) s, carousel at poster \(rounded(check.carousel, 3)), "
                + "hand at \(rounded(check.hand * 180 / .pi, 1))°\(golden.map { ", frames in \($0)" } ?? ""); check "
                + (ok
                    ? "ok (first delta 0, deltas ≥ 0, targets forward, carousel and hand never back)"
                    : "FAILED (first delta \(first.deltaTime), targets forward: \(forward), moved back: \(check.wentBack))"))
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
if let golden, mkdir(golden, 0o755) != 0 && errno != EEXIST {
    print("Signage: cannot create \(golden): \(String(cString: strerror(errno)))")
    exit(1)
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(golden: golden, frames: frameLimit)
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("Signage: \(error)")
    exit(1)
}
