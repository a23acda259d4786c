import ArgumentParser
import GLESRenderer
import Motion
import Scenes

extension EasingCurve: ExpressibleByArgument {}

struct BounceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bounce",
        abstract: "Moving views: many small views moved by velocity and acceleration × deltaTime, recycled when done."
    )
    @Option(help: "Number of moving views (1…200000).")
    var views: Int = 60
    @OptionGroup var options: RunOptions

    func validate() throws {
        guard (1...200_000).contains(views) else { throw ValidationError("--views must be 1…200000, got \(views)") }
    }

    func run() throws {
        let options = self.options, views = self.views
        MainActor.assumeIsolated {
            DemoRunner.launch(options: options) { renderer, width, height in
                BounceScene(renderer: renderer, views: views, width: width, height: height, seed: options.seed)
            }
        }
    }
}

struct ScrollCommand: ParsableCommand {
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
        guard (1...1_000_000).contains(rows) else { throw ValidationError("--rows must be 1…1000000, got \(rows)") }
        guard duration.isFinite, duration > 0, duration <= 3600 else { throw ValidationError("--duration must be > 0 and ≤ 3600 s") }
        guard delay.isFinite, delay >= 0, delay <= 3600 else { throw ValidationError("--delay must be 0…3600 s") }
    }

    func run() throws {
        let options = self.options, rows = self.rows, duration = self.duration, curve = self.curve, delay = self.delay
        MainActor.assumeIsolated {
            DemoRunner.launch(options: options) { renderer, width, height in
                ScrollScene(
                    renderer: renderer, rows: rows, width: width, height: height, duration: duration,
                    curve: curve, delay: delay)
            }
        }
    }
}

struct QuadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quad",
        abstract: "One square moving by deltaTime: the smallest client."
    )
    @OptionGroup var options: RunOptions

    func run() throws {
        let options = self.options
        MainActor.assumeIsolated {
            DemoRunner.launch(options: options) { renderer, width, height in
                QuadScene(renderer: renderer, width: width, height: height)
            }
        }
    }
}
