import Glibc
import Synchronization

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
/// ``stop()`` or deinit. Needs root (chroot, mount).
public final class HeadlessRootCompositor {
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
                ["weston", "--backend=headless", "--socket=\(socketName)", "--idle-time=0",
                 "--width=\(width)", "--height=\(height)"]
            case .kwin67:
                // No screen locking: a lock would cover every window, and nothing here can unlock it.
                ["dbus-run-session", "--", "kwin_wayland", "--virtual", "--no-lockscreen",
                 "--socket", socketName, "--width", "\(width)", "--height", "\(height)"]
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
    /// The absolute path of the compositor's socket: pass it to `WaylandConnection(socket:)`.
    public var socketPath: String { process.socketPath }
    public var runtimeDirectory: String { process.runtimeDirectory }
    /// Where its standard output and error go.
    public var logPath: String { process.logPath }
    /// The process group (its leader's pid) of the launcher and the compositor (0 once stopped).
    public var pid: pid_t { process.pid }

    private let process: CompositorProcessGroup

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
            if case .noRoot(let why) = failure { throw LaunchError.noRoot(why) }
            throw LaunchError.noRoot(failure.description)
        }
        guard access("/usr/bin/unshare", X_OK) == 0 else { throw LaunchError.notInstalled("unshare (util-linux)") }
        do {
            process = try CompositorProcessGroup(label: kind.label, root: root) { socketName in
                kind.command(socketName: socketName, width: width, height: height) + extraArguments
            }
        } catch {
            switch error {
            case .spawnFailed(let e): throw LaunchError.spawnFailed(kind, errno: e)
            case .exitedEarly(let status, let log): throw LaunchError.exitedEarly(kind, status: status, log: log)
            case .noSocket(let log): throw LaunchError.noSocket(kind, log: log)
            }
        }
    }

    /// Starts the compositor as ``init(_:width:height:extraArguments:)`` does, waiting for its
    /// socket on another thread: the initialiser blocks its caller until the compositor listens,
    /// which on the main actor would hold up every other main-actor task meanwhile (other tests'
    /// frames, in a parallel test run).
    public static func start(_ kind: Kind, width: Int = 640, height: Int = 480,
                             extraArguments: [String] = []) async throws -> HeadlessRootCompositor {
        try await offCallingThread {
            try HeadlessRootCompositor(kind, width: width, height: height, extraArguments: extraArguments)
        }
    }

    deinit { stop() }

    /// Whether the launcher (the group's leader) is still running.
    public var isRunning: Bool { process.isRunning }

    /// Stops the process group (SIGTERM, then SIGKILL after 3 s) and removes the runtime directory
    /// (and its mount point in the root). Idempotent.
    public func stop() { process.stop() }

    /// The compositor's output so far.
    public func readLog() -> String { process.readLog() }
}

// One owner at a time (a test); Sendable so that it can be started off the calling thread
// (``HeadlessRootCompositor/start(_:width:height:extraArguments:)``) and handed back.
extension HeadlessRootCompositor: @unchecked Sendable {}

// MARK: - The process group shared by HeadlessMutter and HeadlessRootCompositor

/// A compositor started in a process group of its own with a private runtime directory, on the
/// host or chrooted in a Debian root: what ``HeadlessMutter`` and ``HeadlessRootCompositor`` share
/// (spawn, wait for the socket, stop, clean up).
///
/// In a root, it runs under `chroot` in a private mount namespace (`unshare --mount`) with the
/// root's /proc, /dev, /sys and the runtime directory (at the same path inside, so the socket path
/// is the same on both sides) mounted: the mounts belong to the namespace, never show on the host,
/// and vanish with the group's last process. The environment is clean
/// (`env -i`: runtime directory, home and configuration in the runtime directory, in-memory
/// GSettings), so nothing of the caller's session leaks in. The group is registered in
/// `HeadlessWeston.running`, so ``HeadlessWeston/stopOnTerminationSignals()`` reaches it too.
final class CompositorProcessGroup {
    enum Failure: Error {
        case spawnFailed(Int32)
        case exitedEarly(status: Int32, log: String)
        case noSocket(log: String)
    }

    let socketPath: String
    let runtimeDirectory: String
    let logPath: String
    /// The root it runs in (nil: the host).
    let root: String?
    /// The group's leader (0 once stopped).
    private(set) var pid: pid_t

    /// Numbers the compositors of this process (tests start several at once, from any thread).
    private static let counter = Atomic<Int>(0)

