// swift-tools-version: 6.2
// DisplayLink for Linux: a CADisplayLink driven by real vblank (Wayland, DRM/KMS) or a mock clock.
//
// Layering (one way only): displaylink-demo → DisplaySurface → backends / renderer / motion → DisplayLinkCore.
// DisplayLinkCore imports no C module; DisplayLinkTesting depends on the core only. DisplaySurface is
// the only library module that knows the backends (each behind SurfaceBackend's protocol); the demo
// imports no backend module.
import PackageDescription

let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "DisplayLink",
    // What a program imports: the link, the place to draw, the renderer, the animation toolkit,
    // the testing support, the link on the program's own surface or fed by it, and the C library.
    // The layers beneath (backends, EGL, schedulers, input, C system libraries) are targets only.
    products: [
        .library(name: "DisplayLinkCore", targets: ["DisplayLinkCore"]),
        .library(name: "DisplaySurface", targets: ["DisplaySurface"]),
        .library(name: "GLESRenderer", targets: ["GLESRenderer"]),
        .library(name: "Motion", targets: ["Motion"]),
        .library(name: "ForeignSources", targets: ["ForeignSources"]),
        .library(name: "DisplayLinkTesting", targets: ["DisplayLinkTesting"]),
        .library(name: "DisplayLinkWaylandTesting", targets: ["DisplayLinkWaylandTesting"]),
        // The C library (libdisplaylink.so; header and pkg-config file: `make install`).
        .library(name: "displaylink", type: .dynamic, targets: ["DisplayLinkC"]),
        .executable(name: "displaylink-demo", targets: ["displaylink-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        .target(name: "DisplayLinkCore", swiftSettings: strict),
        .target(name: "DisplayLinkTesting", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        // The backends' decisions as pure value types (events in, refreshes and requests out; no C,
        // no clock reads), tested on virtual time. The backends are thin shells around them.
        .target(name: "FrameSchedulers", dependencies: ["DisplayLinkCore"], swiftSettings: strict),

        // C system libraries: relative shim headers, found through pkg-config, installed by apt.
        .systemLibrary(name: "CWaylandClient", pkgConfig: "wayland-client", providers: [.apt(["libwayland-dev"])]),
        .systemLibrary(name: "CWaylandEGL", pkgConfig: "wayland-egl", providers: [.apt(["libwayland-dev"])]),
        .systemLibrary(name: "CEGL", pkgConfig: "egl", providers: [.apt(["libegl-dev", "libegl-mesa0"])]),
        .systemLibrary(name: "CGLES", pkgConfig: "glesv2", providers: [.apt(["libgles-dev"])]),
        .systemLibrary(name: "CXKBCommon", pkgConfig: "xkbcommon", providers: [.apt(["libxkbcommon-dev"])]),
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CGBM", pkgConfig: "gbm", providers: [.apt(["libgbm-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        // Sessions through a seat manager (seatd, systemd-logind) and console input through it.
        .systemLibrary(name: "CSeat", pkgConfig: "libseat", providers: [.apt(["libseat-dev"])]),
        .systemLibrary(name: "CInput", pkgConfig: "libinput", providers: [.apt(["libinput-dev", "libudev-dev"])]),
        // libdispatch's entry points for serving the main queue from a run loop (CoreFoundation's).
        .systemLibrary(name: "CMainQueue"),
        // The C library's header as a module: its implementation uses the header's own types
        // (dl_frame, the options), so their layout is the C compiler's.
        .systemLibrary(name: "CDisplayLinkABI"),
        // wayland-scanner output (generated, see Protocols/) plus cwl_ helpers.
        .target(name: "CWayland", dependencies: ["CWaylandClient"], path: "CWayland", publicHeadersPath: "include"),

        // Kernel and C library calls with errno captured at once, as swift-system's Errno.
        .target(name: "KernelCall", dependencies: [.product(name: "SystemPackage", package: "swift-system")], swiftSettings: strict),
        .target(name: "EGLGraphics", dependencies: ["CEGL"], swiftSettings: strict),
        // A session on the seat (libseat: seatd, systemd-logind, or direct access) and the console's
        // keys (libinput through the seat, or the terminal on standard input).
        .target(
            name: "ConsoleSeat",
            dependencies: ["DisplayLinkCore", "SurfaceInput", "KernelCall", "CSeat", "CInput", "CXKBCommon",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .target(
            name: "DRMBackend",
            dependencies: ["DisplayLinkCore", "FrameSchedulers", "EGLGraphics", "ConsoleSeat", "KernelCall", "CDRM", "CGBM",
                           .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .target(name: "GLESRenderer", dependencies: ["CGLES", "CFreeType", "EGLGraphics", "PNGImage"], swiftSettings: strict),
        .target(name: "PNGImage", dependencies: ["CPNG"], swiftSettings: strict),
        .target(name: "Scenes", dependencies: ["DisplayLinkCore", "Motion", "GLESRenderer"], swiftSettings: strict),
        .target(name: "Motion", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        // Input timing as pure values: event times on the link's clock, key repeat.
        .target(name: "SurfaceInput", dependencies: ["DisplayLinkCore"], swiftSettings: strict),
        .target(
            name: "WaylandBackend",
            dependencies: ["DisplayLinkCore", "FrameSchedulers", "EGLGraphics", "KernelCall", "SurfaceInput", "CWayland", "CWaylandClient",
                           "CWaylandEGL", "CXKBCommon", .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        // What DisplaySurface needs of a backend (one protocol; imports no C module itself).
        .target(name: "SurfaceBackend", dependencies: ["DisplayLinkCore", "EGLGraphics", "SurfaceInput"], swiftSettings: strict),
        // A pbuffer on Mesa's surfaceless EGL platform, refreshed on virtual time.
        .target(name: "OffscreenBackend", dependencies: ["DisplayLinkCore", "EGLGraphics", "SurfaceBackend"], swiftSettings: strict),
        // A private headless weston for tests, benchmarks and the demo's --headless.
        .target(name: "DisplayLinkWaylandTesting", dependencies: ["DisplayLinkCore", "DisplayLinkTesting"], swiftSettings: strict),
        // "A place to draw that a display link follows": a Wayland toplevel, a KMS output or offscreen.
        .target(
            name: "DisplaySurface",
            dependencies: ["DisplayLinkCore", "SurfaceBackend", "WaylandBackend", "DRMBackend", "ConsoleSeat", "OffscreenBackend",
                           "EGLGraphics", "PNGImage", "SurfaceInput", "FrameSchedulers", "CMainQueue",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The link on a wl_surface the program owns, and fed with the presentations it learns.
        .target(
            name: "ForeignSources",
            dependencies: ["DisplayLinkCore", "FrameSchedulers", "WaylandBackend", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The C ABI over the link, the sources and the surface (include/displaylink.h).
        .target(
            name: "DisplayLinkC",
            dependencies: ["DisplayLinkCore", "ForeignSources", "DisplaySurface", "CDisplayLinkABI",
                           .product(name: "Logging", package: "swift-log")],
            exclude: ["include", "displaylink.pc.in", "exports.map"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "displaylink-demo",
            dependencies: [
                "DisplayLinkCore",
                "DisplayLinkTesting",
                "DisplaySurface",
                "DisplayLinkWaylandTesting",
                "EGLGraphics",
                "GLESRenderer",
                "Motion",
                "Scenes",
                "PNGImage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DisplayLinkCoreTests",
            dependencies: ["DisplayLinkCore", "DisplayLinkTesting", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FrameSchedulerTests",
            dependencies: ["FrameSchedulers", "DisplayLinkCore", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GLESRendererTests",
            dependencies: ["GLESRenderer", "EGLGraphics", "PNGImage", "Scenes", "Motion", "DisplayLinkCore", "DisplayLinkWaylandTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DRMBackendTests",
            dependencies: ["DRMBackend", "ConsoleSeat", "DisplaySurface", "DisplayLinkCore", "DisplayLinkWaylandTesting", "FrameSchedulers", "GLESRenderer", "displaylink-demo",
                           .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DemoTests",
            dependencies: ["DisplayLinkWaylandTesting", "WaylandBackend", "displaylink-demo", "Scenes", "GLESRenderer"],
            swiftSettings: strict),
        .testTarget(
            name: "DisplaySurfaceTests",
            dependencies: ["DisplaySurface", "OffscreenBackend", "DisplayLinkCore", "DisplayLinkWaylandTesting", "EGLGraphics",
                           "GLESRenderer", "SurfaceInput", "WaylandBackend"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SurfaceInputTests",
            dependencies: ["SurfaceInput", "DisplayLinkCore", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ForeignSourcesTests",
            dependencies: ["ForeignSources", "WaylandBackend", "DisplayLinkWaylandTesting", "DisplayLinkCore", "EGLGraphics", "GLESRenderer"],
            swiftSettings: strict
        ),
        .testTarget(name: "MotionTests", dependencies: ["Motion", "DisplayLinkCore", "DisplayLinkTesting"], swiftSettings: strict),
        .testTarget(
            name: "WaylandBackendTests",
            dependencies: ["WaylandBackend", "DisplayLinkWaylandTesting", "DisplayLinkCore", "EGLGraphics", "GLESRenderer"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
