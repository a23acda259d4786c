import Glibc
import Synchronization

/// A private compositor's processes, on the host or chrooted in a Debian root: what
/// ``HeadlessWeston``, ``HeadlessMutter`` and ``HeadlessRootCompositor`` share. A runtime
/// directory of its own holds the socket and the log; the compositor runs there as a
/// ``ChildProcess`` (a process group of its own: the compositor, a session bus, helper clients),
/// with its standard output and error in the log; the initialiser returns once the socket is there.
///
/// The environment is clean (`env -i`: runtime directory, home and configuration in the runtime
/// directory, in-memory GSettings), so nothing of the caller's session leaks in. In a root, it runs
/// under `chroot` in a private mount namespace (`unshare --mount`) with the root's /proc, /dev,
/// /sys and the runtime directory (at the same path inside, so the socket path is the same on both
/// sides) mounted: the mounts belong to the namespace, never show on the host, and vanish with the
/// group's last process. The group is registered in `HeadlessWeston.running`, so
/// ``HeadlessWeston/stopOnTerminationSignals()`` reaches it.
final class CompositorProcessGroup {
    enum Failure: Error {
        case spawnFailed(Int32)
        case exitedEarly(status: Int32, log: String)
        case noSocket(log: String)

        /// The failure as a launcher's own error type says it.
        func launchError<E: Error>(spawnFailed: (Int32) -> E, exitedEarly: (Int32, String) -> E, noSocket: (String) -> E) -> E {
            switch self {
            case .spawnFailed(let e): spawnFailed(e)
            case .exitedEarly(let status, let log): exitedEarly(status, log)
            case .noSocket(let log): noSocket(log)
            }
        }
    }

    let socketPath: String
    let runtimeDirectory: String
    /// The compositor's standard output and error.
    let logPath: String
    /// The root it runs in (nil: the host).
    let root: String?
    private let child: ChildProcess

    /// Numbers the compositors of this process (tests start several at once, from any thread).
    private static let counter = Atomic<Int>(0)

    /// Makes the runtime directory (`/tmp/displaylink-LABEL-XXXXXX`), starts `command(socketName)`
    /// there (socket `SOCKETPREFIX-PID-N`, by default `wayland-LABEL-PID-N`; `environment` added to
    /// the clean one) with its output in `LABEL.log`, and waits for the socket (60 s at most, a
    /// hang guard: compositors start in a second or two). Cleans up everything it made when it throws.
    ///
    /// `files` (name → contents) are written into the runtime directory first (a configuration;
    /// a name may have one directory, made too).
    /// A compositor that names its socket itself says the name in `fixedSocketName`. With `user`,
    /// the compositor runs as that user and group (through `setpriv`), owning the runtime
    /// directory: for a compositor that refuses to run as root (sway).
    init(
        label: String, socketPrefix: String? = nil, root: String?, environment: [String] = [],
        files: [String: String] = [:], fixedSocketName: String? = nil, user: (uid: uid_t, gid: gid_t)? = nil,
        command: (_ socketName: String) -> [String]
    ) throws(Failure) {
        self.root = root
        let number = CompositorProcessGroup.counter.add(1, ordering: .relaxed).newValue
        var template = Array("/tmp/displaylink-\(label)-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw .spawnFailed(errno)
        }
        runtimeDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(runtimeDirectory, 0o700)
        let socketName = fixedSocketName ?? "\(socketPrefix ?? "wayland-\(label)")-\(getpid())-\(number)"
        socketPath = runtimeDirectory + "/" + socketName
        logPath = runtimeDirectory + "/\(label).log"

        let clean =
            [
                "env", "-i", "XDG_RUNTIME_DIR=\(runtimeDirectory)", "HOME=\(runtimeDirectory)",
                "XDG_CONFIG_HOME=\(runtimeDirectory)", "PATH=/usr/bin:/bin", "GSETTINGS_BACKEND=memory"
            ] + environment
        var made = [runtimeDirectory]
        for (name, contents) in files {
            // One level of directory at most (`sway/config`).
            if let slash = name.lastIndex(of: "/") {
                let directory = runtimeDirectory + "/" + name[..<slash]
                mkdir(directory, 0o700)
                made.append(directory)
            }
            guard let file = fopen(runtimeDirectory + "/" + name, "w") else {
                let failure = errno
                CompositorProcessGroup.removeTree(runtimeDirectory)
                throw .spawnFailed(failure)
            }
            fputs(contents, file)
            fclose(file)
            made.append(runtimeDirectory + "/" + name)
        }
        var program = command(socketName)
        if let user {
            for path in made { chown(path, user.uid, user.gid) }
            program = ["setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups"] + program
        }
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
            arguments =
                [
                    "/usr/bin/unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh",
                    root, runtimeDirectory
                ] + clean + program
        } else {
            arguments = ["/usr/bin/env"] + clean.dropFirst() + program
        }
        do {
            child = try ChildProcess(arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], output: .file(logPath))
        } catch {
            CompositorProcessGroup.removeTree(runtimeDirectory)
            throw .spawnFailed(error.errno)
        }
        HeadlessWeston.running.add(-child.pid)

        // libwayland makes the lock file, then binds and listens on the socket at once.
        let socketPath = socketPath
        let listening = { access(socketPath, F_OK) == 0 && access(socketPath + ".lock", F_OK) == 0 }
        if let ended = child.wait(upTo: .seconds(60), until: listening) {
            let log = readLog()
            stop()
            throw .exitedEarly(status: ended.status, log: log)
        }
        guard listening() else {
            let log = readLog()
            stop()
            throw .noSocket(log: log)
        }
        usleep(50_000)  // the socket exists just before the compositor listens on it
        if let ended = child.termination {  // made its socket, then gave up
            let log = readLog()
            stop()
            throw .exitedEarly(status: ended.status, log: log)
        }
    }

    deinit { stop() }

    /// The group's leader (0 once stopped).
    var pid: pid_t { child.isFinished ? 0 : child.pid }

    /// Whether the group's leader is still running.
    var isRunning: Bool { child.isRunning }

    /// Stops the process group (``ChildProcess/stop(grace:)``: SIGTERM, SIGKILL after 3 s, until
    /// none of it runs, so the mount namespace and its mounts are gone), and removes the runtime
    /// directory and its mount point in the root. Idempotent.
    func stop() {
        if !child.isFinished {
            child.stop()
            HeadlessWeston.running.remove(-child.pid)
        }
        CompositorProcessGroup.removeTree(runtimeDirectory)
        if let root { rmdir(root + runtimeDirectory) }
    }

    /// Kills the process group at once (SIGKILL), as a crash would; the runtime directory stays
    /// until ``stop()``.
    func kill() {
        guard !child.isFinished else { return }
        child.kill()
        HeadlessWeston.running.remove(-child.pid)
    }

    /// Waits (up to `limit`, a hang guard) until `condition` holds or the group's leader ends;
    /// returns whether it holds.
    func wait(upTo limit: Duration, until condition: () -> Bool) -> Bool {
        _ = child.wait(upTo: limit, until: condition)
        return condition()
    }

    /// The compositor's output so far.
    func readLog() -> String { ProcessTable.text(of: logPath) }

    static func removeTree(_ path: String) {
        guard let entries = ProcessTable.directoryEntries(path) else { unlink(path); return }
        for entry in entries {
            let child = path + "/" + entry.name
            if entry.isDirectory { removeTree(child) } else { unlink(child) }
        }
        rmdir(path)
    }
}
