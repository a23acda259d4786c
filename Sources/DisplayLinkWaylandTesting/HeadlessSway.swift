import Glibc

/// A private headless sway (wlroots' headless backend, pixman renderer, no input devices) for
/// tests that need real input: sway's IPC moves its cursor and presses its buttons
/// (`swaymsg(_:)`: `seat seat0 cursor …`), and `wtype` types through its virtual keyboard
/// protocol (`wtype(_:)`). Its own runtime directory, socket (sway names it `wayland-1`) and
/// configuration (one output of the size asked for at 0,0, no borders, no bar, no Xwayland);
/// stopped by ``stop()`` or deinit.
///
/// sway refuses to run as root: as root, it runs as `nobody` (through `setpriv`), owning its
/// runtime directory. Its seat has a device kind only while such a device exists: see
/// `holdVirtualKeyboard()`, and, for a pointer, the virtual pointer of the Wayland backend's
/// tests.
public final class HeadlessSway {
    /// The absolute path of the compositor's socket: pass it to `WaylandConnection(socket:)`.
    public var socketPath: String { process.socketPath }
    public var runtimeDirectory: String { process.runtimeDirectory }
    public var logPath: String { process.logPath }
    /// sway's pid, which is also its process group's (0 once stopped).
    public var pid: pid_t { process.pid }
    /// sway's IPC socket (`swaymsg -s`).
    public let ipcSocketPath: String
    /// The output's size (its name is `HEADLESS-1`, at 0,0).
    public let width: Int, height: Int

    private let process: CompositorProcessGroup
    /// The `wtype` that holds a virtual keyboard (`holdVirtualKeyboard()`).
    private var keyboardHolder: ChildProcess?

    /// Starts sway headless with one output of `width`×`height` and waits for its Wayland and IPC
    /// sockets (60 s at most, a hang guard: sway starts in well under a second). Keys repeat
    /// after `repeatDelay` ms, `repeatRate` times a second (sway's input configuration, sent to
    /// clients as `wl_keyboard.repeat_info`).
    public init(width: Int = 640, height: Int = 480, repeatDelay: Int = 600, repeatRate: Int = 25) throws {
        for program in ["/usr/bin/sway", "/usr/bin/swaymsg", "/usr/bin/wtype"] where access(program, X_OK) != 0 {
            throw HeadlessSway.launchError(.notInstalled(String(program.split(separator: "/").last ?? "")))
        }
        self.width = width
        self.height = height
        let config = """
            output HEADLESS-1 resolution \(width)x\(height) position 0 0
            default_border none
            default_floating_border none
            focus_follows_mouse no
            xwayland disable
            input type:keyboard repeat_delay \(repeatDelay)
            input type:keyboard repeat_rate \(repeatRate)

            """
        let nobody: (uid: uid_t, gid: gid_t)? = getuid() == 0 ? (65534, 65534) : nil
        do {
            process = try CompositorProcessGroup(
                label: "sway", root: nil,
                environment: ["WLR_BACKENDS=headless", "WLR_LIBINPUT_NO_DEVICES=1", "WLR_RENDERER=pixman"],
                files: ["sway/config": config], fixedSocketName: "wayland-1", user: nobody
            ) { _ in ["sway"] }  // its configuration from $XDG_CONFIG_HOME/sway/config, the runtime directory's
        } catch {
            throw HeadlessSway.launchError(error.reason)
        }
        let ipc = process.runtimeDirectory + "/sway-ipc.\(nobody?.uid ?? getuid()).\(process.pid).sock"
        ipcSocketPath = ipc
        guard process.wait(upTo: .seconds(60), until: { access(ipc, F_OK) == 0 }) else {
            let log = process.readLog()
            process.stop()
            throw HeadlessSway.launchError(.noSocket(log: log))
        }
    }

    private static func launchError(_ reason: CompositorLaunchError.Reason) -> CompositorLaunchError {
        CompositorLaunchError("sway", installHint: "Scripts/install-deps installs sway and wtype", sockets: "its sockets", reason)
    }

