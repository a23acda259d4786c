import Foundation
import Testing
import DisplayLinkWaylandTesting

@Suite("The library's log: silent by default, its decisions with --log-level debug", .serialized)
struct DemoLoggingTests {
    @Test("without --log-level the library prints nothing; with --log-level debug it says which backend and which clock")
    func logLevels() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let quiet = try DemoProcess.run(["bounce", "--views", "5", "--size", "320x240", "--frames", "3"], weston: weston)
        #expect(quiet.status == 0, "stderr: \(quiet.stderr)")
        #expect(!quiet.stderr.contains("displaylink."), "stderr: \(quiet.stderr)")
        let loud = try DemoProcess.run(
            ["bounce", "--views", "5", "--size", "320x240", "--frames", "3", "--log-level", "debug"],
            weston: weston)
        #expect(loud.status == 0, "stderr: \(loud.stderr)")
        #expect(loud.stderr.contains("displaylink.surface"), "stderr: \(loud.stderr)")
        #expect(loud.stderr.contains("backend wayland (auto)"), "stderr: \(loud.stderr)")
        #expect(loud.stderr.contains("displaylink.wayland"), "stderr: \(loud.stderr)")
        #expect(loud.stderr.contains("CLOCK_MONOTONIC_RAW"), "stderr: \(loud.stderr)")
        // The log is the library's decisions, not frames: a 3-frame run and its log lines are few.
        let lines = loud.stderr.split(separator: "\n").filter { $0.contains("displaylink.") }
        #expect(lines.count < 20, "\(lines.count) log lines for 3 frames:\n\(loud.stderr)")
        let bad = try DemoProcess.run(["bounce", "--log-level", "loud"], weston: nil)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--log-level"))
    }
}
