import Glibc

/// What every private compositor of this module offers once it runs, whichever launcher started
/// it (``HeadlessWeston``, ``HeadlessMutter``, ``HeadlessRootCompositor``): where a client
/// connects, its process group and log, and stopping it (by ``stop()`` or deinit). The launchers
/// differ only in what they start; the process group does the rest for each of them.
public class HeadlessCompositor {
    /// Spawns, waits for the socket, stops and cleans up.
    let process: CompositorProcessGroup

    init(process: CompositorProcessGroup) {
        self.process = process
    }

    deinit { stop() }

    /// The absolute path of the compositor's socket: pass it to `WaylandConnection(socket:)`.
    public var socketPath: String { process.socketPath }
    /// The directory of the socket: `XDG_RUNTIME_DIR` for a client process.
    public var runtimeDirectory: String { process.runtimeDirectory }
    /// The compositor's log (its standard output and error, and those of its launcher).
    public var logPath: String { process.logPath }
    /// The process group (its leader's pid: the compositor, or the launcher that runs it with its
    /// session bus) of the compositor (0 once stopped).
    public var pid: pid_t { process.pid }

    /// Whether the group's leader is still running.
    public var isRunning: Bool { process.isRunning }

    /// Stops the process group (SIGTERM, continued if stopped by SIGSTOP so it handles that at
    /// once, then SIGKILL after 3 s) and removes the runtime directory (and, in a root, its mount
    /// point there). Idempotent.
    public func stop() { process.stop() }

    /// The compositor's log so far.
    public func readLog() -> String { process.readLog() }
}

// One owner at a time (a test, a benchmark); Sendable so that a compositor can be started off the
// calling thread (each launcher's `start`) and handed back.
extension HeadlessCompositor: @unchecked Sendable {}
