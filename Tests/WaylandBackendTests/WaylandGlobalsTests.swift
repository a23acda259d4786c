import DisplayLinkCore
@testable import WaylandBackend
import Glibc
import DisplayLinkWaylandTesting
import Testing

@Suite("Wayland globals")
struct WaylandGlobalsTests {
    @Test("missing required globals are named, in order")
    func missingNamed() {
        let advertised = [
            WaylandGlobal(name: 1, interface: "wl_shm", version: 1),
            WaylandGlobal(name: 2, interface: "wp_presentation", version: 1)
        ]
        #expect(WaylandGlobals.missing(from: advertised) == ["wl_compositor", "xdg_wm_base"])
        let error = WaylandError.missingGlobals(WaylandGlobals.missing(from: advertised))
        #expect(error.description == "The Wayland compositor does not offer wl_compositor, xdg_wm_base, which this program needs.")
        #expect(
            WaylandGlobals.missing(
                from: advertised + [
                    WaylandGlobal(name: 3, interface: "wl_compositor", version: 5),
                    WaylandGlobal(name: 4, interface: "xdg_wm_base", version: 6)
                ]
            ).isEmpty)
    }

    @Test("versions negotiate down to what both sides speak")
    func negotiation() {
        #expect(WaylandGlobals.negotiated(6, ours: 4) == 4)
        #expect(WaylandGlobals.negotiated(2, ours: 5) == 2)
    }
}

/// A real compositor without a shell for windows: weston's fullscreen shell offers no
/// `xdg_wm_base`. Connecting fails with a typed error, and the half-made connection is torn down
/// once (twice would disconnect a freed display and close a descriptor another file may own).
@MainActor
@Suite("Wayland connections a compositor refuses or leaves unanswered", .serialized)
struct WaylandMissingShellTests {
    @Test("weston with fullscreen-shell: missingGlobals naming xdg_wm_base, three times over, and the process carries on")
    func fullscreenShell() async throws {
        let weston = try await HeadlessWeston.start(extraArguments: ["--shell=fullscreen-shell.so"])
        defer { weston.stop() }
        for _ in 0..<3 {
            do {
                _ = try WaylandConnection(socket: weston.socketPath)
                Issue.record("connected to a compositor without xdg_wm_base")
            } catch {
                #expect(error == .missingGlobals(["xdg_wm_base"]), "\(error)")
            }
        }
        // Descriptors were closed once each: a new pipe gets numbers, and they stay open.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        #expect(fcntl(fds[0], F_GETFD) >= 0 && fcntl(fds[1], F_GETFD) >= 0)
        close(fds[0]); close(fds[1])
    }

    @Test(
        """
        a compositor that accepted the connection and stopped: notResponding after replyTimeout, naming the options; the process carries \
        on
        """
    )
    func stoppedCompositor() async throws {
        let weston = try await HeadlessWeston.start()
        defer { kill(weston.pid, SIGCONT); weston.stop() }
        #expect(kill(weston.pid, SIGSTOP) == 0)
        let timeout = Nanoseconds(300_000_000)
        do {
            _ = try WaylandConnection(socket: weston.socketPath, options: .init(replyTimeout: timeout))
            Issue.record("connected to a stopped compositor")
        } catch {
            #expect(error == .notResponding(socket: weston.socketPath, seconds: 0.3), "\(error)")
            #expect(error.description.contains("did not reply within 0.3 s"), "\(error)")
            #expect(error.description.contains("waylandReplyTimeout in DisplaySurface.Options"))
        }
        // Woken, the same compositor answers a new connection.
        #expect(kill(weston.pid, SIGCONT) == 0)
        let connection = try WaylandConnection(
            socket: weston.socketPath, options: .init(replyTimeout: WaylandConnection.defaultReplyTimeout))
        #expect(connection.error == nil)
    }

    @Test("frame sources made and dropped on one window and connection leave no handler behind")
    func handlersRemoved() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let connection = try WaylandConnection(socket: weston.socketPath)
        let window = try WaylandWindow(connection: connection, title: "handlers", appID: "org.displaylink.test", width: 64, height: 64)
        defer { window.destroy() }
        let before = (connection.handlerCounts, window.handlerCounts)
        for _ in 0..<3 {
            var source: WaylandFrameSource? = WaylandFrameSource(window: window)
            #expect(connection.handlerCounts.afterDispatch == before.0.afterDispatch + 1)
            #expect(window.handlerCounts.suspended == before.1.suspended + 1)
            _ = source
            source = nil
        }
        #expect(connection.handlerCounts == before.0)
        #expect(window.handlerCounts == before.1)
    }
}
