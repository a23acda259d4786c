import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import Testing
import DisplayLinkWaylandTesting
import WaylandBackend

/// An opaque fullscreen window of another client that covers everything on its output: it draws
/// one frame (an XRGB buffer, so mutter's culling treats it as opaque) and is then left alone.
@MainActor
final class CoverWindow {
    let connection: WaylandConnection
    let window: WaylandWindow
    let egl: WaylandEGLWindow

    init(socket: String) throws {
        connection = try WaylandConnection(socket: socket)
        window = try WaylandWindow(
            connection: connection, title: "cover", appID: "displaylink.cover",
            width: 64, height: 64, fullscreen: true)
        egl = try WaylandEGLWindow(window: window)
        try draw()
    }

    /// Draws one frame at the window's configured size.
    func draw() throws {
        egl.resize(width: window.width, height: window.height)
        try egl.beginFrame()
        var painter = ScissorPainter()
        painter.begin(width: egl.width, height: egl.height, background: RGBA(0.2, 0.4, 0.2))
        try egl.swapBuffers()
    }

    func close() {
        window.destroy()
    }
}

/// The `suspended` state of xdg_wm_base 6 driven on a real mutter 48 (Debian 13 root).
///
/// mutter 48 (src/core/window.c, update_suspend_state) suspends a window when nothing of it can be
/// seen: its surface actors are all obscured (culled away by an opaque window above them, at the
/// stage's before-paint) or the window is hidden (minimised, another workspace). The window first
/// goes to a `hidden` state and becomes `suspended` 3 s later (SUSPEND_HIDDEN_TIMEOUT_S); as soon
/// as any of it is unobscured again it is active at once. A client can cause and undo that without
/// input: an opaque fullscreen window of another client covers it, and closing that window
/// uncovers it. (Minimising also suspends it, but xdg-shell has no request to unminimise, and
/// xdg_activation_v1 only activates with a token tied to a recent input event, which a headless
/// compositor without a seat never has.)
///
/// Asserted so that it holds at any machine speed: the limits on the waits only turn a hang
/// into a failure.
@MainActor
@Suite("suspended state under a real mutter 48", .serialized)
struct MutterSuspendTests {
    @Test(
        """
        mutter 48: a window suspended before its first frame (left unmapped past mutter's hidden timeout) still draws it, is shown, \
        resumed and paced
        """)
    func suspendedBeforeFirstFrame() async throws {
        let mutter = try await HeadlessMutter.mutter48()
        defer { mutter.stop() }
        // Fullscreen, configured at the output's size but not mapped (no buffer yet): mutter hides
        // the window at once and suspends it SUSPEND_HIDDEN_TIMEOUT_S later (a window first
        // configured 0×0 got no such configure here: mutter sends state changes only after a
        // sized configure). Waited for as an event, at any speed.
        let client = try PacedClient(on: mutter, fullscreen: true)
        let suspended = await eventually(within: .seconds(60)) { client.window.isSuspended }
        #expect(suspended, "the unmapped window was never suspended; mutter log:\n\(mutter.readLog())")
        guard suspended else { return }
        #expect(client.source.isSuspended)

        // The link starts while suspended: its first frame maps the window (the compositor can
        // only resume a window it can show), mutter shows and resumes it, and callbacks pace it.
        let running = await client.run(within: .seconds(60), stallPolicy: .zeroDelta) {
            client.presentedTimes.count >= 3 || client.swapError != nil
        }
        #expect(
            running,
            """
            no frames after a suspension before the first one (frames \(client.frames.count), requests \(client.source.frameRequestCount), \
            suspended \(client.source.isSuspended)); mutter log:\n\(mutter.readLog())
            """)
        #expect(client.swapError == nil)
        #expect(!client.source.isSuspended && !client.window.isSuspended)
        #expect(!client.window.outputs.isEmpty, "the window was never shown on an output")
        #expect(client.frames.count >= 3)
        client.link?.invalidate()
    }

    @Test(
        """
        mutter 48: a window covered by an opaque fullscreen window is suspended (no callbacks, no requests, no watchdog), and when \
        uncovered resumes with a zero delta
        """)
    func coveredSuspendsAndUncoveredResumes() async throws {
        let mutter = try await HeadlessMutter.mutter48()
        defer { mutter.stop() }
        let client = try PacedClient(on: mutter)
        // Every change of the state, with the number of callbacks so far (the source's own handler
        // runs before this one, so the count is that at the change).
        var transitions: [(suspended: Bool, frames: Int, requests: Int)] = []
        client.window.onSuspendedChange = { [unowned client] suspended in
            transitions.append((suspended, client.frames.count, client.source.frameRequestCount))
        }
        let running = await client.run(within: .seconds(60), stallPolicy: .zeroDelta) {
            client.presentedTimes.count >= 5 || client.swapError != nil
        }
        #expect(running, "the window was never presented; mutter log:\n\(mutter.readLog())")
        guard running else { return }
        #expect(!client.source.isSuspended)

        // Covered: mutter suspends the window (after its hidden timeout).
        let cover = try CoverWindow(socket: mutter.socketPath)
        #expect(cover.window.isFullscreen, "mutter did not make the cover fullscreen")
        let suspended = await eventually(within: .seconds(60)) { client.source.isSuspended || client.swapError != nil }
        #expect(suspended, "covered by an opaque fullscreen window, the window was never suspended; mutter log:\n\(mutter.readLog())")
        guard suspended else { cover.close(); return }
        #expect(client.window.isSuspended)
        #expect(!client.source.isWatchdogArmed)
        // Quiet while suspended: no frame request and no callback, across round trips that
        // deliver everything the compositor sent.
        for _ in 0..<3 { _ = await roundtrip(client.connection) }
        let framesWhileSuspended = client.frames.count
        let requestsWhileSuspended = client.source.frameRequestCount
        for _ in 0..<3 {
            _ = await roundtrip(client.connection)
            _ = await roundtrip(cover.connection)
        }
        #expect(client.source.isSuspended)
        #expect(client.frames.count == framesWhileSuspended)
        #expect(client.source.frameRequestCount == requestsWhileSuspended)
        #expect(!client.source.isWatchdogArmed)

        // Uncovered: mutter makes the window active at its next paint, and the link resumes.
        cover.close()
        let resumed = await eventually(within: .seconds(60)) {
            (!client.source.isSuspended && client.frames.count > framesWhileSuspended + 2) || client.swapError != nil
        }
        #expect(
            resumed,
            """
            the window was not resumed after the cover closed (suspended: \(client.source.isSuspended)); mutter log:\n\(mutter.readLog())
            """)
        client.link?.invalidate()
        #expect(client.swapError == nil)
        #expect(client.connection.error == nil)
        guard resumed else { return }

        // Suspensions and resumes alternate, starting with a suspension and ending resumed (mutter
        // may suspend and resume more than once while the cover maps or closes, as its paints
        // fall); nothing is delivered or requested while suspended, and the first callback after
        // each resume has a zero delta (stall policy .zeroDelta).
        let states = transitions.map(\.suspended)
        #expect(states.count >= 2 && states.count % 2 == 0, "transitions: \(states)")
        #expect(states.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 0) }, "transitions: \(states)")
        let frames = client.frames
        guard states.count >= 2, states.count % 2 == 0, let last = transitions.last,
            last.frames > 0, frames.count > last.frames
        else { return }
        for pair in stride(from: 0, to: transitions.count, by: 2) {
            let (atSuspend, atResume) = (transitions[pair], transitions[pair + 1])
            #expect(atResume.frames == atSuspend.frames, "callbacks were delivered while suspended (suspension \(pair / 2))")
            #expect(atResume.requests == atSuspend.requests, "frame callbacks were requested while suspended (suspension \(pair / 2))")
            if atResume.frames < frames.count {
                #expect(frames[atResume.frames].delta == .zero, "first delta after resume \(pair / 2): \(frames[atResume.frames].delta)")
            }
        }
        let (atSuspend, atResume) = (transitions[0], last)
        let first = frames[atResume.frames]
        // (Later deltas are not checked: on a loaded host a stall of the compositor may give
        // another zero delta under .zeroDelta.)
        for i in max(1, atSuspend.frames)..<frames.count {
            #expect(frames[i].timestamp >= frames[i - 1].timestamp, "frame \(i)")
            #expect(frames[i].sequence > frames[i - 1].sequence, "frame \(i)")
        }
        print(
            """
            [mutter 48] suspended after \(atSuspend.frames) callbacks, \(transitions.count / 2) suspension(s), resumed with delta \
            \(first.delta); \(frames.count - atResume.frames) callbacks after the resume
            """)
    }
}
