import Glibc

/// What a test needs of a private compositor, whichever launcher runs it: where a client connects,
/// its process group, its log, and stopping it.
package protocol PrivateCompositor: AnyObject, Sendable {
    /// The absolute path of the compositor's socket.
    var socketPath: String { get }
    /// The directory of the socket: `XDG_RUNTIME_DIR` for a client process.
    var runtimeDirectory: String { get }
    /// The compositor's process group (its leader's pid), 0 once stopped.
    var pid: pid_t { get }
    var isRunning: Bool { get }
    func readLog() -> String
    func stop()
}

extension PrivateCompositor {
    /// The variables that send a client process to this compositor: the socket's directory and,
    /// as `WAYLAND_DISPLAY`, its name there.
    package var clientEnvironment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": String(socketPath.split(separator: "/").last ?? "")]
    }
}

extension HeadlessCompositor: PrivateCompositor {}
