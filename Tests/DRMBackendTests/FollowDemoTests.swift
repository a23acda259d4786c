import DisplayLinkWaylandTesting
import Foundation
import Testing

extension VKMSTests {
    @Test(
        """
        the demo's follow scene with a virtual mouse: every event in order, each with the first frame drawn with it (drawn after its \
        delivery), latency = presented − time exactly, the summary's median and p99 of them; every move shown by a frame before the \
        one that resumed after them; exits 0 and the CRTC is restored
        """,
        arguments: [false, true])
    func demoFollow(lowLatency: Bool) async throws {
        guard insideVM else { return }
        // The devices exist before the demo opens its seat (libinput reads them then).
        let mouse = try VirtualMouse()
        let keyboard = try VirtualKeyboard()
        let demo = demoPath()
        let name = lowLatency ? "low-latency" : "throughput"
        // Beside the build (in the shared checkout), so the report outlives the VM.
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("vkms-demo-follow-\(name).json").path
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        // Standard input is /dev/null: the demo's input comes through libinput.
        let run = try ChildProcess.start(
            [demo, "follow", "--backend", "drm", "--mode", "640x480", "--seconds", "600", "--report", report]
                + (lowLatency ? ["--low-latency"] : []))
        defer { run.kill() }
        #expect(await run.line(containing: "running: follow on drm") != nil, "\(run.errorLines.suffix(10))")
        // Moves once it flips steadily (past the mode set and the first runs of new code).
        #expect(await seeFlips(30, on: crtc, other: before?.buffer, while: run), "the demo never flipped: \(run.errorLines.suffix(10))")
        let moves = ProcessInfo.processInfo.environment["DISPLAYLINK_FOLLOW_MOVES"].flatMap(Int.init) ?? 6
        for k in 0..<moves {
            // A zigzag that drifts right and down, well inside 640×480 wherever it starts.
            mouse.move(dx: k % 2 == 0 ? 9 : -5, dy: k % 2 == 0 ? 3 : -1)
            // Pacing only (moves at every phase of the refresh); nothing waits on it.
            try await Task.sleep(for: .milliseconds(23))
        }
        // The keys come after the moves through the same seat: the frame that resumes after
        // space, space was drawn after every move was delivered.
        keyboard.tap(VirtualKeyboard.keySpace)
        #expect(await run.line(containing: "key: paused") != nil, "\(run.errorLines.suffix(10))")
        keyboard.tap(VirtualKeyboard.keySpace)
        let resumed = await run.line(containing: "key: resumed at refresh ")
        let resumedRefresh = try #require(resumed.flatMap { Int($0.split(separator: " ").last ?? "") }, "\(run.errorLines.suffix(10))")
        keyboard.tap(VirtualKeyboard.keyQ)
        #expect(await run.ended() == 0, "\(run.errorLines.suffix(10))")
        #expect(crtc.state?.buffer == before?.buffer)

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        #expect(json["scene"] as? String == "follow")
        #expect((json["environment"] as? [String: Any])?["latency"] as? String == (lowLatency ? "lowLatency" : "throughput"))
        let problems = DemoInputReportContract.violations(in: json)
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))")
        let events = json["input"] as? [[String: Any]] ?? []
        let frames = json["frames"] as? [[String: Any]] ?? []
        // One motion per move (libinput: a relative move is a motion and a frame), each shown by
        // a frame at or before the resume, and presented: a KMS flip's completion is always known
        // before the demo ends (it waits for it), and every frame before the resume flipped.
        #expect(events.count == moves, "\(events.count) events")
        #expect(events.allSatisfy { $0["kind"] as? String == "pointer_motion" && $0["time_source"] as? String == "precise" })
        for (i, event) in events.enumerated() {
            let frame = try #require(event["frame"] as? Int, "event \(i) was shown by no frame: \(event)")
            let refresh = frames[frame]["refresh_index"] as? Int ?? .max
            #expect(refresh <= resumedRefresh, "event \(i) first shown at refresh \(refresh), after the resume at \(resumedRefresh)")
            #expect(event["latency"] is Double, "event \(i): no latency: \(event)")
        }
        let period = (json["environment"] as? [String: Any])?["period_exact"] as? Double ?? 0
        expectReportFrames(frames, period: period, zeroDeltas: Set(frames.indices.filter { frames[$0]["delta"] as? Double == 0 }))
        let summary = json["summary"] as? [String: Any] ?? [:]
        print(
            """
            [drm\(lowLatency ? ", low latency" : "")] follow: \(events.count) events, \(summary["input_events_presented"] ?? "?") \
            presented; latency median \(summary["input_latency_median"] ?? "?"), p99 \(summary["input_latency_p99"] ?? "?"); to submit \
            median \(summary["input_to_submit_median"] ?? "?"), p99 \(summary["input_to_submit_p99"] ?? "?"); report \(report)
            """)
    }
}
