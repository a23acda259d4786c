@testable import DRMBackend
import DisplayLinkCore
import SystemPackage
import Testing

@Suite("DRM mode timings (pure)")
struct DisplayModeTests {
    @Test("period = htotal·vtotal / clock, exact to the nanosecond, not the rounded vrefresh")
    func periodFromTimings() {
        // vkms's 1024x768@60 (VESA DMT): 1344×806 at 65000 kHz.
        let xga = DisplayMode(width: 1024, height: 768, htotal: 1344, vtotal: 806, clock: 65_000, vrefresh: 60)
        #expect(xga.period.value == 16_665_600)  // 1344·806/65 MHz = 16.6656 ms (vkms measures 16665.6 µs)
        let vga = DisplayMode(width: 640, height: 480, htotal: 800, vtotal: 525, clock: 25_175, vrefresh: 60)
        #expect(vga.period.value == 16_683_217)  // 59.94 Hz, not 60
        #expect(DisplayMode(width: 640, height: 480, htotal: 800, vtotal: 525, clock: 25_175, interlaced: true).period.value == 8_341_609)
        #expect(DisplayMode(width: 320, height: 240, htotal: 400, vtotal: 262, clock: 12_575, doubleScan: true).period.value == 16_667_992)
    }

    @Test("a mode retimed to 144 Hz has a period of exactly 1/144 s")
    func retimed144() {
        let vga = DisplayMode(width: 640, height: 480, htotal: 800, vtotal: 525, clock: 25_175)
        let fast = vga.retimed(to: 144)
        #expect(fast.clock == 60_480)
        #expect(fast.period.value == 6_944_444)
        #expect(fast.refreshRate == 144)
        for hz in [30, 75, 120, 144] {
            #expect(abs(vga.retimed(to: hz).refreshRate - Double(hz)) < 1e-9, "\(hz) Hz")
        }
    }

    @Test("mode requests: parsing, selection, custom rates, and what is not there")
    func requests() throws {
        let listed = [
            DisplayMode(width: 1024, height: 768, htotal: 1344, vtotal: 806, clock: 65_000, vrefresh: 60, isPreferred: true),
            DisplayMode(width: 640, height: 480, htotal: 800, vtotal: 525, clock: 25_175, vrefresh: 60)
        ]
        #expect(try ModeRequest(parsing: "1024x768").select(from: listed) == listed[0])
        #expect(try ModeRequest(parsing: "640x480").select(from: listed) == listed[1])
        #expect(try ModeRequest(parsing: "640x480@144").select(from: listed).period.value == 6_944_444)
        #expect(throws: ModeRequest.SyntaxError(text: "640by480")) { try ModeRequest(parsing: "640by480") }
        #expect(throws: ModeRequest.SyntaxError(text: "640x480@0")) { try ModeRequest(parsing: "640x480@0") }
        #expect(throws: DRMError.modeNotFound(requested: "1234x777", available: ["1024x768", "640x480"])) {
            try ModeRequest(parsing: "1234x777").select(from: listed)
        }
        #expect(
            DRMError.modeNotFound(requested: "1234x777", available: ["1024x768"]).description
                == "The display has no 1234x777 mode. It offers: 1024x768.")
    }

    @Test("opening errors say what to do")
    func openErrors() {
        #expect(DRMDisplay.openError(path: "/dev/dri/card0", errno: Errno(rawValue: 13)) == .permissionDenied(path: "/dev/dri/card0"))
        #expect(DRMDisplay.openError(path: "/dev/dri/card0", errno: Errno(rawValue: 13)).description.contains("video"))
        #expect(DRMDisplay.openError(path: "/dev/dri/card7", errno: Errno(rawValue: 2)) == .noDevice(path: "/dev/dri/card7"))
    }
}
