import Foundation
import DisplayLinkWaylandTesting

/// The harness of these tests: the built `displaylink-demo` (next to the test bundle) run as a
/// child process, connected to a private weston or to no display at all.
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
        var environment = ChildProcess.inheritedEnvironment
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        environment.removeValue(forKey: "WAYLAND_SOCKET")
        if let weston {
            environment.merge(weston.clientEnvironment) { $1 }
        } else {
            let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-display-\(getpid())")
            try? FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
            environment["XDG_RUNTIME_DIR"] = empty.path
        }
        return environment
    }

    /// Runs the demo with `arguments` to its end, connected to `weston` when given, with no display
    /// otherwise; `extraEnvironment` is added to its environment. A demo still running after 120 s
    /// is killed (a hang guard: it fails its test instead of hanging it).
    static func run(_ arguments: [String], weston: HeadlessWeston?, extraEnvironment: [String: String] = [:]) throws -> DemoProcess {
        let run = try ChildProcess.run([binary] + arguments, environment: environment(for: weston).merging(extraEnvironment) { $1 })
        return DemoProcess(status: run.termination.status, stdout: run.output, stderr: run.errors)
    }

    /// Starts the demo with `arguments` connected to `compositor` (any private compositor: sway,
    /// weston, mutter) and leaves it running, its standard output and error captured.
    static func start(_ arguments: [String], compositor: any PrivateCompositor) throws -> ChildProcess {
        var environment = ChildProcess.inheritedEnvironment
        environment.removeValue(forKey: "WAYLAND_SOCKET")
        environment.merge(compositor.clientEnvironment) { $1 }
        return try ChildProcess([binary] + arguments, environment: environment, output: .captured, errors: .captured)
    }

    /// Starts the demo with `arguments` as ``run(_:weston:extraEnvironment:)`` does and leaves it
    /// running, its standard output and error captured.
    static func start(_ arguments: [String], weston: HeadlessWeston?) throws -> ChildProcess {
        try ChildProcess([binary] + arguments, environment: environment(for: weston), output: .captured, errors: .captured)
    }
}

func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("dl-\(getpid())-\(name)").path
}

func loadJSON(_ path: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
}
