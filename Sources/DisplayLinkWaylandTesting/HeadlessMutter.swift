import Glibc
import Synchronization

/// A private headless mutter, for tests and benchmarks: either Debian 12's mutter 43 from the
/// host, or a newer mutter in a cached Debian root built by `Scripts/os-root` (mutter 48 in
/// trixie, mutter 50 in forky: ``DebianRoot``), with the newest timing protocols: `wp_presentation` 2, `wp_commit_timing_manager_v1`, `wp_fifo_manager_v1`,
/// `xdg_wm_base` 6).
///
/// It runs as `dbus-run-session -- mutter --headless --wayland --no-x11 --virtual-monitor WxH[@R]…
/// --wayland-display=NAME` with its own runtime directory, in a process group of its own (mutter,
/// the session bus and the launcher are stopped together). In the root it runs under `chroot` in a
/// private mount namespace (`unshare --mount`) with /proc, /dev, /sys and the runtime directory
/// bind-mounted from outside: the mounts vanish with the process, and a client on the host
/// connects through the runtime directory's socket. Needs root (chroot, mount).
public final class HeadlessMutter {
    public enum LaunchError: Error, CustomStringConvertible {
        case notInstalled(String)
        case noRoot(String)
        case spawnFailed(Int32)
        case exitedEarly(status: Int32, log: String)
        case noSocket(log: String)

        public var description: String {
            switch self {
            case .notInstalled(let what): "\(what) is not installed (Scripts/install-deps installs Debian 12's mutter)"
            case .noRoot(let why): "no usable Debian root: \(why)"
            case .spawnFailed(let e): "could not start mutter (errno \(e))"
            case .exitedEarly(let status, let log): "mutter exited during start-up (status \(status)):\n\(log)"
            case .noSocket(let log): "mutter did not create its socket within 60 s:\n\(log)"
            }
        }
    }

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
    public static func trixieRoot() -> Result<String, LaunchError> {
        DebianRoot.trixie.path(needing: "/usr/bin/mutter")
    }

