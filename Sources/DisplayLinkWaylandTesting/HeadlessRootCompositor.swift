import Glibc

/// A private headless weston 16 or kwin 6.7 from the cached Debian forky root (``DebianRoot/forky``,
/// built by `Scripts/os-root forky build`), for tests and benchmarks that need today's compositors:
/// weston 16 offers `wp_presentation` 2, `wp_fifo_manager_v1` and `wp_commit_timing_manager_v1`;
/// kwin 6.7 `wp_presentation` 2, `wp_fifo_manager_v1` and `xdg_wm_base` 6. (mutter 50 from the same
/// root: ``HeadlessMutter/mutter50(monitors:)``.)
///
/// It runs as ``HeadlessMutter`` runs a root's mutter: chrooted in a private mount namespace
/// (`unshare --mount`) with /proc, /dev, /sys and its own runtime directory bind-mounted from
/// outside, so the mounts vanish with its processes and a client on the host connects through the
/// runtime directory's socket; with a clean environment (`env -i`), in a process group of its own
/// (the compositor, kwin's session bus and the launcher are stopped together), stopped by
/// ``HeadlessCompositor/stop()`` or deinit. Needs root (chroot, mount).
public final class HeadlessRootCompositor: HeadlessCompositor, @unchecked Sendable {
    /// Which compositor of the root.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        /// weston 16 on its headless backend (`--backend=headless`, one 60 Hz output).
        case weston16
        /// kwin 6.7 on its virtual backend (`kwin_wayland --virtual`, one output), under its own
        /// session bus (`dbus-run-session`).
        case kwin67

        public var description: String {
            switch self {
            case .weston16: "weston 16"
            case .kwin67: "kwin 6.7"
            }
        }

        /// The root it comes from.
        public var root: DebianRoot { .forky }

        /// The program that must be in the root.
        var program: String {
            switch self {
            case .weston16: "/usr/bin/weston"
            case .kwin67: "/usr/bin/kwin_wayland"
            }
        }

        /// Names its runtime directory, socket and log.
        var label: String {
            switch self {
            case .weston16: "weston16"
            case .kwin67: "kwin67"
            }
        }

        func command(socketName: String, width: Int, height: Int) -> [String] {
            switch self {
            case .weston16:
                // Idle time 0: the output never blanks, so frames never stop for want of input.
                [
                    "weston", "--backend=headless", "--socket=\(socketName)", "--idle-time=0",
                    "--width=\(width)", "--height=\(height)"
                ]
            case .kwin67:
                // No screen locking: a lock would cover every window, and nothing here can unlock it.
                [
                    "dbus-run-session", "--", "kwin_wayland", "--virtual", "--no-lockscreen",
                    "--socket", socketName, "--width", "\(width)", "--height", "\(height)"
                ]
            }
        }
    }

    public enum LaunchError: Error, CustomStringConvertible {
        /// The root is missing or unusable here; names why and how to build it
        /// (`Scripts/os-root forky build`).
        case noRoot(String)
        case notInstalled(String)
        case spawnFailed(Kind, errno: Int32)
        case exitedEarly(Kind, status: Int32, log: String)
        case noSocket(Kind, log: String)

        public var description: String {
            switch self {
            case .noRoot(let why): "no usable Debian root: \(why)"
            case .notInstalled(let what): "\(what) is not installed"
            case .spawnFailed(let kind, let e): "could not start \(kind) (errno \(e))"
            case .exitedEarly(let kind, let status, let log): "\(kind) exited during start-up (status \(status)):\n\(log)"
            case .noSocket(let kind, let log): "\(kind) did not create its socket within 60 s:\n\(log)"
            }
        }
    }

    public let kind: Kind

    /// Starts the compositor with one output of `width`×`height` and waits for its socket (60 s at
    /// most, a hang guard: either starts in a second or two). `extraArguments` go after the
    /// compositor's own. Throws ``LaunchError/noRoot(_:)`` naming `Scripts/os-root forky build` when
    /// the root is not there, so a test that needs it fails, never passes silently.
    public init(_ kind: Kind, width: Int = 640, height: Int = 480, extraArguments: [String] = []) throws {
        self.kind = kind
        let root: String
        switch kind.root.path(needing: kind.program) {
        case .success(let path): root = path
        case .failure(let failure):
            if case .noRoot(let why) = failure.reason { throw LaunchError.noRoot(why) }
            throw LaunchError.noRoot(failure.description)
        }
        guard access("/usr/bin/unshare", X_OK) == 0 else { throw LaunchError.notInstalled("unshare (util-linux)") }
        let process: CompositorProcessGroup
        do {
            process = try CompositorProcessGroup(label: kind.label, root: root) { socketName in
                kind.command(socketName: socketName, width: width, height: height) + extraArguments
            }
        } catch {
            throw error.launchError(
                spawnFailed: { LaunchError.spawnFailed(kind, errno: $0) },
                exitedEarly: { LaunchError.exitedEarly(kind, status: $0, log: $1) },
                noSocket: { LaunchError.noSocket(kind, log: $0) })
        }
        super.init(process: process)
    }

    /// Starts the compositor as ``init(_:width:height:extraArguments:)`` does, waiting for its
    /// socket on another thread: the initialiser blocks its caller until the compositor listens,
    /// which on the main actor would hold up every other main-actor task meanwhile (other tests'
    /// frames, in a parallel test run).
    public static func start(
        _ kind: Kind, width: Int = 640, height: Int = 480,
        extraArguments: [String] = []
    ) async throws -> HeadlessRootCompositor {
        try await offCallingThread {
            try HeadlessRootCompositor(kind, width: width, height: height, extraArguments: extraArguments)
        }
    }
}
