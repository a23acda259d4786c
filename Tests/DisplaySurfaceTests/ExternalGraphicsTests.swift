import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import Testing

/// A surface opened with `Options.graphics = .external` (no EGL; the program presents with its own
/// API, e.g. Vulkan). The whole flow with a Vulkan swapchain is Examples/VulkanLink's, run by
/// `make test` on weston 16 and kwin 6.7.
@MainActor
@Suite("DisplaySurface without GLES", .serialized)
struct ExternalGraphicsTests {
    func options(backend: DisplaySurface.BackendChoice, socket: String? = nil) -> DisplaySurface.Options {
        var options = DisplaySurface.Options(title: "external", width: 200, height: 150, backend: backend, waylandSocket: socket)
        options.graphics = .external
        return options
    }

    @Test("on weston: a Wayland window with no GLES context, its wl_display and wl_surface handed out, GLES calls refused")
    func waylandWindow() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let surface = try DisplaySurface(options: options(backend: .wayland, socket: weston.socketPath))
        defer { surface.close() }
        #expect(surface.backend == .wayland)
        #expect(surface.width == 200 && surface.height == 150, "the size a swapchain should have")
        #expect(surface.glesMajorVersion == 0)
        let window = try #require(surface.nativeWindow)
        #expect(window.waylandDisplay != nil && window.waylandSurface != nil)
        #expect(surface.environment.contains { $0.key == "graphics" && $0.value == .string("external (the program presents)") })
        #expect(!surface.environment.contains { $0.key == "egl_vendor" })
        #expect(throws: DisplaySurfaceError.noGLESContext) { try surface.beginFrame() }
        #expect(throws: DisplaySurfaceError.noGLESContext) { try surface.present() }
        #expect(throws: DisplaySurfaceError.noGLESContext) { try surface.readPixels() }
        #expect(throws: DisplaySurfaceError.noGLESContext) { try surface.prepare {} }
        surface.willCommit(bufferWidth: 200, bufferHeight: 150)  // no frame requested yet: nothing to send, nothing breaks
        #expect(surface.error == nil)
        surface.close()
        #expect(surface.nativeWindow == nil, "no handles once the surface is closed")
    }

    @Test("a GLES surface hands out no native window, and its commit hook does nothing")
    func glesHasNoNativeWindow() throws {
        let surface = try DisplaySurface(options: .init(width: 64, height: 64, backend: .offscreen))
        defer { surface.close() }
        #expect(surface.nativeWindow == nil)
        surface.willCommit(bufferWidth: 64, bufferHeight: 64)
        #expect(surface.error == nil)
    }

    @Test("on DRM/KMS and offscreen the open fails with a typed error before anything is opened")
    func unsupportedBackends() {
        var drm = options(backend: .drm)
        drm.devicePath = "/nonexistent/card9"  // never reached: no device is opened, no master taken
        #expect(throws: DisplaySurfaceError.self) { try DisplaySurface(options: drm) }
        do {
            _ = try DisplaySurface(options: drm)
        } catch {
            guard case .externalGraphicsUnsupported(.drm, let reason) = error else {
                Issue.record("expected externalGraphicsUnsupported(.drm), got \(error)")
                return
            }
            #expect(reason.contains("VK_KHR_display"))
            #expect(error.description.hasPrefix("DisplaySurface.Options.graphics = .external is not supported on DRM/KMS"))
        }
        do {
            _ = try DisplaySurface(options: options(backend: .offscreen))
            Issue.record("offscreen opened without GLES")
        } catch {
            guard case .externalGraphicsUnsupported(.offscreen, _) = error else {
                Issue.record("expected externalGraphicsUnsupported(.offscreen), got \(error)")
                return
            }
        }
    }

    @Test("auto without a compositor lists both attempts: Wayland unreachable, DRM/KMS unsupported for external graphics")
    func autoWithoutCompositor() {
        do {
            _ = try DisplaySurface(options: options(backend: .auto, socket: "/nonexistent/wayland-socket"))
            Issue.record("opened without a compositor")
        } catch {
            guard case .noDisplay(let tried) = error else {
                Issue.record("expected noDisplay, got \(error)")
                return
            }
            #expect(tried.map(\.backend) == [.wayland, .drm])
            if case .externalGraphicsUnsupported(.drm, _) = tried.last?.error {
            } else {
                Issue.record("the DRM/KMS attempt: \(String(describing: tried.last?.error))")
            }
        }
    }
}
