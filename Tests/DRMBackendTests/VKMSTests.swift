import DRMBackend
import SystemPackage
import DisplayLinkCore
import Foundation
import DisplayLinkWaylandTesting
import GLESRenderer
import Testing

/// A KMS device (inside `Scripts/vkms-vm`, or a machine with one), and whether this runs inside
/// the VM: there the suite runs (and fails) without a device; elsewhere it is skipped.
let hasKMS = FileManager.default.fileExists(atPath: "/dev/dri/card0")
let insideVM = ProcessInfo.processInfo.environment["DISPLAYLINK_IN_VKMS_VM"] == "1"

@Test("inside the vkms VM, the DRM device exists (the hardware tests below must not skip there)")
func vmHasDevice() {
    if insideVM { #expect(hasKMS, "no /dev/dri/card0 inside the VM: vkms did not load") }
}

/// The vblanks the kernel reported, by sequence (a flip event carries microseconds, a vblank
/// event or read nanoseconds: one vblank may be known by two times).
@MainActor
func kernelTimes(_ display: DRMDisplay) -> [UInt64: Set<MonotonicInstant>] {
    var times: [UInt64: Set<MonotonicInstant>] = [:]
    for v in display.recentKernelVblanks { times[v.sequence, default: []].insert(v.time) }
    return times
}

/// What holds at any speed for a link's frames on a DRM display: frame 0 is the CRTC's current
/// vblank before the mode set (the VM's console keeps the CRTC running), read from the kernel,
/// in the same sequence space as the frames after it; every later frame's timestamp is a vblank time the kernel reported for its sequence;
/// frame 1 (the first vblank after the mode set) is a restart (zero delta, no misses); after it,
/// sequences go forward, missed = step − 1, delta = the timestamp difference; duration is the
/// exact period; the target is a whole number (≥ 1) of periods ahead; every presented frame is
/// shown at a vblank the kernel reported, after its own. (Flip events carry microseconds, vblank
/// events and reads nanoseconds: the order of vblanks is compared by sequence.)
@MainActor
func expectHardwareFrames(_ client: FlipClient, period: Nanoseconds, sourceLocation: SourceLocation = #_sourceLocation) {
    let frames = client.frames
    let kernel = kernelTimes(client.display)
    #expect(frames.count >= 2, sourceLocation: sourceLocation)
    guard frames.count >= 2 else { return }
    #expect(frames[0].provenance == .hardwareVBlank, sourceLocation: sourceLocation)
    #expect(
        kernel[frames[0].sequence]?.contains(frames[0].timestamp) == true,
        "frame 0: \(frames[0].timestamp) is not the vblank the kernel reported for \(frames[0].sequence)", sourceLocation: sourceLocation)
    #expect(
        frames[1].sequence > frames[0].sequence, "one sequence space: \(frames[0].sequence) → \(frames[1].sequence)",
        sourceLocation: sourceLocation)
    #expect(frames[1].delta == .zero && frames[1].missedFrames == 0, sourceLocation: sourceLocation)
    for (i, f) in frames.enumerated() {
        #expect(f.duration == period, "frame \(i): duration \(f.duration.value) ns", sourceLocation: sourceLocation)
        // Whole periods ahead, or held at the previous target (never back, even when the kernel
        // stamps one vblank with two times).
        let ahead = (f.targetTimestamp - f.timestamp).value
        let held = i >= 1 && f.targetTimestamp == frames[i - 1].targetTimestamp
        #expect(
            ahead > 0 && (ahead % period.value == 0 || held), "frame \(i): target − timestamp = \(ahead) ns",
            sourceLocation: sourceLocation)
        guard i >= 1 else { continue }
        #expect(f.targetTimestamp >= frames[i - 1].targetTimestamp, "frame \(i): target went back", sourceLocation: sourceLocation)
        #expect(f.provenance == .hardwareVBlank, sourceLocation: sourceLocation)
        #expect(
            kernel[f.sequence]?.contains(f.timestamp) == true,
            "frame \(i): timestamp \(f.timestamp) is not a vblank time the kernel reported for \(f.sequence) (\(kernel[f.sequence] ?? []))",
            sourceLocation: sourceLocation)
        if let shown = client.presented[f.refreshIndex] {
            let known = shown.sequence.flatMap { kernel[$0] }
            #expect(
                known?.contains(shown.time) == true, "frame \(i): presented at \(shown.time), not a reported vblank",
                sourceLocation: sourceLocation)
            #expect(
                shown.sequence.map { $0 > f.sequence } == true,
                "frame \(i) (vblank \(f.sequence)) presented at vblank \(String(describing: shown.sequence))",
                sourceLocation: sourceLocation)
        }
        guard i >= 2 else { continue }
        let a = frames[i - 1]
        #expect(f.sequence > a.sequence, "frame \(i): sequence \(a.sequence) → \(f.sequence)", sourceLocation: sourceLocation)
        guard f.sequence > a.sequence else { continue }
        #expect(
            f.missedFrames == Int(f.sequence - a.sequence) - 1, "frame \(i): seq \(a.sequence) → \(f.sequence), missed \(f.missedFrames)",
            sourceLocation: sourceLocation)
        #expect(f.delta == f.timestamp - a.timestamp, "frame \(i)", sourceLocation: sourceLocation)
    }
}

