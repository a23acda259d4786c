import DisplayLinkCore
import EGLGraphics
import WaylandBackend

/// The demo on a Wayland compositor: a window, EGL on it, and the frame source.
@MainActor
final class WaylandHost: DisplayHost {
    let backendName = "wayland"
    let connection: WaylandConnection
    let window: WaylandWindow
    let egl: WaylandEGLWindow
    let source: WaylandFrameSource
    var onQuit: (() -> Void)?
    var onFatalError: ((String) -> Void)?
    var onKey: ((DemoKey) -> Void)?
    private var weston: HeadlessWeston?

    var frameSource: any FrameSource { source }
    var width: Int32 { egl.width }
    var height: Int32 { egl.height }
    var glesMajorVersion: Int32 { egl.context.glesMajorVersion }

    init(socket: String?, weston: HeadlessWeston?, width: Int32, height: Int32, title: String) throws {
        self.weston = weston
        connection = try WaylandConnection(socket: socket ?? weston?.socketPath)
        window = try WaylandWindow(connection: connection, title: title, appID: "org.displaylink.demo",
                                   width: width, height: height)
        egl = try WaylandEGLWindow(window: window)
        source = WaylandFrameSource(window: window)
        egl.frameSource = source
        window.onClose = { [weak self] in self?.onQuit?() }
        window.onResize = { [weak self] w, h in self?.egl.resize(width: w, height: h) }
        connection.onError = { [weak self] error in self?.onFatalError?(error.description) }
        connection.keyboard?.onKeyPress = { [weak self] sym in
            switch sym {
            case WaylandKeyboard.KeySym.space: self?.onKey?(.togglePause)
            case WaylandKeyboard.KeySym.returnKey, WaylandKeyboard.KeySym.keypadEnter: self?.onKey?(.scroll)
            case WaylandKeyboard.KeySym.q, WaylandKeyboard.KeySym.escape: self?.onKey?(.quit)
            default: break
            }
        }
    }

    var environment: [(String, JSONValue)] {
        var env: [(String, JSONValue)] = [
            ("compositor", .string(connection.compositorName ?? "unknown")),
            ("socket", .string(connection.socketName)),
            ("presentation_clock", connection.presentationClock.map { .string($0.description) } ?? .null),
        ]
        let advertised = window.outputs.first?.advertisedPeriod ?? source.timeline.advertisedPeriod
        env.append(("refresh_advertised", advertised.value > 0 ? .number(1 / advertised.seconds) : .null))
        env.append(("egl_vendor", .string(egl.context.vendor)))
        env.append(("gles_version", .int(Int(egl.context.glesMajorVersion))))
        env.append(("swap_with_damage", .bool(egl.context.supportsSwapWithDamage)))
        env.append(("headless_weston", .bool(weston != nil)))
        return env
    }

    func beginFrame() throws {
        try egl.beginFrame()
    }

    func releaseGL() {
        egl.releaseCurrent()
    }

    func present(damage: PixelRect?) throws {
        try egl.swapBuffers(damage: damage)
    }

    func shutDown() {
        window.destroy()
        weston?.stop()
        weston = nil
    }
}
