import DRMBackend
import DisplayLinkWaylandTesting
import SystemPackage
import DisplayLinkCore
import Foundation
import Testing

/// Which display driver the VM has (`Scripts/vkms-vm run --display vkms|bochs`).
let vmDisplay = ProcessInfo.processInfo.environment["DISPLAYLINK_VM_DISPLAY"] ?? "vkms"

/// What holds at any speed for frames paced by the timer on a driver without vblank events:
/// timer provenance on every frame (never hardware vblank), timestamps on the timer's grid
/// (frame 0's timestamp plus a whole number of exact periods: they come from the schedule, not
/// from when the timer woke); frame 1, the first tick after the mode set, a restart (zero delta,
/// no misses); after it delta = the timestamp difference, missed = periods − 1, duration
/// the exact period, targets one to four whole periods ahead (more than one when the render time
/// says the frame will not be ready for the next tick); flips decided at most once per period of
/// the grid, so never more than the whole periods they span, plus three.
@MainActor
func expectTimerFrames(_ client: FlipClient, period: Nanoseconds, sourceLocation: SourceLocation = #_sourceLocation) {
    let frames = client.frames
    guard let first = frames.first else {
        Issue.record("no frames", sourceLocation: sourceLocation)
        return
    }
    for (i, f) in frames.enumerated() {
        #expect(f.provenance == .timerFallback, "frame \(i): \(f.provenance)", sourceLocation: sourceLocation)
        #expect(f.duration == period, sourceLocation: sourceLocation)
        #expect(
            (f.timestamp - first.timestamp).value % period.value == 0,
            "frame \(i): \(f.timestamp) is not frame 0's \(first.timestamp) + whole periods", sourceLocation: sourceLocation)
        let ahead = (f.targetTimestamp - f.timestamp).value
        #expect(
            ahead % period.value == 0 && (1...4).contains(ahead / period.value), "frame \(i): target \(ahead) ns ahead",
            sourceLocation: sourceLocation)
        guard i >= 1 else { continue }
        let a = frames[i - 1]
        #expect(f.timestamp > a.timestamp, "frame \(i)", sourceLocation: sourceLocation)
        if i == 1 {
            #expect(
                f.delta == .zero && f.missedFrames == 0, "frame 1: delta \(f.delta), missed \(f.missedFrames)",
                sourceLocation: sourceLocation)
            continue
        }
        #expect(f.delta == f.timestamp - a.timestamp, sourceLocation: sourceLocation)
        #expect(f.missedFrames == Int((f.timestamp - a.timestamp).value / period.value) - 1, "frame \(i)", sourceLocation: sourceLocation)
        #expect(f.sequence - a.sequence == UInt64((f.timestamp - a.timestamp).value / period.value), sourceLocation: sourceLocation)
    }
    // A flip can be aimed up to a quarter period before its tick (the timer's learned lateness), so
    // its time says which period it counted for only up to that: N flips in distinct periods lie
    // at least N − 2 periods less a quarter apart, whole periods N − 3.
    let flips = client.display.recentFlipSubmissions
    if let firstFlip = flips.first, let lastFlip = flips.last {
        let spanned = (lastFlip - firstFlip).value / period.value
        #expect(Int64(flips.count) <= spanned + 3, "\(flips.count) flips in \(spanned) periods", sourceLocation: sourceLocation)
    }
    #expect(client.display.recentKernelVblanks.allSatisfy { $0.kind == .flip })
}

@MainActor
@Suite(
    "DRM/KMS on a driver without vblank events (bochs, inside Scripts/vkms-vm --display bochs)", .serialized,
    .enabled(if: vmDisplay == "bochs" && (hasKMS || insideVM)))
