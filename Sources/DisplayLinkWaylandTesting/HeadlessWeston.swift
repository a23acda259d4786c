import Dispatch
import Glibc
import Synchronization

/// A private weston on its headless backend, for tests, benchmarks and `--headless` demo runs:
/// its own runtime directory and socket, no user configuration, stopped by ``stop()`` or deinit.
///
/// When the process is ended by SIGINT or SIGTERM, nothing runs ``stop()``: opt in to
/// ``stopOnTerminationSignals()`` (a program without signal handling of its own), or stop the
/// compositor from your own handler (with `DisplaySurface`, `surface.addCloseHandler { weston.stop() }`
/// and `DisplaySurface.installSignalHandlers()`).
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

    /// Numbers the compositors of this process (tests start several at once, from any thread).
    private static let counter = Atomic<Int>(0)

    /// Starts weston (`--backend=headless-backend.so --use-pixman --idle-time=0`) and waits for
    /// its socket.
    public init(width: Int = 640, height: Int = 480, extraArguments: [String] = []) throws {
        guard access("/usr/bin/weston", X_OK) == 0 else { throw LaunchError.notInstalled }
        let number = HeadlessWeston.counter.add(1, ordering: .relaxed).newValue
        var template = Array("/tmp/displaylink-weston-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw LaunchError.spawnFailed(errno)
        }
        runtimeDirectory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(runtimeDirectory, 0o700)
        let socketName = "wayland-dl-\(getpid())-\(number)"
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
        let status = CompositorProcessGroup.withCStrings(arguments) { argv in
            CompositorProcessGroup.withCStrings(environment) { envp in
                posix_spawn(&spawnedPID, "/usr/bin/weston", &fileActions, nil, argv, envp)
            }
        }
        guard status == 0 else { throw LaunchError.spawnFailed(status) }
        pid = spawnedPID
        HeadlessWeston.running.add(spawnedPID)

        // Wait for the socket (10 s at most: weston starts in well under a second).
        for _ in 0..<1000 {
            var exitStatus: Int32 = 0
            if waitpid(pid, &exitStatus, WNOHANG) == pid {
                HeadlessWeston.running.remove(pid)
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
            HeadlessWeston.running.remove(pid)
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
        HeadlessWeston.running.remove(pid)
        pid = 0
    }

    /// Stops weston (SIGTERM, then SIGKILL after 3 s) and removes its directory. Idempotent.
    /// A weston stopped by SIGSTOP is continued first, so it handles the SIGTERM at once.
    public func stop() {
        if pid > 0 {
            Glibc.kill(pid, SIGTERM)
            Glibc.kill(pid, SIGCONT)
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
            HeadlessWeston.running.remove(pid)
            pid = 0
        }
        removeDirectory()
    }

    /// weston's log so far.
    public func readLog() -> String {
        CompositorProcessGroup.readFile(logPath) + CompositorProcessGroup.readFile(logPath + ".stdout")
    }

    private func removeDirectory() { CompositorProcessGroup.removeTree(runtimeDirectory) }

    // MARK: Stopping on termination signals

    /// Makes SIGINT and SIGTERM stop every running private weston of this process (SIGTERM to
    /// each) before the process ends with the signal's default action. Idempotent. For programs
    /// without signal handling of their own: it replaces the signals' dispositions (a program that
    /// handles them itself, e.g. with `DisplaySurface.installSignalHandlers()`, should stop the
    /// compositor from there instead). The runtime directory is left behind in that case.
    public static func stopOnTerminationSignals() {
        running.prepareForSignals()
        signal(SIGINT, HeadlessWeston.terminationHandler)
        signal(SIGTERM, HeadlessWeston.terminationHandler)
        // A mask inherited from the parent (a thread that blocked them, e.g. for a signalfd) would
        // leave them pending for ever: unblock them on the calling thread.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    private static let terminationHandler: @convention(c) (Int32) -> Void = { signalNumber in
        // Async-signal-safe: reads a fixed table, kill(2), signal(2), raise(3).
        HeadlessWeston.running.signalAll()
        signal(signalNumber, SIG_DFL)
        raise(signalNumber)
    }

    /// The pids of running private westons, in a fixed table a signal handler can read without
    /// allocating or locking.
    static let running = RunningCompositors()
}

/// Unchecked: the table is written under `lock` and read without it only by the signal handler.
final class RunningCompositors: @unchecked Sendable {
    static let capacity = 64
    private let slots: UnsafeMutablePointer<pid_t>
    private let lock = Mutex<Void>(())

    init() {
        // Never freed: a signal handler may read it until the process ends.
        let slots = UnsafeMutablePointer<pid_t>.allocate(capacity: RunningCompositors.capacity)
        slots.initialize(repeating: 0, count: RunningCompositors.capacity)
        self.slots = slots
    }

    func add(_ pid: pid_t) {
        lock.withLock { _ in
            for i in 0..<RunningCompositors.capacity where slots[i] == 0 {
                slots[i] = pid
                return
            }
        }
    }

    /// `pid` negative: a process group (HeadlessMutter), signalled as a whole.
    func remove(_ pid: pid_t) {
        guard pid != 0 else { return }
        lock.withLock { _ in
            for i in 0..<RunningCompositors.capacity where slots[i] == pid { slots[i] = 0 }
        }
    }

    /// Touches the table so its lazy initialisation never happens inside a signal handler.
    func prepareForSignals() {
        _ = slots
    }

    func signalAll() {
        for i in 0..<RunningCompositors.capacity where slots[i] != 0 {
            Glibc.kill(slots[i], SIGTERM)
        }
    }
}

// One owner at a time (a test, a benchmark); Sendable so that it can be started off the calling
// thread (``HeadlessWeston/start(width:height:extraArguments:)``) and handed back.
extension HeadlessWeston: @unchecked Sendable {}

extension HeadlessWeston {
    /// Starts weston as ``init(width:height:extraArguments:)`` does, waiting for its socket on
    /// another thread: the initialiser blocks its caller until weston listens (seconds on a loaded
    /// machine), which on the main actor holds up every other main-actor task meanwhile (other
    /// tests' frames, in a parallel test run).
    public static func start(width: Int = 640, height: Int = 480, extraArguments: [String] = []) async throws -> HeadlessWeston {
        try await offCallingThread { try HeadlessWeston(width: width, height: height, extraArguments: extraArguments) }
    }
}

/// Runs `body` on a dispatch pool thread and returns its result to the awaiting task.
func offCallingThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}