    /// Starts sway as ``init(width:height:repeatDelay:repeatRate:)`` does, waiting for its
    /// sockets on another thread.
    public static func start(width: Int = 640, height: Int = 480, repeatDelay: Int = 600, repeatRate: Int = 25) async throws
        -> HeadlessSway
    {
        try await offCallingThread {
            try HeadlessSway(width: width, height: height, repeatDelay: repeatDelay, repeatRate: repeatRate)
        }
    }

    deinit { stop() }

    /// Whether sway is still running.
    public var isRunning: Bool { process.isRunning }

    /// Stops the keyboard holder and sway (SIGTERM, then SIGKILL after 3 s), and removes its
    /// directory. Idempotent.
    public func stop() {
        keyboardHolder?.stop()
        keyboardHolder = nil
        process.stop()
    }

    /// sway's log so far.
    public func readLog() -> String { process.readLog() }

    /// What a client of this sway needs in its environment (a UTF-8 locale too: `wtype` reads
    /// its text through it).
    private var toolEnvironment: [String: String] {
        [
            "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": runtimeDirectory, "WAYLAND_DISPLAY": "wayland-1", "LC_ALL": "C.UTF-8",
            "SWAYSOCK": ipcSocketPath
        ]
    }

    /// Runs `swaymsg -s IPC -- arguments…` (a command: `--`, so that `cursor move 16 -4` is no
    /// option) to its end, off the calling thread (the caller's actor goes on dispatching
    /// meanwhile). A hang guard of 60 s.
    package func swaymsg(_ arguments: String...) async throws -> ChildProcess.Outcome {
        let command = ["/usr/bin/swaymsg", "-s", ipcSocketPath, "--"] + arguments
        let environment = toolEnvironment
        return try await offCallingThread { try ChildProcess.run(command, environment: environment, limit: .seconds(60)) }
    }

    /// Runs `swaymsg -s IPC -t type` (a query such as `get_tree` or `get_seats`) to its end, off
    /// the calling thread. A hang guard of 60 s.
    package func swaymsgQuery(_ type: String) async throws -> ChildProcess.Outcome {
        let command = ["/usr/bin/swaymsg", "-s", ipcSocketPath, "-t", type]
        let environment = toolEnvironment
        return try await offCallingThread { try ChildProcess.run(command, environment: environment, limit: .seconds(60)) }
    }

    /// Runs `wtype arguments…` against this sway to its end, off the calling thread. Each run
    /// adds a virtual keyboard with a keymap of its own (the keys it types, at codes 1, 2, …, in
    /// the order of first use) and removes it when it ends; its key events carry time 0.
    package func wtype(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        let command = ["/usr/bin/wtype"] + arguments
        let environment = toolEnvironment
        return try await offCallingThread { try ChildProcess.run(command, environment: environment, limit: .seconds(60)) }
    }

    /// Starts `wtype arguments…` against this sway and returns at once: for a key held while it
    /// runs (`-P x -s 100000`). Stopping it removes its keyboard, and sway then releases the
    /// keys it held (each release with the time of the removal).
    package func startWtype(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(["/usr/bin/wtype"] + arguments, environment: toolEnvironment)
    }

    /// Adds a virtual keyboard that stays until ``stop()`` (a `wtype` that waits): the seat then
    /// keeps its keyboard between `wtype(_:)` runs, so a client's `wl_keyboard` is not released
    /// and made again around each run (and a run's first keys are not sent before the client has
    /// its keyboard again). Returns once the seat has a keyboard (a hang guard of 60 s).
    package func holdVirtualKeyboard() async throws {
        guard keyboardHolder == nil else { return }
        keyboardHolder = try ChildProcess(["/usr/bin/wtype", "-s", "4000000"], environment: toolEnvironment)
        let command = ["/usr/bin/swaymsg", "-s", ipcSocketPath, "-t", "get_seats"]
        let environment = toolEnvironment
        _ = await eventually {
            (try? ChildProcess.run(command, environment: environment))?.output.contains("\"type\": \"keyboard\"") == true
        }
    }
}

// One owner at a time (a test); Sendable so that it can be started off the calling thread.
extension HeadlessSway: @unchecked Sendable {}
extension HeadlessSway: PrivateCompositor {}
