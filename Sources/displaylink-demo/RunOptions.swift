import ArgumentParser
import DisplayLinkCore
import DisplaySurface
import Logging

// The library's own choices are the flags' values (by their raw values), so the two cannot drift.
extension DisplaySurface.BackendChoice: ExpressibleByArgument {}
extension DisplaySurface.KMSAPI: ExpressibleByArgument {}

struct PixelSize: ExpressibleByArgument {
    var width: Int32
    var height: Int32

    init(width: Int32, height: Int32) { self.width = width; self.height = height }

    init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int32(parts[0]), let h = Int32(parts[1]),
            (16...8192).contains(w), (16...8192).contains(h)
        else { return nil }
        width = w; height = h
    }

    static var defaultValueDescription: String { "640x480" }
}

/// Options every scene takes.
struct RunOptions: ParsableArguments {
    @Option(help: "Where to display: auto (Wayland if a compositor is reachable, else DRM), wayland, drm, or offscreen (virtual time).")
    var backend: DisplaySurface.BackendChoice = .auto

    @Option(help: "Window or render size as WxH (16…8192 each).")
    var size: PixelSize = PixelSize(width: 640, height: 480)

    @Option(help: "Stop after this many callbacks.")
    var frames: Int?

    @Option(help: "Stop after this many seconds.")
    var seconds: Double?

    @Option(name: .customLong("preferred-fps"), help: "Preferred callback rate (0: the display's rate).")
    var preferredFPS: Int = 0

    @Option(help: "Seed for the scene's random numbers (runs with the same seed are the same).")
    var seed: UInt64 = 1

    @Option(help: "Write the frame timing report (JSON) here.")
    var report: String?

    @Option(help: "Write a plot of frame intervals and prediction error (PNG) here.")
    var plot: String?

    @Option(help: "Write the last frame (PNG) here.")
    var screenshot: String?

    @Flag(inversion: .prefixedNo, help: "Draw the timing panel (fps, delta, missed frames, provenance).")
    var hud = true

    @Option(help: "A line of text (any Unicode the font has) drawn at the bottom left, laid out every frame.")
    var caption: String?

    @Option(
        name: .customLong("fixed-step"),
        help: ArgumentHelp(
            """
            Move the scene by this many seconds each frame, on a virtual clock, instead of by the frame's real times (0: off; for \
            instruction counts under callgrind, where a frame takes seconds). The report keeps the real times.
            """,
            visibility: .hidden))
    var fixedStep: Double = 0

    @Flag(
        inversion: .prefixedNo,
        help:
            """
            On Wayland, give each frame's commit its target time when the compositor offers commit timing (falls back to untimed commits \
            if the compositor holds them).
            """
    )
    var commitTiming = true

    @Flag(
        help:
            """
            On Wayland, time commits even where the presentation feedback lacks VSYNC (off by default: mutter holds timed commits on \
            such outputs, as on its virtual monitors).
            """
    )
    var commitTimingWithoutVsync = false

    @Flag(inversion: .prefixedNo, help: "On Wayland, order frames with FIFO barriers when the compositor offers the FIFO protocol.")
    var fifo = true

    /// When each frame starts (`--latency`).
    enum Latency: String, CaseIterable, ExpressibleByArgument {
        case throughput, low
    }

    @Option(
        help: """
            When each frame starts, on Wayland and DRM/KMS: throughput (as soon as the display allows) or low (as late as its \
            deadline less the learned render time allows: lower latency). (default: throughput)
            """)
    var latency: Latency?

    @Flag(help: "The same as --latency low.")
    var lowLatency = false

    /// Whether frames start as late as their deadlines allow (`--latency low` or `--low-latency`).
    var startsLate: Bool { lowLatency || latency == .low }

    @Flag(help: "Start a private headless weston for this run and stop it afterwards.")
    var headless = false

    @Option(help: "DRM device for --backend drm (default: the first card with a connected connector).")
    var device: String?

    @Option(help: "DRM mode for --backend drm as WxH or WxH@Hz (default: the connector's preferred mode).")
    var mode: String?

    @Option(
        name: .customLong("kms-api"),
        help: "KMS API for --backend drm: automatic (atomic when the driver has it, else legacy), atomic or legacy.")
    var kmsAPI: DisplaySurface.KMSAPI = .automatic

    @Option(
        name: .customLong("log-level"),
        help:
            """
            Print the library's log (displaylink.surface/.wayland/.drm) at this level and above to stderr: trace, debug, info, notice, \
            warning, error or critical. The library logs its decisions at debug (default: nothing printed).
            """
    )
    var logLevel: String?

    func validate() throws {
        if lowLatency && latency == .throughput { throw ValidationError("--low-latency contradicts --latency throughput") }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError(
                "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got '\(logLevel)'")
        }
        if frames != nil && seconds != nil { throw ValidationError("give --frames or --seconds, not both") }
        if let frames { try requireInRange(frames, 1...1_000_000, option: "frames") }
        if let seconds, !(seconds > 0 && seconds <= 86_400) { throw ValidationError("--seconds must be > 0 and ≤ 86400") }
        if preferredFPS < 0 || preferredFPS > 1000 { throw ValidationError("--preferred-fps must be 0…1000") }
        if !(fixedStep >= 0 && fixedStep <= 1) { throw ValidationError("--fixed-step must be 0…1 s, got \(fixedStep)") }
        if let mode, (try? DisplaySurface.ModeRequest(parsing: mode)) == nil {
            throw ValidationError("--mode must be WxH or WxH@Hz (e.g. 640x480 or 640x480@144), got '\(mode)'")
        }
        if headless && backend == .drm { throw ValidationError("--headless starts a Wayland compositor; it cannot go with --backend drm") }
    }

    /// How many frames to reserve report space for.
    var expectedFrames: Int {
        if let frames { return frames }
        if let seconds { return Int(seconds * 240) + 16 }
        return 4096
    }
}

/// Fails an option's validation unless `value` is in `range`, with the message every count
/// option of the demo gives: `--OPTION must be LOW…HIGH, got VALUE`.
func requireInRange(_ value: Int, _ range: ClosedRange<Int>, option: String) throws {
    guard range.contains(value) else {
        throw ValidationError("--\(option) must be \(range.lowerBound)…\(range.upperBound), got \(value)")
    }
}
