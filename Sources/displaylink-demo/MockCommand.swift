import ArgumentParser
import DisplayLinkCore
import DisplayLinkTesting

/// A console demo of the core on the mock source: a value animated by `deltaTime`, with a pause,
/// dropped vblanks and a refresh change scripted in, printed as a frame table.
struct MockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Drives a display link from the deterministic mock source and prints each callback."
    )

    @Option(help: "Refresh rate of the mock display, in Hz.")
    var refresh: Double = 60

    @Option(help: "Number of vblanks to run (each scripted event happens within the first 12).")
    var frames: Int = 12

    @Option(name: .customLong("preferred-fps"), help: "Preferred callback rate (0: every refresh).")
    var preferredFPS: Int = 0

    func validate() throws {
        guard refresh.isFinite, refresh >= 1, refresh <= 1000 else {
            throw ValidationError("--refresh must be between 1 and 1000 Hz, got \(refresh)")
        }
        try requireInRange(frames, 1...100_000, option: "frames")
        guard preferredFPS >= 0 else { throw ValidationError("--preferred-fps must be ≥ 0") }
    }

    func run() throws {
        let refresh = refresh, frames = frames, preferredFPS = preferredFPS
        MainActor.assumeIsolated {
            MockDemo(refresh: refresh, preferredFPS: preferredFPS).run(vblanks: frames)
        }
    }
}

@MainActor
final class MockDemo {
    let source: MockFrameSource
    var position = 0.0  // moves at 120 units per second, whatever the frame rate
    var link: DisplayLink?

    init(refresh: Double, preferredFPS: Int) {
        source = MockFrameSource(refreshRate: refresh)
        source.scriptJitter([0, 150_000, -150_000])
        link = DisplayLink(source: source, target: self) { demo, link in demo.tick(link) }
        link?.preferredFramesPerSecond = preferredFPS
    }

    func tick(_ link: DisplayLink) {
        position += 120 * link.deltaTime
        let f = link.frame
        print(
            pad(String(f.refreshIndex), 5), pad(String(f.sequence), 5), pad(ms(f.timestamp.seconds), 11),
            pad(ms(f.targetTimestamp.seconds), 11), pad(ms(f.delta.seconds), 9), pad(String(f.missedFrames), 6),
            pad(ms(f.duration.seconds), 8), pad(ms(position / 1000), 10), "  ", f.provenance.rawValue)
    }

    func run(vblanks: Int) {
        print(
            pad("index", 5), pad("seq", 5), pad("timestamp", 11), pad("target", 11), pad("delta", 9),
            pad("missed", 6), pad("period", 8), pad("position", 10), "   provenance")
        print("(times in ms on the mock's virtual CLOCK_MONOTONIC; position moves 120 units/s)")
        for i in 0..<vblanks {
            switch i {
            case 3: print("-- 2 vblanks dropped"); source.dropVBlanks(2)
            case 6: print("-- paused for 2 vblanks"); link?.isPaused = true
            case 8: print("-- resumed (delta 0)"); link?.isPaused = false
            case 10: print("-- refresh changes to 144 Hz"); source.refreshPeriod = Nanoseconds(periodOfHertz: 144)
            default: break
            }
            source.vsync()
        }
        link?.invalidate()
    }
}

private func ms(_ seconds: Double) -> String {
    let value = (seconds * 1_000_000).rounded() / 1000
    return String(value)
}

private func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
