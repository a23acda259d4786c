import Foundation
import Testing
import DisplayLinkWaylandTesting

@Suite("--seconds is wall-clock time: a run ends whatever the compositor does", .serialized)
struct DemoStallTests {
    @Test("weston stopped (SIGSTOP) as the link starts: the demo still ends on its own with status 0 and reports the stall")
    func compositorStopped() async throws {
        let weston = try HeadlessWeston()
        defer {
            kill(weston.pid, SIGCONT)
            weston.stop()
        }
        let path = temporaryPath("stall.json")
        let demo = try DemoProcess.start(
            ["bounce", "--views", "10", "--size", "320x240", "--seconds", "10", "--report", path],
            weston: weston)
        defer { demo.kill() }
        // Event-driven: the demo says "running:" once its link exists (window configured, before
        // the first frame is committed); weston is stopped then, so from here on no frame callback
        // comes (one already on its way at most). The run is 10 s so that even a test process
        // starved for seconds by a loaded host stops weston long before the run would end by itself.
        _ = await eventually(within: .seconds(120)) { demo.capturedErrors.contains("running:") || !demo.isRunning }
        #expect(demo.capturedErrors.contains("running: bounce on wayland"), "stderr: \(demo.capturedErrors)")
        #expect(kill(weston.pid, SIGSTOP) == 0)
        // Hang guard only: a demo that never ends fails the test instead of hanging it.
        let ended = await eventually(within: .seconds(120)) { !demo.isRunning }
        let stderrText = demo.capturedErrors
        #expect(ended, "still running after the hang guard; stderr: \(stderrText)")
        #expect(demo.termination == .exited(0), "stderr: \(stderrText)")
        #expect(stderrText.contains("stalled:"), "stderr: \(stderrText)")
        #expect(demo.capturedOutput.contains("report: \(path)"))
        let report = try loadJSON(path)
        let summary = report["summary"] as? [String: Any] ?? [:]
        #expect(summary["ended_by"] as? String == "seconds")
        #expect(summary["stalled"] as? Bool == true)
        let frames = report["frames"] as? [[String: Any]] ?? []
        let lastCallback = frames.last?["callback_at"] as? Double
        // The stall began at the last callback (or at the link's start when none came), and the
        // run ended after it; the last callback the report names is the last frame's.
        let stallBegan = summary["stall_began_at"] as? Double ?? .nan
        let endedAt = summary["ended_at"] as? Double ?? .nan
        let linkStarted = summary["link_started_at"] as? Double ?? .nan
        #expect(summary["last_callback_at"] as? Double == lastCallback)
        #expect(stallBegan == (lastCallback ?? linkStarted))
        #expect(linkStarted <= stallBegan && stallBegan < endedAt)
        // Not before its time: 10 s after the first frame (or the link's start).
        let origin = frames.first?["timestamp"] as? Double ?? linkStarted
        #expect(endedAt >= origin + 10)
    }

    @Test("a run that frames end says so: ended_by frames, not stalled, its last callback is the last frame's")
    func endedByFrames() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("ended.json")
        let run = try DemoProcess.run(
            ["bounce", "--views", "10", "--size", "320x240", "--frames", "5", "--report", path],
            weston: weston)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try loadJSON(path)
        let summary = report["summary"] as? [String: Any] ?? [:]
        #expect(summary["ended_by"] as? String == "frames")
        #expect(summary["stalled"] as? Bool == false)
        #expect(summary.keys.contains("stall_began_at") && summary["stall_began_at"] is NSNull)
        let frames = report["frames"] as? [[String: Any]] ?? []
        #expect(summary["last_callback_at"] as? Double == frames.last?["callback_at"] as? Double)
        if let ended = summary["ended_at"] as? Double, let last = frames.last?["submitted_at"] as? Double {
            #expect(ended >= last)
        } else {
            Issue.record("ended_at or submitted_at missing")
        }
    }
}
