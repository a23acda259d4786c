import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import Testing

/// `DisplaySurface.Options.waylandOutput` (fullscreen on a named output, e.g. a kiosk on one of
/// several screens) on a real mutter 48 (Debian 13 root) with two virtual monitors of different
/// sizes and refresh rates.
@MainActor
@Suite("DisplaySurface fullscreen on a chosen output under mutter 48", .serialized)
struct OutputChoiceTests {
    static let monitors: [HeadlessMutter.VirtualMonitor] = [
        .init(width: 640, height: 480, refreshRate: 60),
        .init(width: 800, height: 600, refreshRate: 30)
    ]

    func options(_ mutter: HeadlessMutter, output: String?) -> DisplaySurface.Options {
        var options = DisplaySurface.Options(
            title: "output test", appID: "org.displaylink.test", width: 320, height: 240,
            backend: .wayland, waylandSocket: mutter.socketPath, fullscreen: true)
        options.waylandOutput = output
        return options
    }

    @Test(
        """
        Options.waylandOutput: an unknown name fails the open naming the outputs there are; each named output gets the fullscreen window \
        at its size
        """)
    func fullscreenOnNamedOutput() async throws {
        let mutter = try await HeadlessMutter.mutter48(monitors: OutputChoiceTests.monitors)
        defer { mutter.stop() }

        // An unknown name: a typed error with the names the compositor has.
        var names: [String] = []
        do {
            let surface = try DisplaySurface(options: options(mutter, output: "no-such-output"))
            surface.close()
            Issue.record("a surface opened on an output that does not exist")
        } catch {
            guard case .wayland(.unknownOutput(let what, let available)) = error else {
                Issue.record("unexpected error: \(error)")
                return
            }
            #expect(what == "'no-such-output'")
            #expect(error.description.contains("DisplaySurface.Options.waylandOutput"), "\(error)")
            names = available
        }
        #expect(names.count == 2, "mutter 48's outputs: \(names)")

        // Each named output: the window is fullscreen there, at that monitor's size, and draws.
        var sizes: Set<[Int32]> = []
        for name in names {
            let surface = try DisplaySurface(options: options(mutter, output: name))
            defer { surface.close() }
            #expect(surface.isFullscreen)
            sizes.insert([surface.width, surface.height])
            let client = SurfaceClient(surface, readsEveryFrame: true)
            client.start()
            let frames = await client.waitForFrames(3)
            #expect(frames.count >= 3 && client.failure == nil, "\(String(describing: client.failure))")
            #expect(frames.allSatisfy { $0.width == surface.width && $0.height == surface.height })
            client.link?.invalidate()
            print("[mutter 48] Options.waylandOutput '\(name)': fullscreen at \(surface.width)x\(surface.height)")
        }
        #expect(
            sizes == Set(OutputChoiceTests.monitors.map { [Int32($0.width), Int32($0.height)] }),
            "the sizes configured: \(sizes)")
    }
}
