import DisplayLinkWaylandTesting
import Foundation
import Testing

/// The TouchKiosk example (Examples/Sources/TouchKiosk, built by `make test` before the VM runs)
/// on the KMS output, driven by uinput devices through its libinput seat, its `--report` lines
/// read back.
extension VKMSTests {
    @Test("TouchKiosk on KMS: a mouse drag moves the list by exactly its distance, a touch fling coasts and rests, keys type, Escape quits")
    func touchKiosk() async throws {
        guard insideVM else { return }
        // The devices first: the kiosk's seat opens those that exist when it starts.
        let mouse = try VirtualMouse()
        let screen = try VirtualTouchscreen()
        let keyboard = try VirtualKeyboard()
        let kiosk = try ExampleProgram("TouchKiosk", arguments: ["--report"], environment: ChildProcess.inheritedEnvironment)
        let ready = try #require(await kiosk.line(from: 0, "ready"), "\(kiosk.transcript)")
        let height = try #require(ready.values["height"]), maxOffset = try #require(ready.values["maxOffset"])

        // The mouse: into the bottom right corner (the pointer stops at the output's edge, exactly
        // there whatever libinput's acceleration), pressed, up to the top edge, held still past
        // the kiosk's 100 ms velocity window (by the kernel's times, on any machine), released:
        // the list moved by exactly height − 1 points, and stays there.
        mouse.move(dx: 5000, dy: 5000)
        mouse.button(VirtualMouse.buttonLeft, pressed: true)
        mouse.move(dx: 0, dy: -5000)
        try await Task.sleep(for: .milliseconds(300))  // shapes the input's times; not a wait for the kiosk
        mouse.button(VirtualMouse.buttonLeft, pressed: false)
        let held = try #require(await kiosk.line(from: ready.index, "release"), "\(kiosk.transcript)")
        #expect(held.values["offset"] == height - 1 && held.values["velocity"] == 0, "\(kiosk.lines)")
        let stayed = try #require(await kiosk.line(from: held.index, "rest"), "\(kiosk.transcript)")
        #expect(stayed.values["offset"] == height - 1, "\(kiosk.lines)")

        // A finger: down, up the screen in three moves, lifted at once (device units 0...1023 over
        // the output's height: 300 units are 300·height/1024 points). At the lift the list moved by
        // exactly that; it coasts on the same way and rests, not past the end.
        var start = kiosk.lines.count
        screen.touch(slot: 0, id: 1, x: 512, y: 900)
        for y: Int32 in [800, 700, 600] { screen.touch(slot: 0, x: 512, y: y) }
        screen.lift(slot: 0)
        let flung = try #require(await kiosk.line(from: start, "release"), "\(kiosk.transcript)")
        let released = height - 1 + 300 * height / 1024
        #expect(flung.values["offset"] == released, "\(kiosk.lines)")
        #expect((flung.values["velocity"] ?? 0) > 0, "\(kiosk.lines)")
        let rest = try #require(await kiosk.line(from: flung.index, "rest"), "\(kiosk.transcript)")
        let restOffset = try #require(rest.values["offset"])
        #expect(restOffset > released && restOffset <= maxOffset, "\(kiosk.lines)")

        // Keys: Shift+A, b, q, Backspace, space, a; then Escape ends it with status 0.
        start = kiosk.lines.count
        keyboard.press(VirtualKeyboard.keyLeftShift)
        keyboard.tap(VirtualKeyboard.keyA)
        keyboard.release(VirtualKeyboard.keyLeftShift)
        for key in [
            VirtualKeyboard.keyB, VirtualKeyboard.keyQ, VirtualKeyboard.keyBackspace, VirtualKeyboard.keySpace, VirtualKeyboard.keyA
        ] {
            keyboard.tap(key)
        }
        #expect(await kiosk.line(from: start, "text \"Ab a\"") != nil, "\(kiosk.transcript)")
        keyboard.tap(VirtualKeyboard.keyEscape)
        #expect(await kiosk.termination() == .exited(0), "\(kiosk.transcript)")
        #expect(kiosk.lines.last == "quit", "\(kiosk.lines)")
        print("[drm] TouchKiosk: \(kiosk.lines.joined(separator: "; "))")
    }
}
