/// Why a private compositor did not start: what ``HeadlessWeston``, ``HeadlessMutter`` and
/// ``HeadlessSway`` throw, and ``DebianRoot/path(needing:)`` fails with. The reasons are the same
/// for every compositor (they come from the process group that starts each); only the name and
/// how to install what is missing differ, so they are fields of the one type.
public struct CompositorLaunchError: Error, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// A program it needs is not installed (its name).
        case notInstalled(String)
        /// The Debian root is missing or unusable here; names why and how to build it.
        case noRoot(String)
        case spawnFailed(Int32)
        case exitedEarly(status: Int32, log: String)
        case noSocket(log: String)
    }

    /// The compositor, as the messages name it (`weston`, `mutter`, `sway`).
    public let compositor: String
    public let reason: Reason
    /// How to install what is missing, said after ``Reason/notInstalled(_:)`` (nil: nothing).
    let installHint: String?
    /// What the compositor makes at start-up: its socket; sway's Wayland and IPC sockets.
    let sockets: String

    init(_ compositor: String, installHint: String? = nil, sockets: String = "its socket", _ reason: Reason) {
        self.compositor = compositor
        self.reason = reason
        self.installHint = installHint
        self.sockets = sockets
    }

    public var description: String {
        switch reason {
        case .notInstalled(let what): "\(what) is not installed" + (installHint.map { " (\($0))" } ?? "")
        case .noRoot(let why): "no usable Debian root: \(why)"
        case .spawnFailed(let e): "could not start \(compositor) (errno \(e))"
        case .exitedEarly(let status, let log): "\(compositor) exited during start-up (status \(status)):\n\(log)"
        case .noSocket(let log): "\(compositor) did not create \(sockets) within 60 s:\n\(log)"
        }
    }
}

extension CompositorProcessGroup.Failure {
    /// The failure as a launcher's ``CompositorLaunchError`` says it.
    var reason: CompositorLaunchError.Reason {
        switch self {
        case .spawnFailed(let e): .spawnFailed(e)
        case .exitedEarly(let status, let log): .exitedEarly(status: status, log: log)
        case .noSocket(let log): .noSocket(log: log)
        }
    }
}
