import DisplayLinkCore
import DRMBackend
import EGLGraphics

/// The demo on a bare DRM/KMS display, keys from the console.
@MainActor
final class DRMHost: DisplayHost {
    let backendName = "drm"
    let display: DRMDisplay
    private let keyboard: ConsoleKeyboard?
    var onQuit: (() -> Void)?
    var onFatalError: ((String) -> Void)?
    var onKey: ((DemoKey) -> Void)?

    var frameSource: any FrameSource { display }
    var width: Int32 { display.width }
    var height: Int32 { display.height }
    var glesMajorVersion: Int32 { display.context.glesMajorVersion }

    init(options: DRMDisplay.Options) throws {
        display = try DRMDisplay(options: options)
        keyboard = ConsoleKeyboard()
        display.onError = { [weak self] error in self?.onFatalError?(error.description) }
        keyboard?.onKey = { [weak self] byte in
            switch byte {
            case UInt8(ascii: " "): self?.onKey?(.togglePause)
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"): self?.onKey?(.scroll)
            case UInt8(ascii: "q"), 0x1b: self?.onKey?(.quit)
            default: break
            }
        }
    }

    var environment: [(String, JSONValue)] {
        [
            ("device", .string(display.devicePath)),
            ("driver", .string(display.driverName)),
            ("connector", .string(display.connectorName)),
            ("mode", .string(display.mode.description)),
            ("presentation_clock", .string("CLOCK_MONOTONIC")),
            ("refresh_advertised", .number(Double(display.mode.vrefresh))),
            ("refresh_exact", .number(display.mode.refreshRate)),
            ("period_exact", .number(display.mode.period.seconds)),
            ("flips_submitted", .int(display.flipsSubmitted)),
            ("flips_completed", .int(display.flipsCompleted)),
            ("egl_driver", display.context.driverName.map { .string($0) } ?? .null),
            ("buffers_kept_mapped", .bool(display.keepsBuffersMapped)),
        ]
    }

    /// Draws into every buffer of the GBM surface and registers each for scanout before the mode
    /// is set (nothing is shown), so the first animated frames do not pay for buffer set-up.
    func warmUp(draw: () -> Void) throws {
        try display.prepareBuffers(draw: draw)
        try display.beginFrame()
    }

    func beginFrame() throws { try display.beginFrame() }
    func releaseGL() { display.releaseCurrent() }
    func present(damage: PixelRect?) throws { try display.present() }

    func shutDown() {
        keyboard?.restore()
        display.shutDown()
    }
}
