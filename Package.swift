// swift-tools-version: 6.2
// DisplayLink for Linux: a CADisplayLink driven by real vblank (Wayland, DRM/KMS) or a mock clock.
//
// Layering (one way only): displaylink-demo → backends / renderer / motion → DisplayLinkCore.
// DisplayLinkCore imports no C module; DisplayLinkTesting depends on the core only.
import PackageDescription

let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "DisplayLink",
    products: [
        .library(name: "DisplayLinkCore", targets: ["DisplayLinkCore"]),
        .library(name: "DisplayLinkTesting", targets: ["DisplayLinkTesting"]),
        .executable(name: "displaylink-demo", targets: ["displaylink-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "DisplayLinkCore", swiftSettings: strict),
        .target(name: "DisplayLinkTesting", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .executableTarget(
            name: "displaylink-demo",
            dependencies: [
                "DisplayLinkCore",
                "DisplayLinkTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "DisplayLinkCoreTests", dependencies: ["DisplayLinkCore", "DisplayLinkTesting"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
