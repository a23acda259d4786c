import Foundation
import Testing

/// The pids of processes whose command line contains `text` (and whose parent is `parent`, when
/// given: a process that weston forks to start a helper client carries weston's command line
/// until it execs, so counting by command line alone sometimes finds two).
func processes(matching text: String, parent: Int32? = nil) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let pid = Int32(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { return nil }
        let line = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
        // A zombie has an empty command line: only live processes match.
        guard line.contains(text) else { return nil }
        return parent == nil || parentPID(of: pid) == parent ? pid : nil
    }
}

/// The parent's pid from `/proc/PID/stat` (the field after the state, which follows the name in
/// parentheses), nil when the process is gone.
func parentPID(of pid: Int32) -> Int32? {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
    let stat = String(decoding: data, as: UTF8.self)
    guard let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 1 ? Int32(fields[1]) : nil
}

@Suite("The demo's private compositor and signals", .serialized)
struct DemoSignalTests {
    @Test("--headless: SIGTERM mid-run ends the demo with status 0 and stops its private weston (no compositor left behind)")
    func headlessSIGTERM() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DemoProcess.binary)
        process.arguments = ["bounce", "--headless", "--size", "320x240", "--seconds", "600"]
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // The demo's weston is named by the demo's pid in its socket name.
        let marker = "--socket=wayland-dl-\(process.processIdentifier)-"
        let clock = ContinuousClock()
        var deadline = clock.now + .seconds(60)
        while processes(matching: marker).isEmpty && process.isRunning && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let westons = processes(matching: marker, parent: process.processIdentifier)
        #expect(westons.count == 1, "the demo's weston was not found")
        // Whatever the demo is doing when the signal comes (warming up, drawing, waiting for a
        // callback), the signal ends it cleanly: no waiting for a moment when it "should" be drawing.
        #expect(process.isRunning)
        kill(process.processIdentifier, SIGTERM)
        deadline = clock.now + .seconds(60)
        while process.isRunning && clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning)
        if !process.isRunning { #expect(process.terminationStatus == 0) }
        #expect(processes(matching: marker).isEmpty, "the private weston outlived the demo")
        for pid in processes(matching: marker) { kill(pid, SIGKILL) }
    }
}
