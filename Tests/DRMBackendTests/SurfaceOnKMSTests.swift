import DRMBackend
import DisplayLinkWaylandTesting
import DisplayLinkCore
import DisplaySurface
import Foundation
import GLESRenderer
import Testing

/// DisplaySurface on vkms: in the VKMS suite, so never at the same time as its tests (one master).
extension VKMSTests {
    @Test(
        """
        DisplaySurface: auto without a compositor opens the KMS output: mode size, environment, warm-up, frames with beginFrame/present, \
        read-back; close restores the CRTC
        """
    )
    func surfaceAutoOpensKMS() async throws {
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        let surface = try DisplaySurface(
            options: .init(
                backend: .auto, mode: .init(width: 640, height: 480),
                waylandSocket: "/tmp/no-compositor-\(getpid())",
                readsConsoleKeys: false))
        #expect(surface.backend == .drm)
        #expect(surface.width == 640 && surface.height == 480)
        let keys = surface.environment.map(\.key)
        for key in ["device", "driver", "period_exact", "egl_driver", "buffers_kept_mapped", "flips_completed"] {
            #expect(keys.contains(key), "environment lacks \(key)")
        }
        var painter = ScissorPainter()
        var warmUps = 0
        try surface.prepare {
            warmUps += 1
            painter.begin(width: 640, height: 480, background: RGBA(0, 0, 0))
        }
        #expect(warmUps >= 2, "each scan-out buffer drawn once")
        final class Counter { var frames = 0; var pixels: [UInt8]?; var failure: Error? }
        let counter = Counter()
        let link = DisplayLink(source: surface, target: counter) { counter, _ in
            counter.frames += 1
            do {
                try surface.beginFrame()
                painter.begin(width: 640, height: 480, background: RGBA(0, 1, 0))
                if counter.frames == 5 { counter.pixels = try surface.readPixels() }
                try surface.present()
            } catch { counter.failure = error }
        }
        #expect(await eventually(within: .seconds(60)) { counter.frames >= 20 || counter.failure != nil })
        #expect(counter.failure == nil, "\(String(describing: counter.failure))")
        #expect(counter.pixels.map { Array($0[0..<3]) } == [0, 255, 0])
        #expect(crtc.state?.buffer != before?.buffer, "the surface's frames are on the CRTC")
        surface.close()
        #expect(!link.isValid)
        #expect(crtc.state?.buffer == before?.buffer, "CRTC not restored")
        if case .int(let flips)? = surface.environment.first(where: { $0.key == "flips_completed" })?.value {
            #expect(flips > 0)
        } else {
            Issue.record("no flips_completed after close")
        }
    }

    @Test("DisplaySurface: DRM errors through the surface name its options")
    func surfaceErrors() throws {
        #expect(throws: DisplaySurfaceError.drm(.noDevice(path: "/dev/dri/card9"))) {
            try DisplaySurface(options: .init(backend: .drm, devicePath: "/dev/dri/card9"))
        }
        do {
            _ = try DisplaySurface(options: .init(backend: .drm, mode: .init(width: 1234, height: 777), readsConsoleKeys: false))
            Issue.record("a mode the display lacks was accepted")
        } catch {
            #expect(error.description.contains("DisplaySurface.Options.mode"))
            #expect(!error.description.contains("--"))
        }
    }
}
