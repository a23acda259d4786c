import DisplayLinkCore
import Testing
import DisplayLinkWaylandTesting
import WaylandBackend

/// mutter 50 (Debian forky root, `Scripts/os-root forky`) holds a timed commit made while its
/// headless stage is idle: nothing else repaints, and its frame clock schedules no frame that
/// applies it; a commit due at once behind it stays queued too (the release of c0c6cd3, after
/// which no frame callback came again). The source must find the hold on evidence (two answered
/// `wl_display.sync` probes), release it with a commit timed a period ahead, and go on untimed.
/// Waits are event-driven; their limits only guard against hangs.
@MainActor
@Suite("A timed commit held by a real mutter 50", .serialized)
struct MutterHeldCommitTests {
    @Test("mutter 50, default options: a timed commit made on an idle stage (the link resumed after a pause) is held; the source probes, falls back, releases it, and frames flow again")
    func heldCommitReleased() async throws {
        let mutter = try await HeadlessMutter.mutter50()
        defer { mutter.stop() }
        let client = try PacedClient(socket: mutter.socketPath)
        #expect(client.source.usesCommitTiming)
        client.start()
        let started = await wait(upTo: .seconds(120)) {
            client.presentedTimes.count >= 30 || client.source.isCommitTimingFallenBack || client.swapError != nil
        }
        #expect(started, "frames did not start: \(client.presentedTimes.count) presented; mutter log:\n\(mutter.readLog())")
        if !client.source.isCommitTimingFallenBack {
            // Paused until the stage is idle: the map animation (about 250 ms) is over and the
            // last frame's callback came, so nothing repaints when the link resumes.
            client.link?.isPaused = true
            let answered = await wait(upTo: .seconds(60)) { !client.source.hasOutstandingFrameRequest }
            #expect(answered)
            try await Task.sleep(for: .seconds(1))
            client.link?.isPaused = false
        }
        let heldAt = client.presentedTimes.count
        let flowing = await wait(upTo: .seconds(120)) {
            (client.source.isCommitTimingFallenBack && client.presentedTimes.count >= heldAt + 30) || client.swapError != nil
        }
        client.link?.invalidate()
        #expect(flowing, "frames stopped: \(client.presentedTimes.count) presented (\(heldAt) before the hold), fell back: \(client.source.isCommitTimingFallenBack), probes \(client.source.heldCommitProbeCount), releases \(client.source.releaseCommitCount); mutter log:\n\(mutter.readLog())")
        #expect(client.swapError == nil)
        #expect(client.source.isCommitTimingFallenBack)
        #expect(client.source.heldCommitProbeCount >= 2)
        #expect(client.source.releaseCommitCount >= 1)
        #expect(!client.source.timingProtocolsInUse.contains { $0.hasPrefix("wp_commit_timing") })
        // Once a frame after the timed ones is untimed, no later frame is timed again.
        let firstTimed = client.feedback.filter { $0.commitTarget != nil }.map(\.refreshIndex).min() ?? 0
        if let firstUntimed = client.feedback.filter({ $0.refreshIndex > firstTimed && $0.commitTarget == nil }).map(\.refreshIndex).min() {
            #expect(client.feedback.allSatisfy { $0.refreshIndex <= firstUntimed || $0.commitTarget == nil })
        } else {
            Issue.record("no untimed frame after the timed ones")
        }
        print("[mutter 50, held commit] \(client.presentedTimes.count) presented, \(heldAt) before the hold; probes \(client.source.heldCommitProbeCount), releases \(client.source.releaseCommitCount); fell back: \(client.source.isCommitTimingFallenBack)")
    }
}