@MainActor
@Suite(
    "DRM/KMS on vkms (inside Scripts/vkms-vm; fails there without a device)", .serialized,
    .enabled(if: vmDisplay == "vkms" && (hasKMS || insideVM)))
struct VKMSTests {
    /// The exact period from the timings, computed here independently (rounded to the ns).
    func exactPeriod(_ m: DisplayMode) -> Nanoseconds {
        let divisor = Int64(m.clock) * (m.interlaced ? 2 : 1)
        let scan = Int64(m.htotal) * Int64(m.vtotal) * 1_000_000 * (m.doubleScan ? 2 : 1)
        return Nanoseconds((scan + divisor / 2) / divisor)
    }

    @Test(
        """
        mode set and 120 callbacks: every timestamp a vblank the kernel reported, misses = sequence steps, exact duration, targets whole \
        periods ahead or held, never back; the CRTC restored
        """,
        arguments: [KMSAPI.atomic, .legacy])
    func flips(api: KMSAPI) async throws {
        let before = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@60"), kmsAPI: api))
        #expect(client.display.driverName == "vkms")
        #expect(client.display.kmsAPI == api)
        #expect(client.display.pacing == .vblank && client.display.vblankRefusal == nil)
        #expect(client.display.connectorName == "Virtual-1")
        let exact = exactPeriod(client.display.mode)
        #expect(client.display.mode.period == exact)
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 122 || client.failure != nil })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        expectHardwareFrames(client, period: exact)
        #expect(client.display.flipsCompleted >= 1)
        client.display.shutDown()
        let after = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        #expect(
            before?.buffer == after?.buffer && before?.modeValid == after?.modeValid,
            "CRTC not restored: \(String(describing: before)) → \(String(describing: after))")
    }

    @Test(
        """
        a renderer that presents a period + 3 ms after its vblank misses every vblank: two frames in flight (targets two periods ahead \
        from then on), each frame shown at a reported vblank
        """,
        arguments: [KMSAPI.atomic, .legacy])
    func slowRendererGoesToTwoInFlight(api: KMSAPI) async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@60"), kmsAPI: api))
        #expect(client.display.kmsAPI == api)
        let period = client.display.mode.period
        // However fast the machine, the frame is presented after the next vblank has passed.
        client.presentAfterVblank = period + Nanoseconds(3_000_000)
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 40 || client.failure != nil })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        expectHardwareFrames(client, period: period)
        // Every frame from the first drawn after the mode set missed its vblank: shown two
        // vblanks after its own or later.
        for (i, f) in client.frames.enumerated().dropFirst() {
            guard let shown = client.presented[f.refreshIndex] else { continue }
            #expect(
                shown.sequence.map { $0 >= f.sequence + 2 } == true,
                "frame \(i) (vblank \(f.sequence)) shown at vblank \(String(describing: shown.sequence))")
        }
        // Two in flight: a frame targeted two periods ahead, and from then on never fewer.
        let ahead = client.frames.map { ($0.targetTimestamp - $0.timestamp).value / period.value }
        let switched = ahead.firstIndex(of: 2)
        #expect(switched != nil, "never two frames in flight: \(ahead)")
        if let switched {
            #expect(ahead[switched...].allSatisfy { $0 >= 2 }, "periods ahead: \(ahead)")
        }
        print("[drm] slow renderer: periods ahead \(ahead)")
        client.display.shutDown()
    }

    @Test("a custom 144 Hz mode: duration exactly 1/144 s, every timestamp a reported vblank", arguments: [KMSAPI.atomic, .legacy])
    func custom144(api: KMSAPI) async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@144"), kmsAPI: api))
        #expect(client.display.kmsAPI == api)
        #expect(client.display.mode.period.value == 6_944_444)
        #expect(exactPeriod(client.display.mode).value == 6_944_444)
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 40 || client.failure != nil })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        #expect(client.frames.allSatisfy { $0.duration.value == 6_944_444 })
        expectHardwareFrames(client, period: Nanoseconds(6_944_444))
        client.display.shutDown()
    }

    @Test("a tick without drawing still ticks: a vblank event per callback, no flips", arguments: [KMSAPI.atomic, .legacy])
    func tickWithoutDrawing(api: KMSAPI) async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480"), kmsAPI: api))
        client.draws = false
        client.start()
        #expect(await eventually(within: .seconds(120)) { client.frames.count >= 30 })
        client.link?.invalidate()
        #expect(client.display.flipsSubmitted == 0)  // only the mode set, no page flips
        // The mode set's vblank event, then one per callback after it.
        #expect(client.display.idleTicks == client.frames.count)
        // The current vblank read at the start (the console's), then vblank events only.
        #expect(client.display.recentKernelVblanks.first?.kind == .current)
        #expect(client.display.recentKernelVblanks.dropFirst().allSatisfy { $0.kind == .vblank })
        expectHardwareFrames(client, period: client.display.mode.period)
        client.display.shutDown()
    }

    @Test(
        """
        callbacks before the first frame that draw nothing: the next comes a period later until one draws and sets the mode; then flips, \
        deltas the timestamp differences throughout
        """
    )
    func nothingDrawnFirst() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480")))
        client.drawsNothingFirst = 3
        client.start()
        #expect(
            await eventually(within: .seconds(120)) { client.frames.count >= 20 || client.failure != nil },
            "\(client.frames.count) callbacks")
        client.link?.invalidate()
        #expect(client.failure == nil)
        #expect(client.display.flipsSubmitted > 0)
        let frames = client.frames
        #expect(frames.count >= 20)
        for i in frames.indices.dropFirst() {
            let (a, b) = (frames[i - 1], frames[i])
            #expect(b.timestamp >= a.timestamp && b.sequence > a.sequence, "frame \(i)")
            if b.delta != .zero { #expect(b.delta == b.timestamp - a.timestamp, "frame \(i)") }
        }
        client.display.shutDown()
    }

    @Test("errors: no such device, a mode the display does not have, and a second master")
    func errors() throws {
        #expect(throws: DRMError.noDevice(path: "/dev/dri/card9")) { try DRMDisplay(options: .init(devicePath: "/dev/dri/card9")) }
        let missing = try ModeRequest(parsing: "1234x777")
        do {
            _ = try DRMDisplay(options: .init(mode: missing))
            Issue.record("a mode that does not exist was accepted")
        } catch {
            guard case .modeNotFound(_, let available) = error else { Issue.record("wrong error \(error)"); return }
            #expect(available.contains("1024x768"))
        }
        let first = try DRMDisplay(options: .init(mode: try ModeRequest(parsing: "640x480")))
        #expect(first.kmsAPI == .atomic)  // .automatic: vkms has atomic
        #expect(first.planeFormats?.fromInFormats == true)
        #expect(first.planeFormats?.supports(format: 0x3432_5258, modifier: PlaneFormats.linear) == true)  // XR24, linear
        #expect(throws: DRMError.notMaster(path: "/dev/dri/card0")) { try DRMDisplay(options: .init(devicePath: "/dev/dri/card0")) }
        first.shutDown()
    }

    func demoPath() -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("displaylink-demo").path
    }

    @Test(
        """
        the demo with --latency low: the report keeps its contract (every timestamp a reported vblank, targets never back, deltas \
        the differences); the environment says lowLatency; exits 0 and the CRTC is restored
        """)
    func demoLowLatency() async throws {
        let demo = demoPath()
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("vkms-demo-low-latency.json").path
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        let run = try ChildProcess.start([
            demo, "bounce", "--backend", "drm", "--mode", "640x480", "--frames", "120", "--latency", "low", "--report", report
        ])
        #expect(await run.ended() == 0, "\(run.errorLines.suffix(10))")
        #expect(crtc.state?.buffer == before?.buffer)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        let frames = json["frames"] as? [[String: Any]] ?? []
        #expect(frames.count == 120)
        let environment = json["environment"] as? [String: Any] ?? [:]
        #expect(environment["latency"] as? String == "lowLatency")
        let period = environment["period_exact"] as? Double ?? 0
        expectReportFrames(frames, period: period, zeroDeltas: [0, 1])
        // How long each frame took from its callback to the screen: printed (a figure, not a test).
        let latencies = frames.compactMap { frame -> Double? in
            guard let shown = frame["presented"] as? Double, let began = frame["callback_at"] as? Double else { return nil }
            return shown - began
        }.sorted()
        let median = latencies.isEmpty ? 0 : latencies[latencies.count / 2]
        print("[drm] low latency: \(latencies.count) presented, median callback to presentation \(median * 1000) ms; report \(report)")
    }

    @Test(
        """
        the demo: bounce 160 frames at 640x480 with a report that holds at any speed and no allocation in frames 40 to 140; SIGTERM \
        restores the CRTC
        """,
        arguments: ["atomic", "legacy"])
    func demoRuns(api: String) async throws {
        let demo = demoPath()
        // Beside the build (in the shared checkout), so the report outlives the VM for a person to read.
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("vkms-demo-bounce-\(api).json").path
        // Watched through a descriptor that is never master (a fresh open would be, racing the demo's).
        let crtc = try #require(CRTCWatcher())
        let before = crtc.state
        try expectNoAllocationPerFrame(
            [
                demo, "bounce", "--backend", "drm", "--mode", "640x480", "--kms-api", api,
                "--frames", "160", "--report", report
            ], label: "drm/\(api)")
        #expect(crtc.state?.buffer == before?.buffer)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        #expect(json["backend"] as? String == "drm")
        let frames = json["frames"] as? [[String: Any]] ?? []
        #expect(frames.count == 160)
        let environment = json["environment"] as? [String: Any] ?? [:]
        #expect(environment["kms_api"] as? String == api)
        #expect(environment["pacing"] as? String == "vblank")
        #expect((environment["quirks"] as? String)?.contains("no-vblank-events") == false, "\(environment["quirks"] ?? "none")")
        let period = environment["period_exact"] as? Double ?? 0
        #expect(period == Nanoseconds(16_683_217).seconds)  // vkms's 640x480 (59.94 Hz), exact
        // Frame 0: the console's vblank before the mode set (the CRTC was running), one sequence space.
        #expect(frames.first?["provenance"] as? String == TimestampProvenance.hardwareVBlank.rawValue)
        if frames.count > 1, let s0 = frames[0]["sequence"] as? Int, let s1 = frames[1]["sequence"] as? Int {
            #expect(s1 > s0, "one sequence space: \(s0) → \(s1)")
        }
        #expect(frames.dropFirst().allSatisfy { $0["provenance"] as? String == TimestampProvenance.hardwareVBlank.rawValue })
        expectReportFrames(frames, period: period, zeroDeltas: [0, 1])
        let presented = frames.filter { $0["presented"] is Double }.count
        print("[drm/\(api)] demo bounce 640x480: \(frames.count) frames, \(presented) presented; report: \(report)")

        // SIGTERM mid-run: a clean exit, and the CRTC is back.
        let long = try ChildProcess.start([demo, "bounce", "--backend", "drm", "--mode", "640x480", "--kms-api", api, "--seconds", "600"])
        // Terminate once it is really on screen (its framebuffer is on the CRTC).
        print("[drm/\(api)] demo started for SIGTERM (pid \(long.pid)); waiting for its framebuffer on the CRTC")
        let onScreen = await eventually(within: .seconds(120)) { crtc.state?.buffer != before?.buffer || !long.isRunning }
        #expect(onScreen && long.isRunning, "the demo never set its mode")
        long.signal(SIGTERM)
        print("[drm/\(api)] SIGTERM sent to the demo once on screen")
        #expect(await long.ended() == 0)
        #expect(crtc.state?.buffer == before?.buffer)
    }

    @Test(
        """
        console keys from a terminal in raw mode, each typed when the demo said the last one took effect: space pauses and resumes (zero \
        delta), q quits, the terminal is restored
        """
    )
    func consoleKeys() async throws {
        let demo = demoPath()
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("vkms-demo-keys.json").path
        // A pseudo-terminal (posix_openpt and friends are not in Swift's Glibc module: the ioctls).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(master >= 0, "cannot open /dev/ptmx: errno \(errno)")
        defer { close(master) }
        var unlock: Int32 = 0, number: UInt32 = 0
        #expect(ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0)
        #expect(ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0)
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        try #require(terminal >= 0, "cannot open the terminal: errno \(errno)")
        defer { close(terminal) }
        var before = termios()
        tcgetattr(terminal, &before)
        #expect(before.c_lflag & tcflag_t(ICANON | ECHO) == tcflag_t(ICANON | ECHO))

        let crtc = try #require(CRTCWatcher())
        let crtcBefore = crtc.state
        let run = try ChildProcess.start(
            [demo, "bounce", "--backend", "drm", "--mode", "640x480", "--seconds", "600", "--report", report],
            input: "/dev/pts/\(number)")
        func flips(_ count: Int) async -> Bool { await seeFlips(count, on: crtc, other: crtcBefore?.buffer, while: run) }
        // On screen and flipping (the mode set, then a few flips) before the first key.
        #expect(await flips(4), "the demo never flipped")
        var raw = termios()
        tcgetattr(terminal, &raw)
        #expect(raw.c_lflag & tcflag_t(ICANON | ECHO) == 0, "the demo did not put the terminal in raw mode")
        func type(_ key: String) { _ = key.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, key.utf8.count) } }
        type(" ")
        #expect(await run.line(containing: "key: paused") != nil, "no pause: \(run.errorLines)")
        type(" ")
        let resumed = await run.line(containing: "key: resumed at refresh ")
        #expect(resumed != nil, "no resume: \(run.errorLines)")
        #expect(await flips(3), "no flips after the resume")
        type("q")
        #expect(await run.line(containing: "key: quit") != nil, "no quit: \(run.errorLines)")
        #expect(await run.ended() == 0)
        var after = termios()
        tcgetattr(terminal, &after)
        #expect(after.c_lflag == before.c_lflag, "terminal not restored")
        #expect(crtc.state?.buffer == crtcBefore?.buffer)

        // The report: zero deltas only at the start-up pair (frame 0, and the restart at the first
        // vblank after the mode set) and at the callback the resume line named.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        let frames = json["frames"] as? [[String: Any]] ?? []
        let resumeRefresh = resumed.flatMap { Int($0.split(separator: " ").last ?? "") }
        let resumeIndex = frames.firstIndex { $0["refresh_index"] as? Int == resumeRefresh }
        #expect(resumeIndex != nil, "the resumed callback (refresh \(String(describing: resumeRefresh))) is not in the report")
        let zero = Set(frames.indices.filter { frames[$0]["delta"] as? Double == 0 })
        #expect(
            zero == Set([0, 1] + (resumeIndex.map { [$0] } ?? [])),
            "zero deltas at \(zero.sorted()), resume at \(String(describing: resumeIndex))")
        let period = (json["environment"] as? [String: Any])?["period_exact"] as? Double ?? 0
        expectReportFrames(frames, period: period, zeroDeltas: zero)
        print(
            """
            [drm] console keys: \(frames.count) frames; zero deltas at \(zero.sorted()) (resume at \(String(describing: resumeIndex))); q \
            quit with status 0; terminal restored
            """
        )
    }
}

