import DRMBackend
import DisplayLinkCore
import Foundation
import GLESRenderer
import Testing

/// True inside `Scripts/vkms-vm` (and on any machine with a KMS device).
let hasKMS = FileManager.default.fileExists(atPath: "/dev/dri/card0")
let insideVM = ProcessInfo.processInfo.environment["DISPLAYLINK_IN_VKMS_VM"] == "1"

@Test("inside the vkms VM, the DRM device exists (the hardware tests below must not skip there)")
func vmHasDevice() {
    if insideVM { #expect(hasKMS, "no /dev/dri/card0 inside the VM: vkms did not load") }
}

/// A link on a DRM display that draws (or not) and records frames and presentations.
@MainActor
final class FlipClient {
    let display: DRMDisplay
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var presented: [UInt64: MonotonicInstant] = [:]
    var draws = true
    /// Simulates a renderer that needs more than the period: the frame is presented only this
    /// long after its vblank.
    var presentAfterVblank: Nanoseconds?
    var painter = ScissorPainter()
    var failure: Error?

    init(_ options: DRMDisplay.Options) throws {
        display = try DRMDisplay(options: options)
    }

    func start() {
        let link = DisplayLink(source: display, target: self) { client, link in client.tick(link) }
        link.presentationHandler = { [weak self] feedback in
            if case .presented(let at, _) = feedback.outcome { self?.presented[feedback.refreshIndex] = at }
        }
        self.link = link
    }

    func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        guard draws || frames.count == 1 else { return }
        do {
            try display.beginFrame()
            painter.begin(width: display.width, height: display.height, background: RGBA(0.1, 0.1, 0.2))
            painter.fill(x: Int32(frames.count * 4 % 600), y: 200, width: 40, height: 40, color: RGBA(1, 0.5, 0))
            if let delay = presentAfterVblank {
                let until = link.frame.timestamp + delay
                while MonotonicInstant.now() < until { usleep(200) }
            }
            try display.present()
        } catch { failure = error }
    }
}

/// A child process started with posix_spawn and reaped with waitpid (Foundation's Process cannot
/// watch children inside the VM: it fails to create its wake-up socket pair).
struct Child {
    let pid: pid_t
    /// - Parameter input: the child's standard input (default /dev/null).
    init(_ arguments: [String], input: Int32? = nil) throws {
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        defer { posix_spawn_file_actions_destroy(&actions) }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard status == 0 else { throw DRMError.kernel(operation: "posix_spawn(\(arguments[0]))", errno: status) }
        self.pid = pid
    }

