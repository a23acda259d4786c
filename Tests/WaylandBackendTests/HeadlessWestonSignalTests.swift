import DisplayLinkWaylandTesting
import Foundation
import Testing

let isWestonSignalProbe = ProcessInfo.processInfo.environment["DISPLAYLINK_WESTON_SIGNAL_PROBE"] == "1"

/// The live processes whose command line contains `text` (and whose parent is `parent`, when
/// given: a process that weston forks to start a helper client carries weston's command line
/// until it execs, so counting by command line alone sometimes finds two).
func liveProcesses(matching text: String, parent: Int32? = nil) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let pid = Int32(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline"),
              String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(text) else { return nil }
        guard let parent else { return pid }
        // The parent's pid: the field after the state, which follows the name in parentheses.
        guard let stat = FileManager.default.contents(atPath: "/proc/\(name)/stat").map({ String(decoding: $0, as: UTF8.self) }),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 && Int32(fields[1]) == parent ? pid : nil
    }
}

@Suite("HeadlessWeston and termination signals")
struct HeadlessWestonSignalTests {
    /// Run only as the child of the test below: starts a weston with the opt-in and waits to be killed.
    @Test("(probe) a process with a private weston that opted in", .enabled(if: isWestonSignalProbe))
    func probe() throws {
        HeadlessWeston.stopOnTerminationSignals()
        let weston = try HeadlessWeston()
        let line = "probe-weston-ready \(weston.pid)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
        sleep(120)
    }

    @Test("stopOnTerminationSignals: SIGTERM to the process stops its private weston before it dies", .enabled(if: !isWestonSignalProbe))
    func sigtermStopsWeston() async throws {
        // This very test bundle (run again, as the probe), or the debug build's.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let bundle = CommandLine.arguments[0].hasSuffix(".xctest") ? CommandLine.arguments[0]
            : root.appendingPathComponent(".build/debug/DisplayLinkPackageTests.xctest").path
        try #require(FileManager.default.isExecutableFile(atPath: bundle), "no test bundle at \(bundle)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bundle)
        process.arguments = ["--testing-library", "swift-testing", "--filter", "HeadlessWestonSignalTests/probe"]
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAYLINK_WESTON_SIGNAL_PROBE"] = "1"
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let marker = "--socket=wayland-dl-\(process.processIdentifier)-"
        // Wait for the probe to say its weston is up (its init returned: the pid is registered).
        let fd = out.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        let clock = ContinuousClock()
        var deadline = clock.now + .seconds(60)
        while !text.contains("probe-weston-ready") && process.isRunning && clock.now < deadline {
            let n = read(fd, &buffer, buffer.count)
            if n > 0 { text += String(decoding: buffer[0..<n], as: UTF8.self) } else { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(text.contains("probe-weston-ready"), "the probe never started its weston: \(text)")
        #expect(liveProcesses(matching: marker, parent: process.processIdentifier).count == 1, "the probe's weston is not running")
        kill(process.processIdentifier, SIGTERM)
        deadline = clock.now + .seconds(30)
        while process.isRunning && clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let signalState = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8))?
            .split(separator: "\n").filter { $0.hasPrefix("Sig") || $0.hasPrefix("ShdPnd") || $0.hasPrefix("State") }
            .joined(separator: "; ") ?? ""
        #expect(!process.isRunning, "the probe did not end within 30 s of SIGTERM: \(signalState)")
        // (Foundation traps on terminationReason while the process runs.)
        guard !process.isRunning else { return }
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM,
                "the probe did not end by SIGTERM's default action")
        deadline = clock.now + .seconds(10)
        while !liveProcesses(matching: marker).isEmpty && clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(liveProcesses(matching: marker).isEmpty, "the probe's weston outlived it")
        for pid in liveProcesses(matching: marker) { kill(pid, SIGKILL) }
    }
}
