import DisplayLinkWaylandTesting
import Foundation
import Testing

let isWestonSignalProbe = ProcessInfo.processInfo.environment["DISPLAYLINK_WESTON_SIGNAL_PROBE"] == "1"

@Suite("HeadlessWeston and termination signals")
struct HeadlessWestonSignalTests {
    /// Run only as the child of the test below: starts a weston with the opt-in and waits to be killed.
    @Test("(probe) a process with a private weston that opted in", .enabled(if: isWestonSignalProbe))
    func probe() throws {
        HeadlessWeston.stopOnTerminationSignals()
        let weston = try HeadlessWeston()
        let line = "probe-weston-ready \(weston.pid)\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
        sleep(120)  // the test below kills this process long before; not a wait for anything
    }

    @Test("stopOnTerminationSignals: SIGTERM to the process stops its private weston before it dies", .enabled(if: !isWestonSignalProbe))
    func sigtermStopsWeston() async throws {
        // This very test bundle (run again, as the probe), or the debug build's.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let bundle =
            CommandLine.arguments[0].hasSuffix(".xctest")
            ? CommandLine.arguments[0]
            : root.appendingPathComponent(".build/debug/DisplayLinkPackageTests.xctest").path
        try #require(FileManager.default.isExecutableFile(atPath: bundle), "no test bundle at \(bundle)")
        var environment = ChildProcess.inheritedEnvironment
        environment["DISPLAYLINK_WESTON_SIGNAL_PROBE"] = "1"
        let probe = try ChildProcess(
            [bundle, "--testing-library", "swift-testing", "--filter", "HeadlessWestonSignalTests/probe"],
            environment: environment, output: .captured, errors: .discarded)
        defer { probe.kill() }
        let marker = "--socket=wayland-dl-\(probe.pid)-"
        // Wait for the probe to say its weston is up (its init returned: the pid is registered).
        let ready = await eventually(pollingEvery: .milliseconds(20)) {
            probe.capturedOutput.contains("probe-weston-ready") || !probe.isRunning
        }
        #expect(
            ready && probe.capturedOutput.contains("probe-weston-ready"),
            "the probe never started its weston: \(probe.capturedOutput)")
        #expect(ProcessTable.live(commandLineContaining: marker, parent: probe.pid).count == 1, "the probe's weston is not running")
        kill(probe.pid, SIGTERM)
        let ended = await eventually(within: .seconds(30), pollingEvery: .milliseconds(20)) { !probe.isRunning }
        let signalState = ProcessTable.text(of: "/proc/\(probe.pid)/status")
            .split(separator: "\n").filter { $0.hasPrefix("Sig") || $0.hasPrefix("ShdPnd") || $0.hasPrefix("State") }
            .joined(separator: "; ")
        #expect(ended, "the probe did not end within 30 s of SIGTERM: \(signalState)")
        #expect(probe.termination == .signalled(SIGTERM), "the probe did not end by SIGTERM's default action")
        let westonEnded = await eventually(within: .seconds(10), pollingEvery: .milliseconds(20)) {
            ProcessTable.live(commandLineContaining: marker).isEmpty
        }
        #expect(westonEnded, "the probe's weston outlived it")
        for pid in ProcessTable.live(commandLineContaining: marker) { kill(pid, SIGKILL) }
    }
}