/// The report's frames: what holds at any speed (as ``expectHardwareFrames``, from the JSON).
/// `presentedAfterVblank`: a frame is presented no earlier than the vblank after its own (false
/// for a driver whose flips complete at once, without vblanks).
func expectReportFrames(
    _ frames: [[String: Any]], period: Double, zeroDeltas allowed: Set<Int>,
    presentedAfterVblank: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
) {
    for i in frames.indices {
        guard let t = frames[i]["timestamp"] as? Double, let target = frames[i]["target_timestamp"] as? Double,
            let duration = frames[i]["duration"] as? Double, let delta = frames[i]["delta"] as? Double
        else {
            Issue.record("frame \(i) incomplete", sourceLocation: sourceLocation)
            continue
        }
        #expect(duration == period, "frame \(i): duration \(duration)", sourceLocation: sourceLocation)
        // Whole periods ahead, or held at the previous target (never back, even when the kernel
        // stamps one vblank with two times).
        let ahead = (target - t) / period, previous = i > 0 ? frames[i - 1]["target_timestamp"] as? Double : nil
        #expect(
            ahead > 0 && (abs(ahead - ahead.rounded()) < 1e-6 || target == previous), "frame \(i): \(ahead) periods ahead",
            sourceLocation: sourceLocation)
        if let previous { #expect(target >= previous, "frame \(i): target went back", sourceLocation: sourceLocation) }
        // A deadline, once learned, rests on what made its target.
        if let deadline = frames[i]["deadline"] as? Double {
            let provenance = frames[i]["deadline_provenance"] as? String
            #expect(
                ["sufficient", "bracketed", "prior"].contains(provenance ?? ""), "frame \(i): \(provenance ?? "none")",
                sourceLocation: sourceLocation)
            // Sufficient and the driver's latch assumed come at or before the target (vkms, its
            // vblank handler late under load, shows a flip queued just after the vblank's
            // timestamp: such a deadline is the target itself).
            if provenance != "bracketed" { #expect(deadline <= target, "frame \(i)", sourceLocation: sourceLocation) }
        }
        if allowed.contains(i) {
            #expect(delta == 0, "frame \(i)", sourceLocation: sourceLocation)
            continue
        }
        guard i >= 1, let p = frames[i - 1]["timestamp"] as? Double,
            let s = frames[i]["sequence"] as? Int, let ps = frames[i - 1]["sequence"] as? Int,
            let missed = frames[i]["missed"] as? Int
        else { continue }
        // Seconds as doubles from whole nanoseconds: equal to well below a nanosecond.
        #expect(delta > 0 && abs(delta - (t - p)) < 1e-9, "frame \(i): delta \(delta), difference \(t - p)", sourceLocation: sourceLocation)
        #expect(missed == s - ps - 1, "frame \(i): sequence \(ps) → \(s), missed \(missed)", sourceLocation: sourceLocation)
        if presentedAfterVblank, let shown = frames[i]["presented"] as? Double {
            // A flip event's time is in whole microseconds.
            #expect(shown - t >= period - 1e-6, "frame \(i) presented before the vblank after its own", sourceLocation: sourceLocation)
        }
    }
}
