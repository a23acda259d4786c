import DisplayLinkCore
import Glibc

/// A private headless mutter, for tests and benchmarks: either Debian 12's mutter 43 from the
/// host, or a newer mutter in a cached Debian root built by `Scripts/os-root` (mutter 48 in
/// trixie, mutter 50 in forky: ``DebianRoot``), with the newest timing protocols (`wp_presentation`
/// 2, `wp_commit_timing_manager_v1`, `wp_fifo_manager_v1`, `xdg_wm_base` 6).
///
/// It runs as `dbus-run-session -- mutter --headless --wayland --no-x11 --virtual-monitor WxH[@R]…
/// --wayland-display=NAME` with its own runtime directory, in a process group of its own (mutter,
/// the session bus and the launcher are stopped together). In the root it runs under `chroot` in a
/// private mount namespace (`unshare --mount`) with /proc, /dev, /sys and the runtime directory
/// bind-mounted from outside: the mounts vanish with the process, and a client on the host
/// connects through the runtime directory's socket. Needs root (chroot, mount). Its window
/// animations are off (`MUTTER_DEBUG_DISABLE_ANIMATIONS=1`), so that its stage is idle once a
/// client's last frame is presented, rather than some 250 ms later when a map animation ends.
public final class HeadlessMutter: HeadlessCompositor, @unchecked Sendable {
    /// Where the compositor comes from.
    public enum Flavor: Sendable, Hashable, CustomStringConvertible {
        /// `/usr/bin/mutter` of the host (Debian 12: mutter 43).
        case host
        /// mutter in the Debian root at this path (``DebianRoot``).
        case root(String)

        public var description: String {
            switch self {
            case .host: "mutter (host)"
            case .root(let path): "mutter (root \(path))"
            }
        }
    }

    /// The cached Debian 13 root (``DebianRoot/trixie``) when it is ready, else why not.
    public static func trixieRoot() -> Result<String, CompositorLaunchError> {
        DebianRoot.trixie.path(needing: "/usr/bin/mutter")
    }

    /// mutter 48 from the cached Debian 13 root with these virtual monitors, started and waited
    /// for as ``init(flavor:monitors:)`` does. Throws ``CompositorLaunchError/Reason/noRoot(_:)`` naming why when
    /// there is no usable root (so a test that needs it fails, never passes silently). Waits on
    /// another thread (see ``start(flavor:monitors:)``).
    public static func mutter48(monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]) async throws -> HeadlessMutter {
        try await start(flavor: .root(trixieRoot().get()), monitors: monitors)
    }

    /// mutter 50 from the cached Debian forky root (``DebianRoot/forky``), as ``mutter48(monitors:)``.
    public static func mutter50(monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]) async throws -> HeadlessMutter {
        try await start(flavor: .root(DebianRoot.forky.path(needing: "/usr/bin/mutter").get()), monitors: monitors)
    }

    /// Starts mutter as ``init(flavor:monitors:)`` does, waiting for its socket on another thread:
    /// the initialiser blocks its caller until mutter listens (a second, several on a loaded
    /// machine), which on the main actor holds up every other main-actor task meanwhile (other
    /// tests' frames, in a parallel test run).
    public static func start(
        flavor: Flavor = .host,
        monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]
    ) async throws -> HeadlessMutter {
        try await offCallingThread { try HeadlessMutter(flavor: flavor, monitors: monitors) }
    }

    public let flavor: Flavor

    /// A virtual monitor of the headless compositor (`--virtual-monitor WxH` or `WxH@R`, its
    /// `description`). A nil refresh rate is mutter's default (60 Hz); mutter 48 honours a rate
    /// given (its virtual monitors' frame clocks and `wl_output` modes run at it).
    public typealias VirtualMonitor = ModeRequest

    /// The virtual monitors mutter was started with, in the order given (their `wl_output` names
    /// are `Meta-0`, `Meta-1`, … in that order). mutter 48 chooses their layout itself: with
    /// 640x480@60 and 800x600@30 it puts Meta-1 at x 0 and Meta-0 to its right at x 800, so
    /// do not assume the first is leftmost or primary.
    public let monitors: [VirtualMonitor]

    /// Starts mutter headless with one virtual monitor of `width`×`height` and waits for its socket.
    public convenience init(flavor: Flavor = .host, width: Int = 640, height: Int = 480) throws {
        try self.init(flavor: flavor, monitors: [VirtualMonitor(width: width, height: height)])
    }

    /// Starts mutter headless with these virtual monitors (at least one) and waits for its socket
    /// (60 s at most, a hang guard: mutter starts in about a second).
    public init(flavor: Flavor = .host, monitors: [VirtualMonitor]) throws {
        precondition(!monitors.isEmpty, "HeadlessMutter needs at least one virtual monitor")
        self.flavor = flavor
        self.monitors = monitors
        let root: String?
        switch flavor {
        case .host:
            guard access("/usr/bin/mutter", X_OK) == 0 else { throw HeadlessMutter.launchError(.notInstalled("mutter")) }
            root = nil
        case .root(let path):
            guard access("/usr/bin/unshare", X_OK) == 0 else { throw HeadlessMutter.launchError(.notInstalled("unshare (util-linux)")) }
            root = path
        }
        let process: CompositorProcessGroup
        do {
            process = try CompositorProcessGroup(label: "mutter", root: root, environment: ["MUTTER_DEBUG_DISABLE_ANIMATIONS=1"]) {
                socketName in
                ["dbus-run-session", "--", "mutter", "--headless", "--wayland", "--no-x11"]
                    + monitors.flatMap { ["--virtual-monitor", $0.description] } + ["--wayland-display=\(socketName)"]
            }
        } catch {
            throw HeadlessMutter.launchError(error.reason)
        }
        super.init(process: process)
    }

    private static func launchError(_ reason: CompositorLaunchError.Reason) -> CompositorLaunchError {
        CompositorLaunchError("mutter", installHint: "Scripts/install-deps installs Debian 12's mutter", reason)
    }
}
