import Glibc

/// A private weston on its headless backend, for tests, benchmarks and `--headless` demo runs:
/// its own runtime directory and socket, no user configuration, stopped by ``stop()`` or deinit.
public final class HeadlessWeston {
    public enum LaunchError: Error, CustomStringConvertible {
        case notInstalled
        case spawnFailed(Int32)
        case exitedEarly(status: Int32, log: String)
        case noSocket(log: String)

        public var description: String {
            switch self {
            case .notInstalled: "weston is not installed (apt-get install weston)"
            case .spawnFailed(let e): "could not start weston (errno \(e))"
            case .exitedEarly(let status, let log): "weston exited during start-up (status \(status)):\n\(log)"
            case .noSocket(let log): "weston did not create its socket within 10 s:\n\(log)"
            }
        }
    }

    /// The absolute path of the compositor's socket: pass it to `WaylandConnection(socket:)`.
    public let socketPath: String
    public let runtimeDirectory: String
    public let logPath: String
    public private(set) var pid: pid_t

    nonisolated(unsafe) private static var counter = 0

    /// Starts weston (`--backend=headless-backend.so --use-pixman --idle-time=0`) and waits for
    /// its socket.
    public init(width: Int = 640, height: Int = 480, extraArguments: [String] = []) throws {
        guard access("/usr/bin/weston", X_OK) == 0 else { throw LaunchError.notInstalled }
        HeadlessWeston.counter += 1
        var template = Array("/tmp/displaylink-weston-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw LaunchError.spawnFailed(errno)
        }
        runtimeDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(runtimeDirectory, 0o700)
        let socketName = "wayland-dl-\(getpid())-\(HeadlessWeston.counter)"
        socketPath = runtimeDirectory + "/" + socketName
        logPath = runtimeDirectory + "/weston.log"

        let arguments = ["weston", "--backend=headless-backend.so", "--use-pixman", "--socket=\(socketName)",
                         "--idle-time=0", "--width=\(width)", "--height=\(height)", "--log=\(logPath)"] + extraArguments
        var environment = ["XDG_RUNTIME_DIR=\(runtimeDirectory)", "XDG_CONFIG_HOME=\(runtimeDirectory)",
                           "HOME=\(runtimeDirectory)", "PATH=/usr/bin:/bin"]
        if let lang = getenv("LANG") { environment.append("LANG=" + String(cString: lang)) }

        var spawnedPID: pid_t = 0
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, logPath + ".stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&fileActions, 1, 2)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        let status = HeadlessWeston.withCStrings(arguments) { argv in
            HeadlessWeston.withCStrings(environment) { envp in
                posix_spawn(&spawnedPID, "/usr/bin/weston", &fileActions, nil, argv, envp)
            }
        }
        guard status == 0 else { throw LaunchError.spawnFailed(status) }
        pid = spawnedPID

        // Wait for the socket (10 s at most: weston starts in well under a second).
        for _ in 0..<1000 {
            var exitStatus: Int32 = 0
            if waitpid(pid, &exitStatus, WNOHANG) == pid {
                pid = 0
                throw LaunchError.exitedEarly(status: exitStatus, log: readLog())
            }
            if access(socketPath, F_OK) == 0 && access(socketPath + ".lock", F_OK) == 0 {
                usleep(20_000)  // the socket exists before weston listens on it
                return
            }
            usleep(10_000)
        }
        stop()
        throw LaunchError.noSocket(log: readLog())
    }

    deinit { stop() }

    /// Whether the process is still running.
    public var isRunning: Bool {
        guard pid > 0 else { return false }
        var exitStatus: Int32 = 0
        if waitpid(pid, &exitStatus, WNOHANG) == pid {
            pid = 0
            return false
        }
        return true
    }

    /// Kills weston at once (SIGKILL), as a crash would.
    public func kill() {
        guard pid > 0 else { return }
        Glibc.kill(pid, SIGKILL)
        var exitStatus: Int32 = 0
        waitpid(pid, &exitStatus, 0)
        pid = 0
    }

    /// Stops weston (SIGTERM, then SIGKILL after 3 s) and removes its directory. Idempotent.
    public func stop() {
        if pid > 0 {
            Glibc.kill(pid, SIGTERM)
            var exitStatus: Int32 = 0
            var reaped = false
            for _ in 0..<300 {
                if waitpid(pid, &exitStatus, WNOHANG) == pid { reaped = true; break }
                usleep(10_000)
            }
            if !reaped {
                Glibc.kill(pid, SIGKILL)
                waitpid(pid, &exitStatus, 0)
            }
            pid = 0
        }
        removeDirectory()
    }

    /// weston's log so far.
    public func readLog() -> String {
        var text = ""
        for path in [logPath, logPath + ".stdout"] {
            guard let file = fopen(path, "r") else { continue }
            var bytes: [UInt8] = []
            while true {
                let c = fgetc(file)
                if c == EOF { break }
                bytes.append(UInt8(truncatingIfNeeded: c))
            }
            fclose(file)
            text += String(decoding: bytes, as: UTF8.self)
        }
        return text
    }

    private func removeDirectory() {
        guard let dir = opendir(runtimeDirectory) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { unlink(runtimeDirectory + "/" + name) }
        }
        closedir(dir)
        rmdir(runtimeDirectory)
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }
}
