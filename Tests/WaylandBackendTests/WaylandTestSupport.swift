import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import DisplayLinkWaylandTesting
import WaylandBackend

/// Waits on the main actor (letting the main queue run the Wayland loop) until `condition` holds
/// or `limit` passes; the limit only guards against hangs, it is not a timing assertion.
@MainActor
func wait(upTo limit: Duration = .seconds(20), until condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// A compositor round trip: returns once the compositor has handled every request sent so far
/// and the events they caused have been dispatched (false only if the connection failed or the
/// hang guard ran out).
@MainActor
func roundtrip(_ connection: WaylandConnection) async -> Bool {
    var done = false
    connection.sync { done = true }
    return await wait(upTo: .seconds(60)) { done || connection.error != nil } && done
}

/// A window on a private weston with a link that draws a quad moving by deltaTime, and that
/// records every callback and every presentation feedback.
@MainActor
final class PacedClient {
    let connection: WaylandConnection
    let window: WaylandWindow
    let egl: WaylandEGLWindow
    let source: WaylandFrameSource
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var feedback: [PresentationFeedback] = []
    var draws = true
    /// Callbacks at the start that draw nothing (a program whose assets are still loading).
    var drawsNothingFirst = 0
    var x = 0.0
    var painter = ScissorPainter()
    var swapError: EGLError?

    convenience init(weston: HeadlessWeston, presentation: Bool = true, size: Int32 = 250,
                     configuration: WaylandFrameSource.Configuration = .init()) throws {
        try self.init(socket: weston.socketPath, options: .init(bindPresentationTime: presentation), size: size,
                      configuration: configuration)
    }

    init(socket: String, options: WaylandConnection.Options = .init(), size: Int32 = 250, fullscreen: Bool = false,
         configuration: WaylandFrameSource.Configuration = .init()) throws {
        connection = try WaylandConnection(socket: socket, options: options)
        window = try WaylandWindow(connection: connection, title: "test", appID: "displaylink.test",
                                   width: size, height: size, fullscreen: fullscreen)
        egl = try WaylandEGLWindow(window: window)
        source = WaylandFrameSource(window: window, configuration: configuration)
        egl.frameSource = source
    }

    /// Starts the link. `realGap`: a frame after a stall (the compositor was slow for longer than
    /// the stall timeout, as on a loaded host) keeps `delta` equal to the timestamp difference.
    func start(stallPolicy: DisplayLink.StallPolicy = .realGap) {
        let link = DisplayLink(source: source, target: self) { client, link in client.tick(link) }
        link.stallPolicy = stallPolicy
        link.presentationHandler = { [weak self] in self?.feedback.append($0) }
        self.link = link
    }

    func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        guard frames.count > drawsNothingFirst else { return }
        guard draws || frames.count == drawsNothingFirst + 1 else { return }
        x += 100 * link.deltaTime
        do { try egl.beginFrame() } catch { swapError = error; return }
        let size = egl.width
        painter.begin(width: size, height: egl.height, background: RGBA(0.1, 0.1, 0.15))
        painter.fill(x: Int32(x.truncatingRemainder(dividingBy: Double(size - 40))), y: 100, width: 40, height: 40,
                     color: RGBA(0.9, 0.3, 0.2))
        do { try egl.swapBuffers() } catch { swapError = error }
    }

    var presentedTimes: [Int64] {
        feedback.compactMap {
            if case .presented(let at, _) = $0.outcome { return at.nanoseconds }
            return nil
        }
    }
}
