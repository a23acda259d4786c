import Benchmark
import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import Scenes

/// One frame of the bounce scene on the CPU: update every view by deltaTime, then encode the
/// frame into the renderer's instance buffers (what the GPU is later handed). Measured after a
/// warm-up, so the steady state must show 0 allocations.
@MainActor
func updateAndEncode(views count: Int, benchmark: Benchmark, update: Bool = true, encode: Bool = true) throws {
    let context = try EGLDisplayContext(platform: .surfaceless)
    let surface = try EGLWindowSurface(context: context, pbufferWidth: 640, height: 480)
    try surface.beginFrame()
    let atlas = try GlyphAtlas(pixelSizes: [14, 20])
    let renderer = try Renderer(atlas: atlas, glesMajorVersion: context.glesMajorVersion)
    let scene = BounceScene(renderer: renderer, views: count, width: 640, height: 480, seed: 1)
    var frame = DisplayFrame(
        timestamp: .zero, targetTimestamp: .zero, duration: Nanoseconds(16_666_667),
        delta: Nanoseconds(16_666_667), sequence: 0, missedFrames: 0,
        provenance: .hardwareVBlank, refreshIndex: 0, frameInterval: 1)
    func oneFrame() {
        frame.timestamp = frame.timestamp + frame.duration
        frame.targetTimestamp = frame.timestamp + frame.duration
        if update { scene.update(frame) }
        if encode {
            renderer.beginFrame(width: 640, height: 480, clearColor: scene.background)
            scene.draw()
        }
    }
    for _ in 0..<8 { oneFrame() }  // warm-up: buffers reach their steady size
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { oneFrame() }
    benchmark.stopMeasurement()
    blackHole(renderer.rectCount(0))
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 400
    )
    // The peer: the same harness with no frame work. Allocations per frame of a scene run are
    // its row minus this one (the async harness allocates per sample, not per frame).
    Benchmark("Harness only, no frame work") { benchmark async throws in
        nonisolated(unsafe) let benchmark = benchmark
        try await updateAndEncode(views: 60, benchmark: benchmark, update: false, encode: false)
    }
    // 1,000 frames per sample: allocations per frame show as total / 1000 (0 means none).
    Benchmark(
        "Bounce update + encode, 60 views, per 1000 frames",
        configuration: .init(
            metrics: [.mallocCountTotal, .wallClock], scalingFactor: .kilo,
            maxDuration: .seconds(3), maxIterations: 50)
    ) { benchmark async throws in
        nonisolated(unsafe) let benchmark = benchmark
        try await updateAndEncode(views: 60, benchmark: benchmark)
    }
    for views in [60, 1_000, 20_000] {
        Benchmark("Bounce update + encode, \(views) views") { benchmark async throws in
            nonisolated(unsafe) let benchmark = benchmark
            try await updateAndEncode(views: views, benchmark: benchmark)
        }
    }
}
