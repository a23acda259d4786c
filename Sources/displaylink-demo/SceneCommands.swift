import ArgumentParser
import Glibc
import GLESRenderer
import Motion
import Scenes

extension EasingCurve: ExpressibleByArgument {}

/// A subcommand that runs one scene: it says how to make its scene once the renderer and the
/// surface's size are known, and runs as every scene runs (``DemoRunner/launch(options:makeScene:)``).
protocol SceneCommand: ParsableCommand, Sendable {
    var options: RunOptions { get }
    @MainActor func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene
}

extension SceneCommand {
    func run() throws {
        MainActor.assumeIsolated {
            DemoRunner.launch(options: options) { renderer, width, height in
                makeScene(renderer: renderer, width: width, height: height)
            }
        }
    }
}

struct BounceCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "bounce",
        abstract: "Moving views: many small views moved by velocity and acceleration × deltaTime, recycled when done."
    )
    @Option(help: "Number of moving views (1…200000).")
    var views: Int = 60
    @OptionGroup var options: RunOptions

    func validate() throws {
        try requireInRange(views, 1...200_000, option: "views")
    }

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        BounceScene(renderer: renderer, views: views, width: width, height: height, seed: options.seed)
    }
}

struct ImagesCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "images",
        abstract: "Many images (pictures made in code, uploaded once): placed, scaled, some cropped, tinted or fading, moved by time."
    )
    @Option(help: "Number of images (1…200000).")
    var images: Int = 200
    @OptionGroup var options: RunOptions

    func validate() throws {
        try requireInRange(images, 1...200_000, option: "images")
    }

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        do {
            return try ImagesScene(renderer: renderer, images: images, width: width, height: height, seed: options.seed)
        } catch {
            // Only GL refusing a 32×32 texture gets here: nothing to draw without it.
            printError("images: \(error)")
            Glibc.exit(1)
        }
    }
}

struct StrokeCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "stroke",
        abstract: "A live polyline: one stroke growing by --points-per-frame points a frame along a curve up to --points, then again."
    )
    @Option(help: "Points of the full stroke (2…200000).")
    var points: Int = 2000
    @Option(name: .customLong("points-per-frame"), help: "Points appended each frame (1…10000).")
    var pointsPerFrame: Int = 10
    @OptionGroup var options: RunOptions

    func validate() throws {
        try requireInRange(points, 2...200_000, option: "points")
        try requireInRange(pointsPerFrame, 1...10_000, option: "points-per-frame")
    }

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        StrokeScene(renderer: renderer, points: points, pointsPerFrame: pointsPerFrame, width: width, height: height)
    }
}

struct ScrollCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "scroll",
        abstract: "An eased scroll through a long list; every row passing through the viewport is drawn. Enter scrolls back."
    )
    @Option(help: "Number of rows (1…1000000).")
    var rows: Int = 1000
    @Option(help: "Scroll duration in seconds.")
    var duration: Double = 1.0
    @Option(help: "Easing curve: \(EasingCurve.allCases.map(\.rawValue).joined(separator: ", ")).")
    var curve: EasingCurve = .easeInOut
    @Option(help: "Seconds after the first frame before the scroll to the end starts.")
    var delay: Double = 0
    @OptionGroup var options: RunOptions

    func validate() throws {
        try requireInRange(rows, 1...1_000_000, option: "rows")
        guard duration.isFinite, duration > 0, duration <= 3600 else { throw ValidationError("--duration must be > 0 and ≤ 3600 s") }
        guard delay.isFinite, delay >= 0, delay <= 3600 else { throw ValidationError("--delay must be 0…3600 s") }
    }

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        ScrollScene(
            renderer: renderer, rows: rows, width: width, height: height, duration: duration, curve: curve, delay: delay)
    }
}

struct QuadCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "quad",
        abstract: "One square moving by deltaTime: the smallest client."
    )
    @OptionGroup var options: RunOptions

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        QuadScene(renderer: renderer, width: width, height: height)
    }
}

struct FollowCommand: SceneCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow",
        abstract: """
            A marker at the newest pointer or touch position: with --report, each input event's latency to the presentation of the \
            first frame that showed it (input_latency_median and input_latency_p99 in the summary).
            """
    )
    @OptionGroup var options: RunOptions

    func makeScene(renderer: Renderer, width: Int32, height: Int32) -> Scene {
        FollowScene(renderer: renderer, width: width, height: height)
    }
}