    /// mutter 48 from the cached Debian 13 root with these virtual monitors, started and waited
    /// for as ``init(flavor:monitors:)`` does. Throws ``LaunchError/noRoot(_:)`` naming why when
    /// there is no usable root (so a test that needs it fails, never passes silently). Waits on
    /// another thread (see ``start(flavor:monitors:)``).
    public static func mutter48(monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]) async throws -> HeadlessMutter {
        try await start(flavor: .root(DebianRoot.trixie.path(needing: "/usr/bin/mutter").get()), monitors: monitors)
    }

    /// mutter 50 from the cached Debian forky root (``DebianRoot/forky``), as ``mutter48(monitors:)``.
    public static func mutter50(monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]) async throws -> HeadlessMutter {
        try await start(flavor: .root(DebianRoot.forky.path(needing: "/usr/bin/mutter").get()), monitors: monitors)
    }

    /// Starts mutter as ``init(flavor:monitors:)`` does, waiting for its socket on another thread:
    /// the initialiser blocks its caller until mutter listens (a second, several on a loaded
    /// machine), which on the main actor holds up every other main-actor task meanwhile (other
    /// tests' frames, in a parallel test run).
    public static func start(flavor: Flavor = .host, monitors: [VirtualMonitor] = [VirtualMonitor(width: 640, height: 480)]) async throws -> HeadlessMutter {
        try await offCallingThread { try HeadlessMutter(flavor: flavor, monitors: monitors) }
    }

    /// The absolute path of the compositor's socket: pass it to `WaylandConnection(socket:)`.
    public let socketPath: String
    public let runtimeDirectory: String
    public let logPath: String
    public let flavor: Flavor
    /// The process group (its leader's pid) of the launcher, the session bus and mutter.
    public private(set) var pid: pid_t

    private static let counter = Atomic<Int>(0)

    /// A virtual monitor of the headless compositor (`--virtual-monitor WxH` or `WxH@R`).
    public struct VirtualMonitor: Sendable, Hashable {
        public var width: Int
        public var height: Int
        /// The refresh rate in Hz; nil: mutter's default (60 Hz). mutter 48 honours it (its
        /// virtual monitors' frame clocks and `wl_output` modes run at it).
        public var refreshRate: Int?

        public init(width: Int, height: Int, refreshRate: Int? = nil) {
            self.width = width
            self.height = height
            self.refreshRate = refreshRate
        }

        var argument: String { refreshRate.map { "\(width)x\(height)@\($0)" } ?? "\(width)x\(height)" }
    }

    /// The virtual monitors mutter was started with, in the order given (their `wl_output` names
    /// are `Meta-0`, `Meta-1`, … in that order). mutter 48 chooses their layout itself: with
    /// 640x480@60 and 800x600@30 it puts Meta-1 at x 0 and Meta-0 to its right at x 800, so
    /// do not assume the first is leftmost or primary.
    public let monitors: [VirtualMonitor]

    /// Starts mutter headless with one virtual monitor of `width`×`height` and waits for its socket.
    public convenience init(flavor: Flavor = .host, width: Int = 640, height: Int = 480) throws {
        try self.init(flavor: flavor, monitors: [VirtualMonitor(width: width, height: height)])
    }

    /// Starts mutter headless with these virtual monitors (at least one) and waits for its socket.
    public init(flavor: Flavor = .host, monitors: [VirtualMonitor]) throws {
        precondition(!monitors.isEmpty, "HeadlessMutter needs at least one virtual monitor")
        self.flavor = flavor
        self.monitors = monitors
        let number = HeadlessMutter.counter.add(1, ordering: .relaxed).newValue
        var template = Array("/tmp/displaylink-mutter-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw LaunchError.spawnFailed(errno)
        }
        runtimeDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(runtimeDirectory, 0o700)
        let socketName = "wayland-mutter-\(getpid())-\(number)"
        socketPath = runtimeDirectory + "/" + socketName
        logPath = runtimeDirectory + "/mutter.log"

        let mutter = ["dbus-run-session", "--", "mutter", "--headless", "--wayland", "--no-x11"]
            + monitors.flatMap { ["--virtual-monitor", $0.argument] } + ["--wayland-display=\(socketName)"]
        let clean = ["env", "-i", "XDG_RUNTIME_DIR=\(runtimeDirectory)", "HOME=\(runtimeDirectory)",
                     "XDG_CONFIG_HOME=\(runtimeDirectory)", "PATH=/usr/bin:/bin", "GSETTINGS_BACKEND=memory"]
        let arguments: [String]
        let program: String
        switch flavor {
        case .host:
            guard access("/usr/bin/mutter", X_OK) == 0 else {
                HeadlessMutter.removeTree(runtimeDirectory)
                throw LaunchError.notInstalled("mutter")
            }
            program = "/usr/bin/env"
            arguments = Array(clean.dropFirst()) + mutter
        case .root(let root):
            guard access("/usr/bin/unshare", X_OK) == 0 else {
                HeadlessMutter.removeTree(runtimeDirectory)
                throw LaunchError.notInstalled("unshare (util-linux)")
            }
            // In a private mount namespace: the root's /proc, /dev, /sys and the runtime directory
            // (at the same path inside, so the socket path is the same on both sides).
            let script = """
                set -e
                r=$1; d=$2; shift 2
                mount -t proc proc "$r/proc"
                mount --rbind /dev "$r/dev"
                mount --rbind /sys "$r/sys"
                mkdir -p "$r$d"
                mount --bind "$d" "$r$d"
                exec chroot "$r" "$@"
                """
            program = "/usr/bin/unshare"
            arguments = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh",
                         root, runtimeDirectory] + clean + mutter
        }

        var spawnedPID: pid_t = 0
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, so that stop() reaches the session bus and mutter too.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
        let status = HeadlessMutter.withCStrings(arguments) { argv in
            HeadlessMutter.withCStrings(environment) { envp in
                posix_spawn(&spawnedPID, program, &fileActions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            HeadlessMutter.removeTree(runtimeDirectory)
            throw LaunchError.spawnFailed(status)
        }
        pid = spawnedPID
        HeadlessWeston.running.add(-spawnedPID)

        // Wait for the socket (60 s at most, a hang guard: mutter starts in about a second).
        for _ in 0..<6000 {
            var exitStatus: Int32 = 0
            if waitpid(pid, &exitStatus, WNOHANG) == pid {
                let log = readLog()
                Glibc.kill(-pid, SIGKILL)
                HeadlessWeston.running.remove(-pid)
                pid = 0
                removeDirectory()
                throw LaunchError.exitedEarly(status: exitStatus, log: log)
            }
            if access(socketPath, F_OK) == 0 && access(socketPath + ".lock", F_OK) == 0 {
                usleep(50_000)  // the socket exists before mutter listens on it
                return
            }
            usleep(10_000)
        }
        let log = readLog()
        stop()
        throw LaunchError.noSocket(log: log)
    }

    deinit { stop() }

    /// Whether the launcher is still running.
    public var isRunning: Bool {
        guard pid > 0 else { return false }
        var exitStatus: Int32 = 0
        return waitpid(pid, &exitStatus, WNOHANG) == 0
    }

    /// Stops the process group (SIGTERM, then SIGKILL after 3 s) and removes the runtime
    /// directory. Idempotent.
    public func stop() {
        if pid > 0 {
            Glibc.kill(-pid, SIGTERM)
            var exitStatus: Int32 = 0
            var reaped = false
            for _ in 0..<300 {
                if waitpid(pid, &exitStatus, WNOHANG) == pid { reaped = true; break }
                usleep(10_000)
            }
            // The rest of the group (mutter, the bus) goes too, whatever the launcher did.
            Glibc.kill(-pid, SIGKILL)
            if !reaped { waitpid(pid, &exitStatus, 0) }
            HeadlessWeston.running.remove(-pid)
            pid = 0
        }
        removeDirectory()
        if case .root(let root) = flavor { rmdir(root + runtimeDirectory) }
    }

    /// mutter's output so far.
    public func readLog() -> String {
        guard let file = fopen(logPath, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while true {
            let c = fgetc(file)
            if c == EOF { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func removeDirectory() {
        HeadlessMutter.removeTree(runtimeDirectory)
    }

    private static func removeTree(_ path: String) {
        guard let dir = opendir(path) else { unlink(path); return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != "." && name != ".." else { continue }
            let child = path + "/" + name
            if entry.pointee.d_type == UInt8(DT_DIR) { removeTree(child) } else { unlink(child) }
        }
        closedir(dir)
        rmdir(path)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }
}

// One owner at a time (a test); Sendable so that it can be started off the calling thread
// (``HeadlessMutter/start(flavor:monitors:)``) and handed back.
extension HeadlessMutter: @unchecked Sendable {}
