// swift-tools-version: 6.2
// The suites that load no C library (the core, the schedulers, motion, input timing) as a package
// of their own, for `make test-pure-sanitizers`: its targets are the main package's, through
// symbolic links (Sources/, Tests/), so a sanitizer build compiles these five modules and four
// suites only, not every module and C library the main package's one test bundle links (about
// 1.5 min for ASan and 1 min for TSan on 2 cores, against 5 min each). Keep the targets and their
// dependencies as the main Package.swift declares them.
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
let propertyBased: Target.Dependency = .product(name: "PropertyBased", package: "swift-property-based")

let package = Package(
    name: "PureSuites",
    dependencies: [.package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1")],
    targets: [
        .target(name: "DisplayLinkCore", swiftSettings: strict),
        .target(name: "DisplayLinkTesting", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .target(name: "FrameSchedulers", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .target(name: "Motion", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .target(name: "SurfaceInput", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .testTarget(
            name: "DisplayLinkCoreTests", dependencies: ["DisplayLinkCore", "DisplayLinkTesting", propertyBased], swiftSettings: strict),
        .testTarget(name: "FrameSchedulerTests", dependencies: ["FrameSchedulers", "DisplayLinkCore", propertyBased], swiftSettings: strict),
        .testTarget(name: "MotionTests", dependencies: ["Motion", "DisplayLinkCore", "DisplayLinkTesting"], swiftSettings: strict),
        .testTarget(name: "SurfaceInputTests", dependencies: ["SurfaceInput", "DisplayLinkCore", propertyBased], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
