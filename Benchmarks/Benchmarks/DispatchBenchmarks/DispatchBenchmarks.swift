import Benchmark
import DisplayLinkCore
import DisplayLinkTesting

/// A link target that does the least a real one does: read the frame's values.
@MainActor
final class Sink {
    var accumulated: Int64 = 0
    func consume(_ link: DisplayLink) { accumulated &+= link.frame.delta.value &+ Int64(link.frame.missedFrames) }
}

/// Dispatches `frames` refreshes to `links` links on a mock source, after warming up so the
/// measured frames are the steady state.
@MainActor
func dispatchFrames(links count: Int, benchmark: Benchmark) {
    let source = MockFrameSource(refreshRate: 60)
    let sink = Sink()
    var links: [DisplayLink] = []
    links.reserveCapacity(count)
    for _ in 0..<count {
        links.append(DisplayLink(source: source, target: sink) { sink, link in sink.consume(link) })
    }
    source.vsync(16)  // warm-up: first callbacks, caches, capacity
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        source.vsync()
    }
    benchmark.stopMeasurement()
    blackHole(sink.accumulated)
    withExtendedLifetime(links) {}
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 200
    )

    // Links deliver on the main actor; the measured loop runs there. The benchmark object is
    // used only by that one task, so handing it over is safe.
    Benchmark("Dispatch one frame to 1 link") { benchmark async in
        nonisolated(unsafe) let benchmark = benchmark
        await dispatchFrames(links: 1, benchmark: benchmark)
    }
    Benchmark("Dispatch one frame to 100 links") { benchmark async in
        nonisolated(unsafe) let benchmark = benchmark
        await dispatchFrames(links: 100, benchmark: benchmark)
    }
}