    /// Makes the runtime directory (`/tmp/displaylink-LABEL-XXXXXX`), starts `command(socketName)`
    /// there with its output in `LABEL.log`, and waits for the socket (60 s at most, a hang guard:
    /// compositors start in a second or two). Cleans up everything it made when it throws.
    init(label: String, root: String?, command: (_ socketName: String) -> [String]) throws(Failure) {
        self.root = root
        let number = CompositorProcessGroup.counter.add(1, ordering: .relaxed).newValue
        var template = Array("/tmp/displaylink-\(label)-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw .spawnFailed(errno)
        }
        runtimeDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(runtimeDirectory, 0o700)
        let socketName = "wayland-\(label)-\(getpid())-\(number)"
        socketPath = runtimeDirectory + "/" + socketName
        logPath = runtimeDirectory + "/\(label).log"
        pid = 0

        let clean = ["env", "-i", "XDG_RUNTIME_DIR=\(runtimeDirectory)", "HOME=\(runtimeDirectory)",
                     "XDG_CONFIG_HOME=\(runtimeDirectory)", "PATH=/usr/bin:/bin", "GSETTINGS_BACKEND=memory"]
        let program: String
        let arguments: [String]
        if let root {
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
                         root, runtimeDirectory] + clean + command(socketName)
        } else {
            program = "/usr/bin/env"
            arguments = Array(clean.dropFirst()) + command(socketName)
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
        // A process group of its own, so that stop() reaches every process of it (a session bus,
        // the compositor) and nothing else.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
        let status = CompositorProcessGroup.withCStrings(arguments) { argv in
            CompositorProcessGroup.withCStrings(environment) { envp in
                posix_spawn(&spawnedPID, program, &fileActions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            CompositorProcessGroup.removeTree(runtimeDirectory)
            throw .spawnFailed(status)
        }
        pid = spawnedPID
        HeadlessWeston.running.add(-spawnedPID)

        for _ in 0..<6000 {
            var exitStatus: Int32 = 0
            if waitpid(pid, &exitStatus, WNOHANG) == pid {
                let log = readLog()
                killGroup()
                stop()
                throw .exitedEarly(status: exitStatus, log: log)
            }
            // libwayland makes the lock file, then binds and listens on the socket at once.
            if access(socketPath, F_OK) == 0 && access(socketPath + ".lock", F_OK) == 0 {
                usleep(50_000)  // the socket exists just before the compositor listens on it
                return
            }
            usleep(10_000)
        }
        let log = readLog()
        stop()
        throw .noSocket(log: log)
    }

    deinit { stop() }

    /// Whether the group's leader is still running.
    var isRunning: Bool {
        guard pid > 0 else { return false }
        var exitStatus: Int32 = 0
        return waitpid(pid, &exitStatus, WNOHANG) == 0
    }

    /// Stops the process group (SIGTERM, then SIGKILL after 3 s), waits until none of its processes
    /// runs any more (so the mount namespace, and with it the mounts, is gone), and removes the
    /// runtime directory and its mount point in the root. Idempotent.
    func stop() {
        if pid > 0 {
            Glibc.kill(-pid, SIGTERM)
            var exitStatus: Int32 = 0
            var reaped = false
            for _ in 0..<300 {
                let result = waitpid(pid, &exitStatus, WNOHANG)
                // ECHILD: reaped already (by isRunning, when it had ended).
                if result == pid || (result == -1 && errno == ECHILD) { reaped = true; break }
                usleep(10_000)
            }
            if !reaped {
                Glibc.kill(pid, SIGKILL)
                waitpid(pid, &exitStatus, 0)
            }
            killGroup()
        }
        CompositorProcessGroup.removeTree(runtimeDirectory)
        if let root { rmdir(root + runtimeDirectory) }
    }

    /// Kills what is left of the group once its leader is reaped (a session bus, the compositor),
    /// whatever the leader did, and waits until none of it runs.
    private func killGroup() {
        Glibc.kill(-pid, SIGKILL)
        // Orphaned members are init's to reap; they are done once they are zombies. A hang guard
        // only: a killed process ends at once unless it is stuck in the kernel.
        for _ in 0..<500 where CompositorProcessGroup.hasLiveMembers(group: pid) { usleep(10_000) }
        HeadlessWeston.running.remove(-pid)
        pid = 0
    }

    /// Whether a process of `group` still runs (zombies do not count: they hold no namespace).
    static func hasLiveMembers(group: pid_t) -> Bool {
        guard let proc = opendir("/proc") else { return false }
        defer { closedir(proc) }
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let member = pid_t(name), let file = fopen("/proc/\(member)/stat", "r") else { continue }
            var bytes = [UInt8](repeating: 0, count: 512)
            let count = fread(&bytes, 1, bytes.count, file)
            fclose(file)
            // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after
            // its last ')'.
            let line = bytes.prefix(count)
            guard let close = line.lastIndex(of: UInt8(ascii: ")")) else { continue }
            let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
            guard fields.count > 3, let pgrp = pid_t(String(decoding: fields[2], as: UTF8.self)), pgrp == group else { continue }
            let state = fields[0].first
            if state != UInt8(ascii: "Z") && state != UInt8(ascii: "X") { return true }
        }
        return false
    }

    /// The compositor's output so far.
    func readLog() -> String { CompositorProcessGroup.readFile(logPath) }

    /// A file's text ("" when it cannot be opened): compositor logs.
    static func readFile(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while true {
            let c = fgetc(file)
            if c == EOF { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func removeTree(_ path: String) {
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

    /// `strings` as a NULL-terminated `char *[]` (argv, envp) for the duration of `body`.
    static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }
}
