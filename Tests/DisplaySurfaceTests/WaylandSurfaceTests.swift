import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import EGLGraphics
import Foundation
import GLESRenderer
import Testing

@MainActor
@Suite("DisplaySurface on a private weston", .serialized)
struct WaylandSurfaceTests {
    func options(_ weston: HeadlessWeston, backend: DisplaySurface.BackendChoice = .wayland) -> DisplaySurface.Options {
        DisplaySurface.Options(
            title: "surface test", appID: "org.displaylink.test", width: 200, height: 150,
            backend: backend, waylandSocket: weston.socketPath)
    }

    @Test(
        """
        auto opens the compositor's window: size, GLES version, environment; a link runs with beginFrame/present; read-back and screenshot
        """)
    func framesAndPixels() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(weston, backend: .auto))
        #expect(surface.backend == .wayland)
        #expect(surface.width == 200 && surface.height == 150)
        #expect(surface.glesMajorVersion >= 2)
        let keys = surface.environment.map(\.key)
        #expect(keys.starts(with: ["compositor", "socket", "presentation_clock", "refresh_advertised"]))
        #expect(surface.environment.first { $0.key == "compositor" }?.value == .string("weston"))
        var warmUps = 0
        try surface.beginFrame()  // set-up with the context bound, as a renderer's creation would
        try surface.prepare { warmUps += 1 }
        #expect(warmUps == 2)
        let client = SurfaceClient(surface)
        client.start()
        #expect(await eventually { client.frames.count >= 20 || client.failure != nil })
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(await eventually { client.presented >= 10 })
        let pixels = try #require(client.pixels)
        #expect(pixels.count == 200 * 150 * 4)
        #expect(Array(pixels[0..<4]) == [255, 0, 0, 255], "top-left is the red square")
        let last = (150 * 200 - 1) * 4
        #expect(Array(pixels[last..<last + 3]) == [0, 0, 255], "bottom-right is the blue background")
        client.link?.invalidate()

        // A screenshot of a frame being drawn, outside the link.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("surface-\(getpid()).png").path
        defer { unlink(path) }
        try surface.beginFrame()
        client.painter.begin(width: 200, height: 150, background: RGBA(0, 1, 0))
        try surface.screenshot(to: path)
        try surface.present()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        surface.close()
    }

    @Test("close: links invalidated, drawing refused, close handlers run once after the display is released")
    func closing() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(weston))
        var handlerRuns = 0
        surface.addCloseHandler {
            handlerRuns += 1; weston.stop()
        }
        let client = SurfaceClient(surface)
        client.start()
        #expect(await eventually { client.frames.count >= 3 })
        surface.close()
        surface.close()
        #expect(surface.isClosed)
        #expect(handlerRuns == 1)
        #expect(!weston.isRunning)
        #expect(client.link?.isValid == false)
        #expect(throws: DisplaySurfaceError.closed) { try surface.beginFrame() }
        #expect(surface.environment.first { $0.key == "compositor" }?.value == .string("weston"), "the environment outlives close")
    }

    @Test("the compositor dying: one typed error through onError, the links invalidated")
    func compositorDies() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(weston))
        var errors: [DisplaySurfaceError] = []
        surface.onError = { errors.append($0) }
        let client = SurfaceClient(surface)
        client.start()
        #expect(await eventually { client.frames.count >= 3 })
        weston.kill()
        #expect(await eventually { !errors.isEmpty })
        #expect(errors.count == 1)
        if case .wayland(.connectionLost) = errors.first {} else { Issue.record("unexpected \(errors)") }
        #expect(await eventually { client.link?.isValid == false })
        #expect(surface.error != nil)
        surface.close()
    }

    @Test("errors name the library's options, never a program's flags; auto lists what it tried and why")
    func errorMessages() throws {
        let missing = "/tmp/no-such-wayland-socket-\(getpid())"
        do {
            _ = try DisplaySurface(options: .init(backend: .wayland, waylandSocket: missing))
            Issue.record("opened a surface on no compositor")
        } catch {
            guard case .wayland(.cannotConnect) = error else { Issue.record("unexpected \(error)"); return }
            #expect(error.description.contains("DisplaySurface.Options.waylandSocket"))
            #expect(!error.description.contains("--"))
        }
        do {
            _ = try DisplaySurface(options: .init(backend: .auto, devicePath: "/dev/dri/card97", waylandSocket: missing))
            Issue.record("opened a surface on nothing")
        } catch {
            guard case .noDisplay(let tried) = error else { Issue.record("unexpected \(error)"); return }
            #expect(tried.map(\.backend) == [.wayland, .drm])
            #expect(tried.last?.error == .drm(.noDevice(path: "/dev/dri/card97")))
            let text = error.description
            #expect(text.contains("no display to run on") && text.contains("Wayland") && text.contains("DRM/KMS"))
            #expect(text.contains("DisplaySurface.Options.devicePath"))
            #expect(!text.contains("--"), "\(text)")
        }
        do {
            _ = try DisplaySurface.ModeRequest(parsing: "12x")
            Issue.record("12x parsed as a mode")
        } catch {
            #expect(error.description.contains("write it as WxH"), "\(error)")
        }
        #expect(try DisplaySurface.ModeRequest(parsing: "640x480@144") == .init(width: 640, height: 480, refreshRate: 144))
    }
}

@MainActor
@Suite("DisplaySurface closed from inside its own callback", .serialized)
struct CloseInCallbackTests {
    @Test("close() in a link's callback (drawn or not): no request on the destroyed window, handlers run, no more callbacks")
    func closeInCallback() async throws {
        for draws in [false, true] {
            let weston = try await HeadlessWeston.start()
            defer { weston.stop() }
            let surface = try DisplaySurface(options: .init(backend: .wayland, waylandSocket: weston.socketPath))
            var closed = false
            surface.addCloseHandler { closed = true }
            final class Target { var frames = 0 }
            let target = Target()
            let link = DisplayLink(source: surface, target: target) { target, _ in
                target.frames += 1
                // The first frame maps the window (an unmapped one gets no frame callbacks).
                if draws || target.frames == 1 {
                    try? surface.beginFrame()
                    try? surface.present()
                }
                if target.frames == 3 { surface.close() }
            }
            #expect(await eventually { closed })
            // A negative check: nothing may come after the close, however long one waits (a slower
            // host only makes a wrong extra frame likelier to show up).
            try await Task.sleep(for: .milliseconds(100))
            #expect(target.frames == 3)
            #expect(!link.isValid)
            #expect(weston.isRunning, "the compositor took no offence")
        }
    }
}
