import Benchmark
import DisplayLinkCore
import DisplaySurface
import GLESRenderer

/// The bounce scene's frames on an offscreen surface (surfaceless EGL pbuffer): the renderer
/// needs a current GL context, and no display is involved. The surface closes after the renderer
/// is gone, so that the renderer deletes its GL objects while their context is still current.
@MainActor
func updateAndEncode(views count: Int, benchmark: Benchmark, update: Bool = true, encode: Bool = true) throws {
    let surface = try DisplaySurface(options: .init(width: 640, height: 480, backend: .offscreen))
    defer { surface.close() }
    try surface.beginFrame()
    try measureFrames(
        views: count, glesMajorVersion: surface.glesMajorVersion, benchmark: benchmark, update: update, encode: encode)
}

/// One frame of the bounce scene on the CPU: update every view by deltaTime, then encode the
/// frame into the renderer's instance buffers (what the GPU is later handed). Measured after a
/// warm-up, so the steady state must show 0 allocations.
@MainActor
private func measureFrames(
    views count: Int, glesMajorVersion: Int32, benchmark: Benchmark, update: Bool, encode: Bool
) throws {
    let atlas = try GlyphAtlas(pixelSizes: [14, 20])
    let renderer = try Renderer(atlas: atlas, glesMajorVersion: glesMajorVersion)
    let scene = BounceViews(renderer: renderer, views: count, width: 640, height: 480, seed: 1)
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