struct NoVblankTests {
    @Test(
        """
        the driver refuses vblank queries (EOPNOTSUPP): 60 callbacks paced by the timer on the exact-period grid, timer provenance, at \
        most one flip per period; the CRTC restored
        """,
        arguments: [KMSAPI.atomic, .legacy])
    func timerPacing(api: KMSAPI) async throws {
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480"), kmsAPI: api))
        #expect(client.display.driverName == "bochs-drm")
        #expect(client.display.kmsAPI == api)
        #expect(client.display.pacing == .timer)
        #expect(client.display.vblankRefusal == .notSupported)
        let period = client.display.mode.period
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 60 || client.failure != nil })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        expectTimerFrames(client, period: period)
        #expect(client.display.flipsSubmitted >= 1)
        // Frame 0 set the mode: on screen when the mode set returned, after its timestamp.
        if let shown = client.presented[client.frames[0].refreshIndex] {
            #expect(shown.sequence == nil && shown.time >= client.frames[0].timestamp)
        } else {
            Issue.record("frame 0 (the mode set) has no presentation feedback")
        }
        // Every other presented frame: at its flip's completion (no vblank counter), after its tick.
        for f in client.frames.dropFirst() {
            guard let shown = client.presented[f.refreshIndex] else { continue }
            #expect(shown.sequence == nil && shown.time >= f.timestamp)
            #expect(client.display.recentKernelVblanks.contains { $0.time == shown.time })
        }
        print(
            """
            [drm/\(api)] no vblank: \(client.frames.count) frames on the timer grid, \(client.display.flipsSubmitted) flips; deltas \
            (periods) \(client.frames.prefix(12).map { $0.delta.value / period.value })
            """
        )
        client.display.shutDown()
        #expect(
            crtc.state?.buffer == before?.buffer, "CRTC not restored: \(String(describing: before)) → \(String(describing: crtc.state))")
    }

    @Test("a callback that draws nothing still ticks by the timer, without flips")
    func idleTicks() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480")))
        client.draws = false
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 20 || client.failure != nil })
        client.link?.invalidate()
        #expect(client.failure == nil)
        #expect(client.display.flipsSubmitted == 0)  // the mode set only
        expectTimerFrames(client, period: client.display.mode.period)
        client.display.shutDown()
    }

    @Test(
        """
        through seatd on bochs (timer pacing): a VT switch away and back sets the mode again and flips again (it stayed on the console, or \
        held every frame behind a flip that had completed while away), no callbacks while away, a zero delta on return; keys through \
        libinput; the CRTC restored
        """
    )
    func seatSessionAndVTSwitch() async throws {
        try await seatVTSwitch(provenance: .timerFallback, presentedAfterVblank: false, label: "drm on bochs")
    }

    @Test(
        """
        the demo on bochs: report with pacing timer, timer-fallback provenance on every frame, deltas whole periods, no allocation in \
        frames 40 to 140; exits 0, the CRTC restored
        """,
        arguments: ["atomic", "legacy"])
    func demo(api: String) async throws {
        let demo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("displaylink-demo")
            .path
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("bochs-demo-bounce-\(api).json").path
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        try expectNoAllocationPerFrame(
            [
                demo, "bounce", "--backend", "drm", "--mode", "640x480", "--kms-api", api,
                "--frames", "160", "--report", report
            ], label: "drm/\(api) on bochs")
        #expect(crtc.state?.buffer == before?.buffer)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        let environment = json["environment"] as? [String: Any] ?? [:]
        #expect(environment["driver"] as? String == "bochs-drm")
        #expect(environment["pacing"] as? String == "timer")
        #expect((environment["quirks"] as? String)?.contains("no-vblank-events") == true, "\(environment["quirks"] ?? "none")")
        #expect(environment["kms_api"] as? String == api)
        let period = environment["period_exact"] as? Double ?? 0
        let frames = json["frames"] as? [[String: Any]] ?? []
        #expect(frames.count == 160)
        #expect(frames.allSatisfy { $0["provenance"] as? String == TimestampProvenance.timerFallback.rawValue })
        #expect(frames.count > 1 && frames[1]["delta"] as? Double == 0 && frames[1]["missed"] as? Int == 0)
        for i in frames.indices.dropFirst(2) {
            guard let t = frames[i]["timestamp"] as? Double, let p = frames[i - 1]["timestamp"] as? Double,
                let delta = frames[i]["delta"] as? Double, let missed = frames[i]["missed"] as? Int
            else { continue }
            let periods = delta / period
            #expect(abs(periods - periods.rounded()) < 1e-6 && periods >= 1, "frame \(i): delta \(delta) is not whole periods")
            #expect(abs(delta - (t - p)) < 1e-9)
            #expect(missed == Int(periods.rounded()) - 1)
        }
        let presented = frames.filter { $0["presented"] is Double }.count
        print("[drm/\(api)] demo on bochs: \(frames.count) frames, \(presented) presented; report \(report)")
    }
}
