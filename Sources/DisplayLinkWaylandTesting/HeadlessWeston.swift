import Dispatch
import Glibc
import Synchronization

/// A private weston on its headless backend, for tests, benchmarks and `--headless` demo runs:
/// its own runtime directory and socket, no user configuration, in a process group of its own
/// (weston and the helper clients it starts), stopped by ``HeadlessCompositor/stop()`` or deinit.
///
/// When the process is ended by SIGINT or SIGTERM, nothing runs ``HeadlessCompositor/stop()``:
/// opt in to ``stopOnTerminationSignals()`` (a program without signal handling of its own), or
/// stop the compositor from your own handler (with `DisplaySurface`,
/// `surface.addCloseHandler { weston.stop() }` and `DisplaySurface.installSignalHandlers()`).
public final class HeadlessWeston: HeadlessCompositor, @unchecked Sendable {
    /// Starts weston (`--backend=headless-backend.so --use-pixman --idle-time=0`) and waits for
    /// its socket (60 s at most, a hang guard: weston starts in well under a second).
    public init(width: Int = 640, height: Int = 480, extraArguments: [String] = []) throws {
        guard access("/usr/bin/weston", X_OK) == 0 else { throw HeadlessWeston.launchError(.notInstalled("weston")) }
        let language = getenv("LANG").map { ["LANG=" + String(cString: $0)] } ?? []
        let process: CompositorProcessGroup
        do {
            // The socket's name carries this process's pid: a test finds the weston a child
            // started by it.
            process = try CompositorProcessGroup(
                label: "weston", socketPrefix: "wayland-dl", root: nil,
                environment: language
            ) { socketName in
                [
                    "weston", "--backend=headless-backend.so", "--use-pixman", "--socket=\(socketName)",
                    "--idle-time=0", "--width=\(width)", "--height=\(height)"
                ] + extraArguments
            }
        } catch {
            throw HeadlessWeston.launchError(error.reason)
        }
        super.init(process: process)
    }

    private static func launchError(_ reason: CompositorLaunchError.Reason) -> CompositorLaunchError {
        CompositorLaunchError("weston", installHint: "apt-get install weston", reason)
    }

    /// Kills weston at once (SIGKILL), as a crash would.
    public func kill() { process.kill() }

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

    /// `pid` negative: a process group, signalled as a whole.
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
