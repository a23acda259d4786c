import DisplayLinkCore
import DisplayLinkWaylandTesting
import Glibc
import Testing
import WaylandBackend

/// The TouchKiosk example (Examples/Sources/TouchKiosk, built by `make test` before this suite) on
/// a private sway, driven by a virtual pointer and wtype's keys, its `--report` lines read back.
@MainActor
@Suite("TouchKiosk on sway: a drag moves the list by exactly its distance, a fling coasts and rests, keys type, Escape quits")
struct TouchKioskSwayTests {
    @Test func dragFlingTypeQuit() async throws {
        let sway = try await HeadlessSway.start(width: 480, height: 640)
        defer { sway.stop() }
        // The seat's devices: a pointer (sway's seat has one only while a device exists) and a
        // keyboard held for the whole test.
        let devices = try WaylandConnection(socket: sway.socketPath)
        let pointer = try #require(WaylandVirtualPointer(connection: devices), "sway offers zwlr_virtual_pointer_manager_v1")
        defer { pointer.destroy() }
        var synced = false
        devices.sync { synced = true }
        #expect(await eventually { synced })
        try await sway.holdVirtualKeyboard()

        var environment = ChildProcess.inheritedEnvironment
        environment.removeValue(forKey: "WAYLAND_SOCKET")
        environment.merge(sway.clientEnvironment) { $1 }
        let kiosk = try ExampleProgram("TouchKiosk", arguments: ["--report"], environment: environment)
        let ready = try #require(await kiosk.line(from: 0, "ready"), "\(kiosk.transcript)")
        try #require(await kiosk.line(from: 0, "focus true") != nil, "\(kiosk.transcript)")
        let maxOffset = try #require(ready.values["maxOffset"])
        #expect(maxOffset > 1000, "\(kiosk.lines)")  // 200 rows of 40 points in a window 640 points tall

        // The pointer: the virtual device's own events (sway's IPC moves no pointer while a button
        // is held), at points of the one output, each stamped now (milliseconds on the monotonic
        // clock, as sway stamps its own).
        let left = UInt32(0x110), extent = (width: UInt32(480), height: UInt32(640))
        func now() -> UInt32 { UInt32(truncatingIfNeeded: MonotonicInstant.now().nanoseconds / 1_000_000) }
        func press(atY y: UInt32) async throws -> Int {
            let start = kiosk.lines.count
            pointer.move(toX: 100, y: y, extent: extent, time: now())
            pointer.button(left, isPressed: true, time: now())
            pointer.send()
            return try #require(await kiosk.line(from: start, "press"), "\(kiosk.transcript)").index
        }

        // A drag up by 150 points, held still before the release (the release then comes more than
        // the kiosk's 100 ms velocity window after the last motion, on any machine): the list is
        // exactly 150 points further on, and stays there.
        var start = try await press(atY: 500)
        pointer.move(toX: 100, y: 350, extent: extent, time: now())
        pointer.send()
        let moved = try #require(await kiosk.line(from: start, "move"), "\(kiosk.transcript)")
        #expect(moved.values["offset"] == 150, "\(kiosk.lines)")
        try await Task.sleep(for: .milliseconds(300))  // shapes the input's times; not a wait for the kiosk
        pointer.button(left, isPressed: false, time: now())
        pointer.send()
        let held = try #require(await kiosk.line(from: moved.index, "release"), "\(kiosk.transcript)")
        #expect(held.values["offset"] == 150 && held.values["velocity"] == 0, "\(kiosk.lines)")
        let stayed = try #require(await kiosk.line(from: held.index, "rest"), "\(kiosk.transcript)")
        #expect(stayed.values["offset"] == 150, "\(kiosk.lines)")

        // A fling: pressed, and once the kiosk has the press (and a millisecond later), moved up
        // twice and released, in one write (the release within the velocity window of the last
        // motion, and after the press by the events' times, whichever times the kiosk goes by). At
        // the release the list is exactly 200 points further on; it coasts on the same way and
        // comes to rest, not past the end.
        start = try await press(atY: 500)
        try await Task.sleep(for: .milliseconds(2))  // shapes the input's times
        let time = now()
        pointer.move(toX: 100, y: 400, extent: extent, time: time)
        pointer.move(toX: 100, y: 300, extent: extent, time: time)
        pointer.button(left, isPressed: false, time: time)
        pointer.send()
        let flung = try #require(await kiosk.line(from: start, "release"), "\(kiosk.transcript)")
        #expect(flung.values["offset"] == 350, "\(kiosk.lines)")
        #expect((flung.values["velocity"] ?? 0) > 0, "\(kiosk.lines)")
        let rest = try #require(await kiosk.line(from: flung.index, "rest"), "\(kiosk.transcript)")
        let restOffset = try #require(rest.values["offset"])
        #expect(restOffset > 350 && restOffset <= maxOffset, "\(kiosk.lines)")

        // Keys: text appended (beyond ASCII too), Backspace deletes, Escape quits with status 0.
        start = kiosk.lines.count
        #expect(try await sway.wtype(["Hej på"]).termination == .exited(0))
        #expect(try await sway.wtype(["-k", "BackSpace", "-k", "BackSpace", "ä"]).termination == .exited(0))
        #expect(await kiosk.line(from: start, "text \"Hej ä\"") != nil, "\(kiosk.lines)")
        #expect(try await sway.wtype(["-k", "Escape"]).termination == .exited(0))
        #expect(await kiosk.termination() == .exited(0), "\(kiosk.transcript)")
        #expect(kiosk.lines.last == "quit", "\(kiosk.lines)")
        print("[sway] TouchKiosk: \(kiosk.lines.joined(separator: "; "))")
    }
}
