// swift-tools-version: 6.2
// Benchmarks for DisplayLink, kept out of the main package so its users never build
// package-benchmark. Run with `make bench` from the repository root.
import PackageDescription

let package = Package(
    name: "DisplayLinkBenchmarks",
    dependencies: [
        .package(name: "DisplayLink", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "DispatchBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DisplayLinkCore", package: "DisplayLink"),
                .product(name: "DisplayLinkTesting", package: "DisplayLink"),
            ],
            path: "Benchmarks/DispatchBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SceneBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "DisplayLinkCore", package: "DisplayLink"),
                .product(name: "DisplaySurface", package: "DisplayLink"),
                .product(name: "GLESRenderer", package: "DisplayLink"),
                .product(name: "Motion", package: "DisplayLink"),
            ],
            path: "Benchmarks/SceneBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Not a package-benchmark suite (so not under Benchmarks/, where the plugin runs every
        // executable): it compares whole processes under one private weston.
        .executableTarget(
            name: "PacingBenchmark",
            dependencies: [.product(name: "DisplayLinkWaylandTesting", package: "DisplayLink")],
            path: "Tools/PacingBenchmark"
        ),
        // Reads the demo's JSON reports and prints one table (make bench-drm); Foundation only.
        .executableTarget(
            name: "FrameReportTable",
            path: "Tools/FrameReportTable",
            swiftSettings: [.treatAllWarnings(as: .error)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
