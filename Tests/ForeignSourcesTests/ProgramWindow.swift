import Dispatch
import DisplayLinkCore
import DisplayLinkWaylandTesting
import EGLGraphics
import ForeignSources
import GLESRenderer
import WaylandBackend

/// A program with a window of its own on a private compositor (its own connection, toplevel and
/// EGL swap, as SDL or GLFW would have), followed by a link on a ``ForeignWaylandSurface``: the
/// client of these tests. Records every callback and every presentation feedback.
@MainActor
final class ProgramWindow {
    let connection: WaylandConnection
    let window: WaylandWindow
    let egl: WaylandEGLWindow
    let paced: ForeignWaylandSurface
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var feedback: [PresentationFeedback] = []
    /// Whether each frame is announced with the commit hook.
    var usesHook = true
    /// Whether a callback draws (false: the program draws nothing for a while).
    var draws = true
    /// Whether the frame is drawn in the callback, or at the next turn of the main queue (a
    /// program that draws in its own loop after the callback returned).
    var drawsInCallback = true
    private(set) var commits = 0
    private var painter = ScissorPainter()
    var swapError: EGLError?

    init(on compositor: any PrivateCompositor, options: ForeignWaylandSurface.Options = .init()) throws {
        connection = try WaylandConnection(socket: compositor.socketPath)
        window = try WaylandWindow(connection: connection, title: "program", appID: "displaylink.program", width: 160, height: 120)
        // The program's own swap: no frame source of the library's is told about it.
        egl = try WaylandEGLWindow(window: window)
        paced = try ForeignWaylandSurface(
            display: UnsafeMutableRawPointer(connection.displayHandle), surface: UnsafeMutableRawPointer(window.surfaceHandle),
            options: options)
    }

    func start() {
        let link = DisplayLink(source: paced, target: self) { program, link in program.tick(link) }
        link.stallPolicy = .realGap
        link.presentationHandler = { [weak self] in self?.feedback.append($0) }
        self.link = link
    }

    private func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        guard draws else { return }
        if drawsInCallback {
            draw()
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { self.draw() } }
        }
    }

    func draw() {
        do { try egl.beginFrame() } catch { swapError = error; return }
        painter.begin(width: egl.width, height: egl.height, background: RGBA(0.1, 0.1, 0.15))
        painter.fill(x: Int32(commits % 100), y: 20, width: 30, height: 30, color: RGBA(0.9, 0.3, 0.2))
        if usesHook { paced.willCommit() }
        do { try egl.swapBuffers() } catch { swapError = error }
        commits += 1
    }

    var presentedTimes: Set<Int64> {
        Set(feedback.compactMap { if case .presented(let at, _) = $0.outcome { at.nanoseconds } else { nil } })
    }

    /// What holds at any speed: deltas are timestamp differences (0 first), timestamps and
    /// targets never go back, and every feedback-stamped timestamp is a time the compositor reported.
    func violations() -> [String] {
        var found: [String] = []
        if let first = frames.first, first.delta != .zero { found.append("first delta \(first.delta)") }
        for (a, b) in zip(frames, frames.dropFirst()) {
            if b.timestamp < a.timestamp { found.append("timestamp back at \(b.refreshIndex)") }
            if b.targetTimestamp < a.targetTimestamp { found.append("target back at \(b.refreshIndex)") }
            if b.delta != .zero && b.delta != b.timestamp - a.timestamp { found.append("delta at \(b.refreshIndex)") }
            if b.targetTimestamp <= b.timestamp { found.append("target not after timestamp at \(b.refreshIndex)") }
        }
        let reported = presentedTimes
        for frame in frames where frame.provenance == .presentationFeedback && !reported.contains(frame.timestamp.nanoseconds) {
            found.append("frame \(frame.refreshIndex) stamped \(frame.timestamp.nanoseconds), which no feedback reported")
        }
        return found
    }
}
