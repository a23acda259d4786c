import Foundation
import DisplayLinkWaylandTesting

/// Runs the built `displaylink-demo` (next to the test bundle) and captures its output.
struct DemoProcess {
    var status: Int32
    var stdout: String
    var stderr: String

    static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("displaylink-demo").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/displaylink-demo").path
    }

    /// The demo's environment: connected to `weston` when given, with no display otherwise.
    static func environment(for weston: HeadlessWeston?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        environment.removeValue(forKey: "WAYLAND_SOCKET")
        if let weston {
            environment["XDG_RUNTIME_DIR"] = weston.runtimeDirectory
            environment["WAYLAND_DISPLAY"] = URL(fileURLWithPath: weston.socketPath).lastPathComponent
        } else {
            let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-display-\(getpid())")
            try? FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            environment["XDG_RUNTIME_DIR"] = empty.path
        }
        return environment
    }

    /// Runs the demo with `arguments`, connected to `weston` when given, with no display otherwise;
    /// `extraEnvironment` is added to its environment.
    static func run(_ arguments: [String], weston: HeadlessWeston?, extraEnvironment: [String: String] = [:]) throws -> DemoProcess {
        try execute(binary, arguments, environment: environment(for: weston).merging(extraEnvironment) { $1 })
    }

    private static func execute(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> DemoProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // A hung process must fail the test, not hang it: kill it after 120 s.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        watchdog.cancel()
        return DemoProcess(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                           stderr: String(decoding: errData, as: UTF8.self))
    }
}

func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("dl-\(getpid())-\(name)").path
}

func loadJSON(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
}
