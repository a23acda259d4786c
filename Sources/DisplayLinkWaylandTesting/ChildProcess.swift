import Foundation
import Glibc
import Synchronization

/// A program started with `posix_spawn`: how the private compositors, the probes' compiler and the
/// tests start a child. Its standard input is /dev/null, its output goes to files (or nowhere), its
/// signal mask is empty and its signal handlers the defaults (a child spawned from a thread of this
/// process would otherwise inherit that thread's mask), and it leads a process group of its own, so
/// that ``signal(_:)``, ``stop(grace:)`` and ``kill()`` reach every process it starts (a session
/// bus, a compositor's helper clients) and nothing else.
///
/// posix_spawn, not Foundation's `Process`: inside the vkms VM the latter cannot make its wake-up
/// socket pair. Waits poll `waitpid`; their limits are hang guards, not timing bounds.
package final class ChildProcess: Sendable {
    /// Where a standard stream goes.
    package enum Destination: Sendable, Equatable {
        /// Nowhere (/dev/null).
        case discarded
        /// This file, created or truncated.
        case file(String)
        /// A file of the child's own, read with ``capturedOutput`` or ``capturedErrors`` and removed
        /// with the ``ChildProcess``.
        case captured
        /// Where standard output goes (for standard error).
        case standardOutput
    }

    /// How a child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        init(waitStatus: Int32) {
            self = (waitStatus & 0x7f) == 0 ? .exited((waitStatus >> 8) & 0xff) : .signalled(waitStatus & 0x7f)
        }

        /// As a shell says it: the exit status, or 128 plus the signal's number.
        package var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "ended by signal \(signal)"
            }
        }
    }

    package struct SpawnError: Error, CustomStringConvertible {
        package let program: String
        package let errno: Int32

        package var description: String { "cannot start \(program): \(String(cString: strerror(errno)))" }
    }

    /// What a child that ran to its end left: how it ended and what it wrote.
    package struct Outcome: Sendable {
        package var termination: Termination
        package var output: String
        /// Standard error ("" when it went to standard output).
        package var errors: String
    }

    /// The child's process id, which is also its process group's.
    package let pid: pid_t
    private let outputFile: String?
    private let errorFile: String?
    /// How it ended once reaped; `finished` once its group is gone too (its id may then be reused,
    /// so nothing is signalled any more).
    private let state = Mutex<(termination: Termination?, finished: Bool)>((nil, false))

    /// This process's environment, for a child that runs in it (with changes).
    package static var inheritedEnvironment: [String: String] { ProcessInfo.processInfo.environment }

    /// Starts `arguments` (the first is the child's `argv[0]`, and its path unless `executable` is
    /// given) with exactly `environment`, and `input` (a file or a terminal's path) as its
    /// standard input.
    package init(
        _ arguments: [String], executable: String? = nil,
        environment: [String: String] = ChildProcess.inheritedEnvironment, input: String = "/dev/null",
        output: Destination = .discarded, errors: Destination = .standardOutput
    ) throws(SpawnError) {
        let program = executable ?? arguments[0]
        let outputFile = try ChildProcess.path(for: output, program: program)
        let errorFile: String?
        do { errorFile = try ChildProcess.path(for: errors, program: program) } catch {
            if output == .captured, let outputFile { unlink(outputFile) }
            throw error
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, input == "/dev/null" ? O_RDONLY : O_RDWR | O_NOCTTY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if errors == .standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, errorFile ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let variables = environment.map { "\($0.key)=\($0.value)" }
        let status = ChildProcess.withCStrings(arguments) { argv in
            ChildProcess.withCStrings(variables) { envp in
                posix_spawn(&pid, program, &actions, &attributes, argv, envp)
            }
        }
        guard status == 0 else {
            if output == .captured, let outputFile { unlink(outputFile) }
            if errors == .captured, let errorFile { unlink(errorFile) }
            throw SpawnError(program: program, errno: status)
        }
        self.pid = pid
        self.outputFile = output == .captured ? outputFile : nil
        self.errorFile = errors == .captured ? errorFile : nil
    }

    deinit {
        kill()
        for file in [outputFile, errorFile] { if let file { unlink(file) } }
    }

    /// Runs `arguments` to their end, its output captured (and its errors, apart or with it as
    /// `errors` says); killed, with its group, if it is still running after `limit` (a hang guard:
    /// a hung child fails its test instead of hanging it).
    package static func run(
        _ arguments: [String], executable: String? = nil,
        environment: [String: String] = ChildProcess.inheritedEnvironment,
        errors: Destination = .captured, limit: Duration = .seconds(120)
    ) throws(SpawnError) -> Outcome {
        let child = try ChildProcess(arguments, executable: executable, environment: environment, output: .captured, errors: errors)
        let termination = child.wait(upTo: limit) ?? child.kill()
        return Outcome(termination: termination, output: child.capturedOutput, errors: child.capturedErrors)
    }

    /// What the child wrote to its standard output so far, when it is ``Destination/captured``.
    package var capturedOutput: String { outputFile.map(ProcessTable.text(of:)) ?? "" }
    /// What the child wrote to its standard error so far, when it is ``Destination/captured``.
    package var capturedErrors: String { errorFile.map(ProcessTable.text(of:)) ?? "" }

    /// How the child ended; nil while it runs (reaps it once it has ended).
    package var termination: Termination? { reap() }

    /// Whether the child (the group's leader) has not ended yet.
    package var isRunning: Bool { termination == nil }

    /// Whether ``stop(grace:)`` or ``kill()`` is done: the child and its group are gone.
    package var isFinished: Bool { state.withLock { $0.finished } }

    /// Sends `signalNumber` to the child's process group, until it is finished.
    package func signal(_ signalNumber: Int32) {
        state.withLock { state in
            if !state.finished { Glibc.kill(-pid, signalNumber) }
        }
    }

    /// Blocks until the child has ended or `condition` holds, checking every 10 ms, for at most
    /// `limit` (a hang guard): for callers that cannot suspend (an initialiser that waits for a
    /// compositor's socket, a test without `async`). Returns how the child ended, nil while it runs.
    @discardableResult
    package func wait(upTo limit: Duration, until condition: () -> Bool = { false }) -> Termination? {
        _ = ChildProcess.poll(upTo: limit) { termination != nil || condition() }
        return termination
    }

    /// Ends the child: SIGTERM (and SIGCONT, so that a stopped one handles it at once), SIGKILL
    /// if it still runs after `grace`; then what is left of its group is killed and waited for
    /// until none of it runs (so that what the group held, such as a mount namespace, is gone).
    /// Idempotent; returns how the child ended.
    @discardableResult
    package func stop(grace: Duration = .seconds(3)) -> Termination {
        if isRunning {
            signal(SIGTERM)
            signal(SIGCONT)
            if wait(upTo: grace) == nil { signal(SIGKILL) }
        }
        return finish()
    }

    /// Kills the child and its group at once (SIGKILL), as a crash would; waits as ``stop(grace:)``
    /// does. Idempotent; returns how the child ended.
    @discardableResult
    package func kill() -> Termination {
        if isRunning { signal(SIGKILL) }
        return finish()
    }

    /// Reaps the child (after it was told to end) and kills what is left of its group, waiting
    /// until none of it runs: orphaned members are init's to reap, and are done once zombies. The
    /// waits are hang guards only: a killed process ends at once unless it is stuck in the kernel,
    /// and then its kernel stack is printed and the caller goes on (the child stays unreaped)
    /// rather than hanging its test without a word.
    private func finish() -> Termination {
        var termination = termination
        if termination == nil, !ChildProcess.poll(upTo: .seconds(30), until: { self.termination != nil }) {
            print("[child \(pid)] not ended 30 s after SIGKILL: \(ProcessTable.kernelState(of: pid))")
        }
        termination = self.termination
        if !isFinished {
            signal(SIGKILL)
            if !ChildProcess.poll(upTo: .seconds(5), until: { ProcessTable.liveMembers(ofGroup: pid).isEmpty }) {
                for member in ProcessTable.liveMembers(ofGroup: pid) {
                    print("[child \(pid)] group member \(member) still runs: \(ProcessTable.kernelState(of: member))")
                }
            }
            state.withLock { $0.finished = true }
        }
        return termination ?? .signalled(SIGKILL)
    }

    /// Checks `condition` every 10 ms until it holds or `limit` passes, blocking: `eventually` for
    /// the launcher's callers, which cannot suspend. Returns whether the condition held.
    private static func poll(upTo limit: Duration, until condition: () -> Bool) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        while !condition() {
            guard clock.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// How the child ended, reaping it if it has; nil while it runs. Never blocks.
    private func reap() -> Termination? {
        state.withLock { state in
            if let termination = state.termination { return termination }
            var status: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &status, WNOHANG) } while result == -1 && errno == EINTR
            guard result == pid else { return nil }
            state.termination = Termination(waitStatus: status)
            return state.termination
        }
    }

    /// The file a stream goes to: a new one in /tmp when captured; nil for nowhere or standard output.
    private static func path(for destination: Destination, program: String) throws(SpawnError) -> String? {
        switch destination {
        case .discarded, .standardOutput: return nil
        case .file(let path): return path
        case .captured:
            var template = Array("/tmp/displaylink-child-XXXXXX".utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw SpawnError(program: program, errno: errno) }
            close(fd)
            return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// `strings` as a NULL-terminated `char *[]` (argv, envp) for the duration of `body`.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return body(pointers)
    }
}
