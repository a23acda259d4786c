import ConsoleSeat
import DRMBackend
import DisplayLinkWaylandTesting
import SystemPackage
import DisplayLinkCore
import Foundation
import Synchronization
import Testing

/// Brings VT `number` to the front and waits until it is (through a thread: the switch waits for
/// the seat's client to let go; a safety limit of 120 s).
@MainActor
func activateVT(_ number: Int32) async -> Bool {
    let outcome = Mutex<Bool?>(nil)
    Thread.detachNewThread {
        let tty = open("/dev/tty0", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return outcome.withLock { $0 = false } }
        defer { close(tty) }
        let ok = ioctl(tty, 0x5606 /* VT_ACTIVATE */, number) == 0 && ioctl(tty, 0x5607 /* VT_WAITACTIVE */, number) == 0
        outcome.withLock { $0 = ok }
    }
    _ = await eventually(within: .seconds(60)) { outcome.withLock { $0 } != nil }
    return outcome.withLock { $0 } ?? false
}

@Test("without a seat manager, automatic opening opens directly; asking for a seat then fails with an error that says what to start")
@MainActor
func sessionChoiceWithoutSeatManager() throws {
    guard SeatSessionProbe.noManagerRunning else { return }  // a machine with seatd or logind: nothing to check here
    let session = try SeatSession.open(options: .init(manager: .automatic))
    #expect(session.kind == .direct)
    #expect(session.isActive)
    do {
        _ = try SeatSession.open(options: .init(manager: .seat))
        Issue.record("a seat opened with no seat manager running")
    } catch {
        guard case .noSeatManager(let detail) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(error.description.contains("seatd"), "\(error)")
        #expect(!detail.isEmpty)
    }
}

enum SeatSessionProbe {
    static var noManagerRunning: Bool {
        let env = ProcessInfo.processInfo.environment
        guard env["LIBSEAT_BACKEND"] == nil else { return false }
        let socket = env["SEATD_SOCK"] ?? "/run/seatd.sock"
        let logind = ["/run/systemd/seats", "/run/systemd/system", "/run/dbus/system_bus_socket"].allSatisfy {
            FileManager.default.fileExists(atPath: $0)
        }
        return !FileManager.default.fileExists(atPath: socket) && !logind
    }
}

extension VKMSTests {
    @Test(
        """
        through seatd as user nobody: a VT switch away and back (no callbacks while away, the console's framebuffer shown, a zero delta \
        and the kernel's sequence on return), keys through libinput, the CRTC restored at exit
        """
    )
    func seatSessionAndVTSwitch() async throws {
        try await seatVTSwitch(provenance: .hardwareVBlank, presentedAfterVblank: true, label: "drm")
    }
}

