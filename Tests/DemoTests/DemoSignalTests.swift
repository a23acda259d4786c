import Foundation
import Testing

/// The pids of processes whose command line contains `text`.
func processes(matching text: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> Int32? in
        guard let pid = Int32(name), let data = FileManager.default.contents(atPath: "/proc/\(name)/cmdline") else { return nil }
        let line = String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
        // A zombie has an empty command line: only live processes match.
        return line.contains(text) ? pid : nil
    }
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
        let westons = processes(matching: marker)
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
