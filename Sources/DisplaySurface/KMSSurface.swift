import Dispatch
import DisplayLinkCore
import ConsoleSeat
import DRMBackend
import EGLGraphics
import FrameSchedulers
import SurfaceBackend

/// The DRM/KMS backend of a ``DisplaySurface``: a KMS output paced by its page flips, with the
/// console's keys (the terminal on standard input), or the seat's keyboards, pointers and
/// touchscreens through libinput, positions in the output's points (its pixels: scale 1).
@MainActor
final class KMSSurface: DisplaySurfaceBackend {
    let dispatcher: RefreshDispatcher
    let glesMajorVersion: Int32
    /// The mode's size (the surface is the whole output).
    let width: Int32, height: Int32
    /// Options.scale, else the one the output's physical size gives.
    let surfaceScale: SurfaceScale
    var events = SurfaceBackendEvents()
    private var display: DRMDisplay?
    private var consoleKeyboard: TerminalKeyboard?
    private var consoleInput: SeatInput?
    private var keyDecoder = TerminalKeyDecoder()
    private var keyFlushPending = false

    /// Opens the output `options` name (device, mode, KMS API, seat access) and, when asked,
    /// the console's keys.
    init(options: DisplaySurface.Options) throws(SurfaceBackendError) {
        let mode = options.mode
        let display: DRMDisplay
        do {
            display = try DRMDisplay(
                options: DRMDisplay.Options(
                    devicePath: options.devicePath, mode: mode, kmsAPI: options.kmsAPI,
                    session: SeatSession.Options(manager: options.seatAccess), latency: options.latency))
        } catch {
            throw SurfaceBackendError(.drm(error))
        }
        self.display = display
        dispatcher = display.dispatcher
        glesMajorVersion = display.context.glesMajorVersion
        width = display.width
        height = display.height
        surfaceScale =
            options.scale.flatMap(SurfaceScale.option)
            ?? SurfaceScale.physical(
                pixelWidth: display.width, pixelHeight: display.height,
                millimetreWidth: display.physicalSize.width, millimetreHeight: display.physicalSize.height)
        display.onError = { [weak self] error in self?.events.failed?(SurfaceBackendError(.drm(error))) }
        if options.readsConsoleKeys { openKeys(session: display.session) }
    }

    private func openKeys(session: SeatSession) {
        // A terminal on standard input (interactive use): its keys in raw mode. Without one (a
        // systemd unit on a console): the console's keyboards through the seat (libinput).
        if let keyboard = TerminalKeyboard() {
            consoleKeyboard = keyboard
            keyboard.onKey = { [weak self] byte in self?.consoleByte(byte) }
            DisplaySurface.log.debug("keys: from the terminal on standard input (raw mode)")
            return
        }
        do {
            let input = try SeatInput(session: session, width: Double(width), height: Double(height))
            // Key presses reach onKey from the input events (SurfaceBackendEvents.key is for
            // the terminal's keys, which give no input events).
            input.onInput = { [weak self] event in self?.events.input?(event) }
            consoleInput = input
            DisplaySurface.log.debug(
                """
                keys: no terminal on standard input; the console's keyboards through libinput \
                (\(input.keyboards.joined(separator: ", "))); pointers (\(input.pointers.joined(separator: ", "))); \
                touchscreens (\(input.touchscreens.joined(separator: ", ")))
                """)
        } catch {
            // A warning, not a debug line: the program asked for keys (the default) and gets none;
            // the error says what was found for each device (e.g. no udev database entry).
            DisplaySurface.log.warning(
                """
                keys: no terminal on standard input and the console's input devices cannot be read, so onKey \
                and onInput get nothing (\(error)); set DisplaySurface.Options.readsConsoleKeys = false if none are needed
                """)
        }
    }

    private func consoleByte(_ byte: UInt8) {
        keyDecoder.feed(byte) { symbol in events.key?(symbol.rawValue) }
        // The keyboard hands over one read's bytes in a row: once they are all in, a lone
        // Escape is the Escape key (not the start of a cursor key's sequence).
        guard !keyDecoder.isIdle, !keyFlushPending else { return }
        keyFlushPending = true
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.keyFlushPending = false
                self.keyDecoder.finish { symbol in self.events.key?(symbol.rawValue) }
            }
        }
    }

    var scale: Double { surfaceScale.factor }

    var environment: [EnvironmentEntry] {
        guard let display else { return [] }
        return [
            EnvironmentEntry("device", .string(display.devicePath)),
            EnvironmentEntry("driver", .string(display.driverName)),
            EnvironmentEntry("connector", .string(display.connectorName)),
            EnvironmentEntry("mode", .string(display.mode.description)),
            EnvironmentEntry("presentation_clock", .string("CLOCK_MONOTONIC")),
            EnvironmentEntry("refresh_advertised", .number(Double(display.mode.vrefresh))),
            EnvironmentEntry("refresh_exact", .number(display.mode.refreshRate)),
            EnvironmentEntry("period_exact", .number(display.mode.period.seconds)),
            EnvironmentEntry("flips_submitted", .int(display.flipsSubmitted)),
            EnvironmentEntry("flips_completed", .int(display.flipsCompleted)),
            EnvironmentEntry("egl_driver", display.context.driverName.map { .string($0) } ?? .unknown),
            EnvironmentEntry("buffers_kept_mapped", .bool(display.keepsBuffersMapped)),
            EnvironmentEntry("kms_api", .string(display.kmsAPI.rawValue)),
            EnvironmentEntry("pacing", .string(display.pacing.rawValue)),
            EnvironmentEntry("quirks", .string(display.quirks.description)),
            EnvironmentEntry("latency", .string(display.pacing == .vblank ? display.latency.rawValue : "throughput")),
            EnvironmentEntry("physical_size_mm", .string("\(display.physicalSize.width)x\(display.physicalSize.height)")),
            EnvironmentEntry("scale", .string(surfaceScale.description))
        ]
    }

    /// Always: the surface is the whole output.
    var isFullscreen: Bool { true }

    /// Nothing to do: the surface is the whole output.
    func setFullscreen(_ on: Bool) {}

    func beginFrame() throws(SurfaceBackendError) {
        do { try display?.beginFrame() } catch { throw SurfaceBackendError(backend: "drm", error) }
    }

    func present(damage: PixelRect?, keepsContextCurrent: Bool) throws(SurfaceBackendError) {
        guard let display else { return }
        display.staysCurrentAfterSwap = keepsContextCurrent
        do { try display.present() } catch { throw SurfaceBackendError(.drm(error)) }
    }

    func releaseContext() {
        display?.releaseCurrent()
    }

    /// Each buffer of the scan-out chain drawn once and registered for scan-out too.
    func prepare(draw: () -> Void) throws(SurfaceBackendError) {
        do { try display?.prepareBuffers(draw: draw) } catch { throw SurfaceBackendError(.drm(error)) }
    }

    func readPixels() -> [UInt8]? {
        display?.surface.readPixels(width: width, height: height)
    }

    /// Keys first (the terminal goes back to how it was), then the previous CRTC restored and
    /// master dropped, then (as the display object goes) EGL, and after it the GBM objects and
    /// the device's descriptor.
    func close() {
        consoleKeyboard?.onKey = nil
        consoleKeyboard?.restore()
        consoleKeyboard = nil
        consoleInput?.close()
        consoleInput = nil
        if let display {
            display.onError = nil
            display.shutDown()
            self.display = nil
        }
    }
}