/// The demo as user nobody through seatd: a VT switch away and back (no callbacks while away, the
/// console's framebuffer shown, the mode set again on return, then flips, a zero delta and the
/// sequence going on), keys through libinput, the CRTC restored at exit. `provenance`: the
/// frames' (hardware vblank on vkms; timer on bochs, whose flips complete without waiting for a
/// vblank, so a frame's presentation is not checked against the vblank after its own).
@MainActor
func seatVTSwitch(provenance: TimestampProvenance, presentedAfterVblank: Bool, label: String) async throws {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/seatd") else {
        #expect(!insideVM, "inside the VM the test runs as root and seatd is installed (Scripts/install-deps drm)")
        return
    }
    let demo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("displaylink-demo").path
    // seatd 0.7 listens at /run/seatd.sock (a fresh tmpfs in the VM); while it runs, every
    // program here (this one too) opens devices through it.
    let socket = "/run/seatd.sock"
    try #require(!FileManager.default.fileExists(atPath: socket), "a seatd is already running")
    let report = "/tmp/seat-demo-\(getpid()).json"
    let keyboard = try VirtualKeyboard()
    let seatd = try ChildProcess.start(["/usr/sbin/seatd", "-u", "nobody", "-g", "nogroup", "-l", "debug"])
    var seatdStopped = false
    func stopSeatd() async {
        guard !seatdStopped else { return }
        seatdStopped = true
        seatd.signal(SIGTERM)
        _ = await seatd.ended()
        unlink(socket)
    }
    defer {
        if !seatdStopped {  // left early: the next tests must not find a seat manager
            seatd.kill()
            unlink(socket)
        }
    }
    #expect(
        await eventually(within: .seconds(60)) { FileManager.default.fileExists(atPath: socket) || !seatd.isRunning },
        "seatd did not start: \(seatd.errorLines)")
    try #require(seatd.isRunning, "seatd exited: \(seatd.errorLines)")

    let crtc = try #require(CRTCWatcher())
    let before = crtc.state
    // Standard input /dev/null (no terminal): keys come through libinput.
    let run = try ChildProcess.start([
        "/usr/bin/env", "HOME=/tmp", "XDG_RUNTIME_DIR=/tmp",
        "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
        demo, "bounce", "--backend", "drm", "--mode", "640x480", "--seconds", "600",
        "--report", report, "--log-level", "debug"
    ])
    func flips(_ count: Int) async -> Bool { await seeFlips(count, on: crtc, other: before?.buffer, while: run) }
    #expect(await flips(4), "the demo never flipped: \(run.errorLines.suffix(20))")
    let lines = run.errorLines
    #expect(lines.contains { $0.contains("seat seat0: session active") }, "not through the seat: \(lines.suffix(30))")
    #expect(
        lines.contains { $0.contains("keys: no terminal on standard input; the console's keyboards through libinput") },
        "no libinput keys: \(lines.filter { $0.contains("keys") || $0.contains("input") })")

    // Away: VT 2. The switch completes only after the demo let go.
    let switched = await activateVT(2)
    let active = (try? String(contentsOfFile: "/sys/class/tty/tty0/active", encoding: .utf8)) ?? "?"
    try #require(
        switched, "VT 2 not activated (active: \(active)); seatd: \(seatd.errorLines.suffix(15)); demo: \(run.errorLines.suffix(8))")
    #expect(await run.line(containing: "session disabled: no flips") != nil, "no disable: \(run.errorLines.suffix(20))")
    let away = MonotonicInstant.now()
    // The console (fbcon's framebuffer, as before the demo) is on screen while away.
    #expect(await eventually(within: .seconds(60)) { crtc.state?.buffer == before?.buffer }, "the console did not come back while away")
    let back = MonotonicInstant.now()
    #expect(await activateVT(1), "VT 1 not activated")
    #expect(await run.line(containing: "session enabled: mode") != nil, "no re-modeset: \(run.errorLines.suffix(20))")
    #expect(await flips(3), "no flips after the return")

    // Keys through libinput: space pauses, q quits.
    keyboard.tap(VirtualKeyboard.keySpace)
    #expect(await run.line(containing: "key: paused") != nil, "space did not arrive: \(run.errorLines.suffix(20))")
    keyboard.tap(VirtualKeyboard.keyQ)
    #expect(await run.line(containing: "key: quit") != nil, "q did not arrive: \(run.errorLines.suffix(20))")
    #expect(await run.ended() == 0)
    await stopSeatd()
    #expect(crtc.state?.buffer == before?.buffer, "the CRTC was not restored")

    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
    let kept = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("\(vmDisplay)-demo-seat.json")
    try? FileManager.default.removeItem(at: kept)
    try? FileManager.default.copyItem(at: URL(fileURLWithPath: report), to: kept)
    let frames = json["frames"] as? [[String: Any]] ?? []
    let called = frames.map { $0["callback_at"] as? Double ?? 0 }
    #expect(!called.contains { $0 >= away.seconds && $0 <= back.seconds }, "callbacks while away")
    let resume = called.firstIndex { $0 > back.seconds }
    try #require(resume != nil && resume! > 2, "no frames before and after the time away")
    let r = resume!
    #expect(frames[r]["delta"] as? Double == 0, "the first delta after the return: \(frames[r])")
    #expect(frames[r]["missed"] as? Int == 0)
    #expect(frames[r]["provenance"] as? String == provenance.rawValue)
    let sequenceBefore = frames[r - 1]["sequence"] as? Int ?? 0, sequenceAfter = frames[r]["sequence"] as? Int ?? 0
    #expect(sequenceAfter > sequenceBefore, "sequence \(sequenceBefore) → \(sequenceAfter)")
    let zero = Set(frames.indices.filter { frames[$0]["delta"] as? Double == 0 })
    #expect(zero == [0, 1, r], "zero deltas at \(zero.sorted()), return at \(r)")
    let period = (json["environment"] as? [String: Any])?["period_exact"] as? Double ?? 0
    expectReportFrames(frames, period: period, zeroDeltas: zero, presentedAfterVblank: presentedAfterVblank)
    print(
        "[\(label)] seat: demo as nobody through seatd; VT 2 and back: \(frames.count) frames, none while away, "
            + "return at frame \(r) (delta 0, sequence \(sequenceBefore) → \(sequenceAfter)); space and q through libinput; CRTC restored")
}
