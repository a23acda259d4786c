import DisplayLinkWaylandTesting
import Foundation
import Testing
import WaylandBackend

/// Pointer moves for the follow tests: `DISPLAYLINK_FOLLOW_MOVES` (default 6; 50 for figures).
let followMoves = ProcessInfo.processInfo.environment["DISPLAYLINK_FOLLOW_MOVES"].flatMap(Int.init) ?? 6

/// The follow scene's report on a real compositor with real input: sway, its cursor moved by its
/// IPC (the seat's pointer a virtual one), keys typed by wtype. sway 1.7's headless output sends
/// no presentation feedback (wlroots 0.15 reports its present before the commit it belongs to,
/// so every feedback stays pending), so there each event's frame is known but not when it was
/// shown: the contract is checked as it stands (latency null with no presentation). weston's
/// headless backend takes no input here (no test plugin in Debian's weston).
@MainActor
@Suite("The demo's follow scene on sway: each pointer event and the first frame that showed it", .serialized)
struct DemoFollowTests {
    /// The lines of the demo's standard error containing `text`.
    func lines(_ demo: ChildProcess, containing text: String) -> [Substring] {
        demo.capturedErrors.split(separator: "\n").filter { $0.contains(text) }
    }

    /// Waits (a hang guard only) for the `count`-th line containing `text`.
    func line(_ demo: ChildProcess, containing text: String, count: Int = 1) async -> Substring? {
        _ = await eventually(within: .seconds(120)) { lines(demo, containing: text).count >= count || !demo.isRunning }
        let found = lines(demo, containing: text)
        return found.count >= count ? found[count - 1] : nil
    }

    /// Whether sway's tree (`get_tree`) has a visible window of `appID`.
    func isVisible(_ tree: String, appID: String) -> Bool {
        func search(_ node: [String: Any]) -> Bool {
            if node["app_id"] as? String == appID && node["visible"] as? Bool == true { return true }
            let children = (node["nodes"] as? [[String: Any]] ?? []) + (node["floating_nodes"] as? [[String: Any]] ?? [])
            return children.contains(where: search)
        }
        let root = (try? JSONSerialization.jsonObject(with: Data(tree.utf8))) as? [String: Any]
        return root.map(search) ?? false
    }

    @Test(
        """
        follow with a report while sway's cursor moves: every event in order, each with the first kept frame drawn with it (drawn after \
        its delivery), latency = presented − time where presented, the summary's median and p99 of them; every move delivered and \
        shown by a frame before the one that resumed after them
        """,
        arguments: [false, true])
    func followOnSway(lowLatency: Bool) async throws {
        let sway = try await HeadlessSway.start(width: 320, height: 240)
        defer { sway.stop() }
        // The seat's pointer (sway's seat has one only while a pointer device exists) and keyboard.
        let devices = try WaylandConnection(socket: sway.socketPath)
        let pointer = try #require(WaylandVirtualPointer(connection: devices), "sway offers zwlr_virtual_pointer_manager_v1")
        defer { pointer.destroy() }
        var synced = false
        devices.sync { synced = true }
        #expect(await eventually { synced })
        try await sway.holdVirtualKeyboard()

        let report = temporaryPath("follow-sway-\(lowLatency ? "low-latency" : "throughput").json")
        defer { unlink(report) }
        let demo = try DemoProcess.start(
            ["follow", "--backend", "wayland", "--size", "320x240", "--seconds", "600", "--report", report]
                + (lowLatency ? ["--low-latency"] : []),
            compositor: sway)
        defer { demo.kill() }
        #expect(await line(demo, containing: "running: follow on wayland") != nil, "stderr: \(demo.capturedErrors)")
        // Mapped (sway lists the window as visible): from now on the cursor's moves reach it.
        let mapped = await eventually(within: .seconds(120)) {
            guard demo.isRunning else { return true }
            return isVisible(try await sway.swaymsgQuery("get_tree").output, appID: "org.displaylink.demo")
        }
        #expect(mapped && demo.isRunning, "the demo's window was never mapped; stderr: \(demo.capturedErrors)")

        var positions: [(x: Int, y: Int)] = []
        for k in 0..<followMoves {
            let position = (x: 20 + (k * 37) % 280, y: 20 + (k * 23) % 200)
            positions.append(position)
            #expect(try await sway.swaymsg("seat", "seat0", "cursor", "set", "\(position.x)", "\(position.y)").termination == .exited(0))
            // Pacing only (moves at every phase of the refresh, not all in one frame); nothing waits on it.
            try await Task.sleep(for: .milliseconds(23))
        }
        // Keys come after the moves on the demo's connection: the frame that resumes after space,
        // space was drawn after every move was delivered.
        #expect(try await sway.wtype(["-k", "space"]).termination == .exited(0))
        #expect(await line(demo, containing: "key: paused") != nil, "stderr: \(demo.capturedErrors)")
        #expect(try await sway.wtype(["-k", "space"]).termination == .exited(0))
        let resumed = await line(demo, containing: "key: resumed at refresh ")
        let resumedRefresh = try #require(resumed.flatMap { Int($0.split(separator: " ").last ?? "") }, "stderr: \(demo.capturedErrors)")
        #expect(try await sway.wtype(["-k", "q"]).termination == .exited(0))
        #expect(await eventually(within: .seconds(120)) { !demo.isRunning })
        #expect(demo.termination == .exited(0), "stderr: \(demo.capturedErrors)")

        let json = try loadJSON(report)
        #expect(json["scene"] as? String == "follow")
        let problems = DemoInputReportContract.violations(in: json)
        #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))")
        let events = json["input"] as? [[String: Any]] ?? []
        let frames = json["frames"] as? [[String: Any]] ?? []
        // Every move was delivered (at its place, exact in points) and shown by a frame no later
        // than the one that resumed after them.
        let seen = Set(
            events.compactMap { event -> String? in
                guard let x = event["x"] as? Double, let y = event["y"] as? Double else { return nil }
                return "\(x),\(y)"
            })
        for position in positions { #expect(seen.contains("\(Double(position.x)),\(Double(position.y))"), "move to \(position)") }
        #expect(events.count >= positions.count)
        for (i, event) in events.enumerated() {
            let frame = try #require(event["frame"] as? Int, "event \(i) was shown by no frame: \(event)")
            let refresh = frames[frame]["refresh_index"] as? Int ?? .max
            #expect(refresh <= resumedRefresh, "event \(i) first shown at refresh \(refresh), after the resume at \(resumedRefresh)")
        }
        let summary = json["summary"] as? [String: Any] ?? [:]
        print(
            """
            [sway\(lowLatency ? ", low latency" : "")] follow: \(events.count) events from \(positions.count) moves, \
            \(summary["input_events_presented"] ?? "?") presented; latency median \(summary["input_latency_median"] ?? "?"), \
            p99 \(summary["input_latency_p99"] ?? "?"); to submit median \(summary["input_to_submit_median"] ?? "?"), \
            p99 \(summary["input_to_submit_p99"] ?? "?"); frames \(frames.count), presented \(summary["presented"] ?? "?")
            """)
    }
}
