// GoldenFrames: about 50 rounded views moving across an offscreen surface on virtual time, each
// frame a pure function of the display link's targetTimestamp, written as a PNG file named by
// that time. The same program at 30 Hz and at 60 Hz draws the same picture wherever their times
// meet, and two runs give the same files byte for byte (Scripts/check-golden-frames checks both).
//
//   GoldenFrames --out DIR [--refresh HZ] [--frames N]     (HZ: whole hertz, or N/D: N per D seconds)
//   GoldenFrames --primitives DIR                          (one frame per renderer primitive: Primitives.swift)
//
// The views move in closed form (p = p0 + v·t + a·t²/2 from a seeded start), wrap around the edges
// and are recycled at new seeded places when their lifetime ends: where view i is at time t comes
// from i and t alone, never from the frames before, so a frame skipped at 30 Hz changes nothing.
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc

/// The seeded motion of the views: view `i` at time `t`, from `i` and `t` alone.
enum Motion {
    static let count = 48
    static let seed: UInt64 = 0x601D_F4A3

    /// View `i`'s centre and colour at `t` seconds on a `width`×`height` surface.
    static func view(_ i: Int, at t: Double, width: Double, height: Double) -> (x: Double, y: Double, color: RGBA) {
        var setup = Draws(key: seed ^ UInt64(i))
        let lifetime = setup.next(1.5, 4)
        // Each view is at its own point of its life at t = 0, so recycling is spread over time.
        let age = t + setup.next(0, lifetime)
        let generation = (age / lifetime).rounded(.down)
        let lived = age - generation * lifetime
        var start = Draws(key: seed ^ UInt64(i) << 32 ^ UInt64(bitPattern: Int64(generation)) << 8)
        let (x0, y0) = (start.next(0, width), start.next(0, height))
        let angle = start.next(0, 2 * .pi), speed = start.next(40, 220)
        let (ax, ay) = (start.next(-30, 30), 90.0)
        let color = RGBA(Float(start.next(0.3, 1)), Float(start.next(0.3, 1)), Float(start.next(0.3, 1)))
        let x = x0 + speed * cos(angle) * lived + ax * lived * lived / 2
        let y = y0 + speed * sin(angle) * lived + ay * lived * lived / 2
        return (wrap(x, width), wrap(y, height), color)
    }

    /// `value` wrapped into -20 … `extent` + 20 (a view leaving one edge comes in at the other).
    static func wrap(_ value: Double, _ extent: Double) -> Double {
        let span = extent + 40
        let shifted = (value + 20).truncatingRemainder(dividingBy: span)
        return (shifted < 0 ? shifted + span : shifted) - 20
    }
}

/// Numbers drawn from a key: the k-th draw is a hash of the key and k (Murmur3's 64-bit
/// finaliser), so the same key gives the same numbers whatever was drawn before.
struct Draws {
    let key: UInt64
    var drawn: UInt64 = 0

    /// Uniform in `low` ..< `high`.
    mutating func next(_ low: Double, _ high: Double) -> Double {
        drawn += 1
        var z = key &+ drawn &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        z = (z ^ (z >> 33)) &* 0xC4CE_B9FE_1A85_EC53
        z ^= z >> 33
        return low + (high - low) * Double(z >> 11) / Double(UInt64(1) << 53)
    }
}

/// Draws each frame at its target time and writes it to `directory`, for `frameLimit` frames.
@MainActor
final class GoldenFrameWriter: DisplayUpdateReceiver {
    let directory: String
    let frameLimit: Int
    let surface: DisplaySurface
    let renderer: Renderer
    let layer: Renderer.LayerID
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var written: [String] = []