    /// Waits without blocking the main actor; kills the child after 90 s and returns nil.
    @MainActor
    func wait() async -> Int32? {
        var status: Int32 = 0
        let ended = await waitFor(.seconds(90)) { waitpid(pid, &status, WNOHANG) == pid }
        guard ended else {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            return nil
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

@MainActor
func waitFor(_ limit: Duration = .seconds(120), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock(), deadline = clock.now + limit
    while !condition() {
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

@MainActor
@Suite("DRM/KMS on vkms (inside Scripts/vkms-vm)", .serialized, .enabled(if: hasKMS))
struct VKMSTests {
    /// Frames after the start-up pair (the mode set, and the first vblank after it).
    func steady(_ frames: [DisplayFrame]) -> ArraySlice<DisplayFrame> { frames.dropFirst(2) }

    @Test("mode set and 120 flips: sequences step by one or the misses match the gaps; exact duration; deltas")
    func flips() async throws {
        let before = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@60")))
        #expect(client.display.driverName == "vkms")
        #expect(client.display.connectorName == "Virtual-1")
        // The exact period from the timings, computed here independently (rounded to the ns).
        let m = client.display.mode
        let exact = Nanoseconds((Int64(m.htotal) * Int64(m.vtotal) * 1_000_000 + Int64(m.clock) / 2) / Int64(m.clock))
        client.start()
        #expect(await waitFor { client.frames.count >= 122 })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        let frames = Array(steady(client.frames))
        var intervals: [Int64] = []
        for (a, b) in zip(frames, frames.dropFirst()) {
            let steps = Int64(b.sequence - a.sequence)
            #expect(b.missedFrames == Int(steps) - 1, "seq \(a.sequence)→\(b.sequence)")
            let gap = (b.timestamp - a.timestamp).value
            #expect(abs(gap - steps * exact.value) < 100_000, "gap \(gap) ns over \(steps) vblanks")  // vblank jitter, not a speed limit
            #expect(b.delta == b.timestamp - a.timestamp)
            intervals.append(gap / steps)
            #expect(b.provenance == .hardwareVBlank)
            // A whole number of exact periods ahead: 1 with one frame in flight, 2 with two (after
            // a late frame), more only if most recent frames were late.
            let ahead = (b.targetTimestamp - b.timestamp).value
            #expect(ahead % exact.value == 0 && (1...4).contains(ahead / exact.value),
                    "seq \(a.sequence)→\(b.sequence): target − timestamp = \(ahead) ns")
        }
        #expect(frames.allSatisfy { abs($0.duration.value - exact.value) <= 1_000 })
        #expect(client.display.flipsCompleted >= 119)
        // The frame drawn in a callback is presented at the vblank after it.
        let predicted = frames.compactMap { f in client.presented[f.refreshIndex].map { ($0 - f.targetTimestamp).value } }
        // Flip events carry microseconds: a prediction within 1 µs is exact.
        let exactPredictions = predicted.filter { abs($0) <= 1_000 }.count
        // A frame delayed by outside load on this emulated VM lands whole periods late; the
        // prediction is never off by a fraction of a period.
        #expect(exactPredictions * 20 >= predicted.count * 19)
        for error in predicted where abs(error) > 1_000 {
            let periods = (Double(error) / Double(exact.value)).rounded()
            #expect(periods >= 1 && abs(error - Int64(periods) * exact.value) <= 1_000, "prediction off by \(error) ns")
        }
        intervals.sort()
        let span = frames.last!.sequence - frames.first!.sequence
        print("[drm] vkms \(client.display.mode): exact period \(exact.value) ns, measured median vblank interval "
              + "\(intervals[intervals.count / 2]) ns; \(frames.count) callbacks over \(span + 1) vblanks "
              + "(\(Double(frames.count) / Double(span + 1)) per vblank); prediction within 1 µs for \(exactPredictions)/\(predicted.count)")
        client.display.shutDown()
        let after = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        #expect(before?.buffer == after?.buffer && before?.modeValid == after?.modeValid, "CRTC not restored: \(String(describing: before)) → \(String(describing: after))")
    }

    @Test("a renderer that needs longer than the period: two frames in flight, a new frame at every vblank")
    func slowRendererKeepsTheRate() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@60")))
        let period = client.display.mode.period
        // Presented 3 ms after the next vblank: with one frame in flight every frame would land
        // a refresh late (half the rate).
        client.presentAfterVblank = period + Nanoseconds(3_000_000)
        client.start()
        #expect(await waitFor { client.frames.count >= 70 })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        let frames = Array(client.frames.dropFirst(10))  // the mode set and the switch to two in flight
        let consecutive = zip(frames, frames.dropFirst()).filter { $1.sequence == $0.sequence + 1 }.count
        let twoAhead = frames.filter { $0.targetTimestamp == $0.timestamp + period * 2 }.count
        // Flip events carry microseconds: within 1 µs is exact.
        let onTarget = frames.filter { f in
            client.presented[f.refreshIndex].map { abs(($0 - f.targetTimestamp).value) <= 1_000 } ?? false
        }.count
        print("[drm] slow renderer (presents \(period.value / 1000 + 3000) µs after its vblank): \(consecutive)/\(frames.count - 1) "
              + "callbacks one vblank apart, \(twoAhead)/\(frames.count) targeted two periods ahead, \(onTarget) presented exactly on target")
        // Scheduling noise inside an emulated VM may cost the odd vblank; the rate is not halved.
        #expect(consecutive * 10 >= (frames.count - 1) * 9)
        #expect(twoAhead * 10 >= frames.count * 9)
        #expect(onTarget * 10 >= frames.count * 9)
        client.display.shutDown()
    }

    @Test("a renderer slower than two periods: targetTimestamp learns how late its frames really appear")
    func slowerRendererIsPredicted() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@60")))
        let period = client.display.mode.period
        client.presentAfterVblank = period * 2 + Nanoseconds(5_000_000)
        client.start()
        #expect(await waitFor { client.frames.count >= 80 })
        client.link?.invalidate()
        #expect(client.failure == nil, "\(String(describing: client.failure))")
        let frames = Array(client.frames.dropFirst(40))  // a median over the last 31 frames has learned by then
        let errors = frames.compactMap { f in client.presented[f.refreshIndex].map { abs(($0 - f.targetTimestamp).value) } }
        let onTarget = errors.filter { $0 <= 1_000 }.count
        let ahead = frames.map { Double(($0.targetTimestamp - $0.timestamp).value) / Double(period.value) }.sorted()
        print("[drm] slower renderer (presents \((period.value * 2) / 1000 + 5000) µs after its vblank): targets "
              + "\(ahead[ahead.count / 2]) periods ahead (median), \(onTarget)/\(errors.count) presented exactly on target")
        #expect(onTarget * 10 >= errors.count * 8)
        client.display.shutDown()
    }

    @Test("a custom 144 Hz mode: duration 1/144 s exact, and vkms flips at that rate")
    func custom144() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480@144")))
        #expect(client.display.mode.period.value == 6_944_444)
        client.start()
        #expect(await waitFor { client.frames.count >= 40 })
        client.link?.invalidate()
        let frames = Array(steady(client.frames))
        #expect(frames.allSatisfy { $0.duration.value == 6_944_444 })
        var perVblank: [Int64] = []
        for (a, b) in zip(frames, frames.dropFirst()) { perVblank.append((b.timestamp - a.timestamp).value / Int64(b.sequence - a.sequence)) }
        perVblank.sort()
        let median = perVblank[perVblank.count / 2]
        #expect(abs(median - 6_944_444) < 50_000, "median vblank interval \(median) ns")
        print("[drm] 144 Hz custom mode: measured median vblank interval \(median) ns (exact 6944444)")
        client.display.shutDown()
    }

    @Test("a tick without drawing still ticks: vblank events, no flips")
    func tickWithoutDrawing() async throws {
        let client = try FlipClient(.init(mode: try ModeRequest(parsing: "640x480")))
        client.draws = false
        client.start()
        #expect(await waitFor { client.frames.count >= 30 })
        client.link?.invalidate()
        #expect(client.display.flipsSubmitted == 0)  // only the mode set, no page flips
        #expect(client.display.idleTicks >= 29)
        let frames = Array(steady(client.frames))
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.sequence > a.sequence)
            #expect(b.missedFrames == Int(b.sequence - a.sequence) - 1)
        }
        client.display.shutDown()
    }

    @Test("errors: no such device, a mode the display does not have, and a second master")
    func errors() throws {
        #expect(throws: DRMError.noDevice(path: "/dev/dri/card9")) { try DRMDisplay(options: .init(devicePath: "/dev/dri/card9")) }
        do {
            _ = try DRMDisplay(options: .init(mode: try ModeRequest(parsing: "1234x777")))
            Issue.record("a mode that does not exist was accepted")
        } catch {
            guard case .modeNotFound(_, let available) = error else { Issue.record("wrong error \(error)"); return }
            #expect(available.contains("1024x768"))
        }
        let first = try DRMDisplay(options: .init(mode: try ModeRequest(parsing: "640x480")))
        #expect(throws: DRMError.notMaster(path: "/dev/dri/card0")) { try DRMDisplay(options: .init(devicePath: "/dev/dri/card0")) }
        first.shutDown()
    }

    @Test("the demo: bounce 120 frames at 640x480 with a report; SIGTERM restores the CRTC")
    func demoRuns() async throws {
        let demo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("displaylink-demo").path
        // Beside the build (in the shared checkout), so the report outlives the VM for a person to read.
        let report = URL(fileURLWithPath: demo).deletingLastPathComponent().appendingPathComponent("vkms-demo-bounce.json").path
        let before = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        // This VM is emulated on a shared machine: a burst of outside load slows every frame for a
        // while, and only lowers the figure. The demo must show the rate in one of three runs
        // (each is printed); a demo that cannot keep up fails all three.
        var best = 0.0
        for attempt in 1...3 {
            let run = try Child([demo, "bounce", "--backend", "drm", "--mode", "640x480", "--frames", "120", "--report", report])
            #expect(await run.wait() == 0)
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
            #expect(json["backend"] as? String == "drm")
            let frames = json["frames"] as? [[String: Any]] ?? []
            #expect(frames.count == 120)
            let presented = frames.filter { $0["presented"] is Double }.count
            #expect(presented >= 118)
            let summary = json["summary"] as? [String: Any] ?? [:]
            let perRefresh = summary["presented_per_refresh"] as? Double ?? 0
            let afterStartup = summary["presented_per_refresh_after_startup"] as? Double ?? 0
            let environment = json["environment"] as? [String: Any] ?? [:]
            print("[drm] demo bounce 640x480, run \(attempt) (\(environment["egl_driver"] ?? "?"), buffers kept mapped: "
                  + "\((environment["buffers_kept_mapped"] as? Bool).map { "\($0)" } ?? "?")): \(presented) presented; "
                  + "presented flips per vblank \(afterStartup) after the \(summary["startup_frames"] ?? "?") start-up frames "
                  + "(\(perRefresh) from the first), median interval \(summary["median_interval"] ?? "?") s, "
                  + "p99 \(summary["p99_interval"] ?? "?") s; report: \(report)")
            #expect(DRMDisplay.crtcState(devicePath: "/dev/dri/card0")?.buffer == before?.buffer)
            best = max(best, afterStartup)
            // Start-up (the mode set; under emulation the first runs of new code, which qemu
            // translates on first use) costs the odd refresh; the steady rate is the contract.
            if afterStartup >= 0.98 && perRefresh >= 0.9 { break }
        }
        #expect(best >= 0.98)

        // SIGTERM mid-run: a clean exit, and the CRTC is back.
        let long = try Child([demo, "bounce", "--backend", "drm", "--mode", "640x480", "--seconds", "600"])
        // Terminate once it is really on screen (its framebuffer is on the CRTC).
        let onScreen = await waitFor(.seconds(120)) { DRMDisplay.crtcState(devicePath: "/dev/dri/card0")?.buffer != before?.buffer }
        #expect(onScreen, "the demo never set its mode")
        kill(long.pid, SIGTERM)
        #expect(await long.wait() == 0)
        #expect(DRMDisplay.crtcState(devicePath: "/dev/dri/card0")?.buffer == before?.buffer)
    }

    @Test("console keys from a terminal in raw mode: space pauses and resumes (zero delta), q quits, the terminal is restored")
    func consoleKeys() async throws {
        let demo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("displaylink-demo").path
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

        let crtcBefore = DRMDisplay.crtcState(devicePath: "/dev/dri/card0")
        let run = try Child([demo, "bounce", "--backend", "drm", "--mode", "640x480", "--seconds", "600", "--report", report],
                            input: terminal)
        let onScreen = await waitFor(.seconds(120)) { DRMDisplay.crtcState(devicePath: "/dev/dri/card0")?.buffer != crtcBefore?.buffer }
        #expect(onScreen, "the demo never set its mode")
        var raw = termios()
        tcgetattr(terminal, &raw)
        #expect(raw.c_lflag & tcflag_t(ICANON | ECHO) == 0, "the demo did not put the terminal in raw mode")
        func type(_ key: String) { _ = key.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, key.utf8.count) } }
        try await Task.sleep(for: .milliseconds(500))
        type(" ")   // pause
        try await Task.sleep(for: .milliseconds(600))
        type(" ")   // resume
        try await Task.sleep(for: .milliseconds(500))
        type("q")
        #expect(await run.wait() == 0)
        var after = termios()
        tcgetattr(terminal, &after)
        #expect(after.c_lflag == before.c_lflag, "terminal not restored")
        #expect(DRMDisplay.crtcState(devicePath: "/dev/dri/card0")?.buffer == crtcBefore?.buffer)

        // The report shows the pause: a gap of many refreshes, after which the first delta is 0.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
        let frames = json["frames"] as? [[String: Any]] ?? []
        var resumes: [Int] = []
        for i in frames.indices.dropFirst() {
            guard let t = frames[i]["timestamp"] as? Double, let p = frames[i - 1]["timestamp"] as? Double,
                  let delta = frames[i]["delta"] as? Double else { continue }
            if t - p > 0.2 && delta == 0 { resumes.append(i) }
            if t - p <= 0.2, delta > 0 { #expect(abs(delta - (t - p)) < 1e-6) }
        }
        print("[drm] console keys: \(frames.count) frames; resumed with a zero delta at frame \(resumes); q quit with status 0; terminal restored")
        #expect(resumes.count == 1)
    }
}
