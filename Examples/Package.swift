// swift-tools-version: 6.2
// Seven short programs (and the README's first program) that use DisplayLink the way an application would: public products only,
// one binary for any display (a Wayland window when a compositor is reachable, else a DRM/KMS
// output; GoldenFrames draws offscreen on virtual time; VulkanLink runs on Wayland only). Building
// needs the Vulkan headers and loader (libvulkan-dev). Build and run from the repository root:
//   swift build --package-path Examples && Examples/.build/debug/MovingViews --frames 300
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]
let displayLink: [Target.Dependency] = [
    .product(name: "DisplaySurface", package: "DisplayLink"),  // a Wayland window or a KMS output
    .product(name: "DisplayLinkCore", package: "DisplayLink"),  // DisplayLink, DisplayFrame, …
    .product(name: "GLESRenderer", package: "DisplayLink"),     // rectangles, text, images, strokes
]

let package = Package(
    name: "DisplayLinkExamples",
    dependencies: [.package(name: "DisplayLink", path: "..")],
    targets: [
        // Seed 000: ~60 views moved by velocity and acceleration times delta time, recycled.
        .executableTarget(name: "MovingViews", dependencies: displayLink, swiftSettings: strict),
        // Seed 004: 1000 rows scrolled to the end with smoothstep on targetTimestamp.
        .executableTarget(
            name: "EasedScroll",
            dependencies: displayLink + [.product(name: "Motion", package: "DisplayLink")],  // EasedScroll, ListLayout
            swiftSettings: strict
        ),
        // The README's "Your first program", verbatim (make test builds it and checks the README
        // still shows exactly this file).
        .executableTarget(name: "FirstProgram", dependencies: displayLink, swiftSettings: strict),
        // Seed 002: a PWDisplayLinker-style wrapper; zero delta on start and after a resume.
        .executableTarget(name: "Linker", dependencies: displayLink, swiftSettings: strict),
        // A list dragged and flung with a pointer or a finger, a text field that keys type into
        // (DisplaySurface.onInput, times on the link's clock; momentum on targetTimestamp).
        .executableTarget(
            name: "TouchKiosk",
            dependencies: displayLink + [.product(name: "Motion", package: "DisplayLink")],  // ListLayout
            swiftSettings: strict
        ),
        // A signage board: an image carousel sliding on targetTimestamp, a ticker clipped to a
        // band, a clock hand drawn as a stroke and turned by its layer's transform, a text field;
        // --golden DIR writes its frames offscreen on virtual time.
        .executableTarget(name: "Signage", dependencies: displayLink, swiftSettings: strict),
        // A quad drawn with Vulkan on a surface without EGL (DisplaySurface.Options.graphics =
        // .external), turned by targetTimestamp; Vulkan's present wait set beside the compositor's
        // feedback. CVulkan: the Vulkan headers and loader (Debian: libvulkan-dev).
        .systemLibrary(name: "CVulkan", pkgConfig: "vulkan", providers: [.apt(["libvulkan-dev"])]),
        .executableTarget(
            name: "VulkanLink",
            dependencies: displayLink + ["CVulkan", .product(name: "ForeignSources", package: "DisplayLink")],  // FedFrameSource
            exclude: ["Shaders"], swiftSettings: strict),
        // Moving views offscreen on virtual time, each frame a function of its target time, written
        // as PNG files (Scripts/check-golden-frames compares runs and rates).
        .executableTarget(name: "GoldenFrames", dependencies: displayLink, swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