    init(directory: String, rate: DisplaySurface.OffscreenOptions, frames: Int) throws {
        self.directory = directory
        frameLimit = frames
        var options = DisplaySurface.Options(title: "GoldenFrames", width: 320, height: 240, backend: .offscreen)
        options.offscreen = rate
        surface = try DisplaySurface(options: options)
        try surface.beginFrame()  // the GL context is current: build the renderer
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14]), glesMajorVersion: surface.glesMajorVersion)
        layer = renderer.makeLayer(reserving: Motion.count)
        try surface.prepare { draw(atMicroseconds: 0) }  // a warm-up frame, never shown
        surface.onError = { error in
            print("GoldenFrames: \(error)"); exit(1)
        }
        link = DisplayLink(source: surface, receiver: self)
    }

    /// Draws the views as they are `micros` µs after the start, every pixel (buffer age 0), so
    /// the frame depends on nothing drawn before.
    func draw(atMicroseconds micros: Int64) {
        let t = Double(micros) / 1e6, (width, height) = (Double(surface.width), Double(surface.height))
        renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.07, 0.08, 0.11), bufferAge: 0)
        for i in 0..<Motion.count {
            let view = Motion.view(i, at: t, width: width, height: height)
            renderer.addRect(
                layer, Rect(x: Float(view.x) - 10, y: Float(view.y) - 10, width: 20, height: 20),
                color: view.color, cornerRadius: 5)
        }
        renderer.endFrame()
    }

    func displayWillUpdate(_ frame: DisplayFrame) {
        // The time the frame is for, to the microsecond: the file's name and the picture's input.
        let micros = (frame.targetTimestamp - surface.options.offscreen.startTime).value / 1000
        let path = directory + "/frame-" + zeroPadded(micros, digits: 10) + ".png"
        do {
            try surface.beginFrame()
            draw(atMicroseconds: micros)
            try surface.screenshot(to: path)
            try surface.present()
        } catch {
            print("GoldenFrames: \(error)")
            exit(1)
        }
        frames.append(frame)
        written.append(path)
        if frames.count == frameLimit { finish() }
    }

    func finish() {
        link?.invalidate()
        surface.close()
        // The offscreen display's promise: refresh n at start + n periods exactly (integer
        // nanoseconds, never accumulated), its target the next refresh, delta 0 first and then
        // the time between refreshes.
        let rate = surface.options.offscreen.refreshRate, start = surface.options.offscreen.startTime
        let exact = frames.enumerated().allSatisfy { n, frame in
            frame.timestamp == start + rate.offset(ofRefresh: UInt64(n))
                && frame.targetTimestamp == start + rate.offset(ofRefresh: UInt64(n + 1))
                && frame.delta == (n == 0 ? .zero : frame.timestamp - frames[n - 1].timestamp)
        }
        let first = frames[0].targetTimestamp.seconds, last = frames[frames.count - 1].targetTimestamp.seconds
        print(
            "GoldenFrames: \(frames.count) frames at \(rate) on \(surface.backend), targets \(first)…\(last) s, "
                + "written to \(directory)/frame-<µs>.png; check "
                + (exact
                    ? "ok (timestamps and targets the exact virtual refresh times, first delta 0)"
                    : "FAILED (timestamps off the virtual grid)"))
        exit(exact ? 0 : 1)
    }
}

func zeroPadded(_ value: Int64, digits: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}

/// `--refresh HZ`: whole hertz (`60`) or `N/D`, N refreshes every D seconds (`60000/1001`).
func refreshRate(_ text: String) -> DisplaySurface.OffscreenOptions? {
    let parts = text.split(separator: "/").map { Int($0) }
    switch parts.count {
    case 1: return parts[0].map { DisplaySurface.OffscreenOptions(refreshRate: .hertz($0)) }
    case 2: return parts[0].flatMap { n in parts[1].map { DisplaySurface.OffscreenOptions(refreshRate: .hertz(n, per: $0)) } }
    default: return nil
    }
}

func value(of flag: String) -> String? {
    guard let i = CommandLine.arguments.firstIndex(of: flag), i + 1 < CommandLine.arguments.count else { return nil }
    return CommandLine.arguments[i + 1]
}

if let directory = value(of: "--primitives") {
    guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
        print("GoldenFrames: cannot create \(directory): \(String(cString: strerror(errno)))")
        exit(1)
    }
    do {
        try Primitives.write(to: directory)
        print("GoldenFrames: \(Primitives.names.map { directory + "/" + $0 + ".png" }.joined(separator: ", "))")
        exit(0)
    } catch {
        print("GoldenFrames: \(error)")
        exit(1)
    }
}
guard let directory = value(of: "--out") else {
    print("usage: GoldenFrames --out DIR [--refresh HZ] [--frames N] | --primitives DIR")
    exit(2)
}
guard let rate = refreshRate(value(of: "--refresh") ?? "60") else {
    print("GoldenFrames: --refresh takes whole hertz (60) or N/D (60000/1001), got \(value(of: "--refresh") ?? "")")
    exit(2)
}
let frameLimit = max(1, value(of: "--frames").flatMap { Int($0) } ?? 60)
guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
    print("GoldenFrames: cannot create \(directory): \(String(cString: strerror(errno)))")
    exit(1)
}
do {
    let app = try GoldenFrameWriter(directory: directory, rate: rate, frames: frameLimit)
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("GoldenFrames: \(error)")
    exit(1)
}
