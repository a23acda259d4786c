import ConsoleSeat
import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import Foundation
import Testing

/// What a handler received, and when (read as it was called).
@MainActor
final class InputRecorder {
    var events: [(event: InputEvent, deliveredAt: MonotonicInstant)] = []
    var kinds: [InputEvent.Kind] { events.map(\.event.kind) }

    func record(_ event: InputEvent) { events.append((event, MonotonicInstant.now())) }

    /// What holds at any speed: every time is the kernel's (precise), not before `start` (read
    /// before the first uinput write), not after the event was delivered, and never decreasing.
    func expectTimes(after start: MonotonicInstant, sourceLocation: SourceLocation = #_sourceLocation) {
        var previous = start
        for (event, deliveredAt) in events {
            #expect(event.time.source == .precise, "\(event)", sourceLocation: sourceLocation)
            #expect(event.time.time >= previous, "\(event) before \(previous)", sourceLocation: sourceLocation)
            #expect(event.time.time <= deliveredAt, "\(event) after its delivery at \(deliveredAt)", sourceLocation: sourceLocation)
            previous = event.time.time
        }
    }
}

/// Console input through libinput from uinput devices (inside the VM: root, uinput, no udev; each
/// device writes its own udev database entry). In the VKMS suite, so never at the same time as
/// the seatd test (which would own the devices).
extension VKMSTests {
    /// A session for input devices (direct: no seat manager runs during these tests).
    func inputSession() throws -> SeatSession? {
        guard insideVM else { return nil }
        return try SeatSession.open(options: .init(manager: .automatic))
    }

    @Test("SeatInput: a keyboard's presses and releases, Shift+a as A with its modifier, text, and repeats timed from the press")
    func seatInputKeyboard() async throws {
        guard let session = try inputSession() else { return }
        defer { session.close() }
        let keyboard = try VirtualKeyboard()
        let delay = Nanoseconds(150_000_000), rate = 40
        let input = try SeatInput(
            session: session, width: 640, height: 480, devicePaths: [keyboard.devicePath], repeatRate: rate, repeatDelay: delay,
            xkbLayout: "us")
        defer { input.close() }
        #expect(input.keyboards == [keyboard.devicePath])
        #expect(input.devices == [InputDeviceReport(path: keyboard.devicePath, finding: .used([.keyboard]))])
        let recorder = InputRecorder()
        var keys: [UInt32] = []
        input.onInput = { recorder.record($0) }
        input.onKey = { keys.append($0) }

        let start = MonotonicInstant.now()
        keyboard.tap(VirtualKeyboard.keyA)
        keyboard.press(VirtualKeyboard.keyLeftShift)
        keyboard.tap(VirtualKeyboard.keyA)
        keyboard.release(VirtualKeyboard.keyLeftShift)
        func keyEvents() -> [KeyboardEvent] {
            recorder.kinds.compactMap { if case .key(let key) = $0, key.phase != .repeated { key } else { nil } }
        }
        #expect(await eventually(within: .seconds(60)) { keyEvents().count >= 6 }, "keys: \(recorder.kinds)")
        let a = KeySymbol(rawValue: 0x61), capitalA = KeySymbol(rawValue: 0x41), shift = KeySymbol(rawValue: 0xffe1)
        #expect(
            keyEvents() == [
                KeyboardEvent(phase: .pressed, symbol: a, code: 30, text: "a"),
                KeyboardEvent(phase: .released, symbol: a, code: 30),
                KeyboardEvent(phase: .pressed, symbol: shift, code: 42),
                KeyboardEvent(phase: .pressed, symbol: capitalA, code: 30, modifiers: [.shift], text: "A"),
                KeyboardEvent(phase: .released, symbol: capitalA, code: 30, modifiers: [.shift]),
                KeyboardEvent(phase: .released, symbol: shift, code: 42, modifiers: [.shift])
            ])
        // A repeat only of a key held past the delay (a slow machine may hold a tap that long).
        #expect(keys.filter { $0 != 0x61 && $0 != 0x41 } == [shift.rawValue], "onKey: \(keys)")

        // Held: repeats at press + delay + k/rate, then the release after the last of them.
        let tapped = recorder.events.count
        keyboard.press(VirtualKeyboard.keyB)
        #expect(
            await eventually(within: .seconds(60)) {
                recorder.kinds.dropFirst(tapped).filter { if case .key(let key) = $0 { key.phase == .repeated } else { false } }.count >= 3
            })
        keyboard.release(VirtualKeyboard.keyB)
        #expect(
            await eventually(within: .seconds(60)) {
                recorder.kinds.contains { if case .key(let key) = $0 { key.phase == .released && key.code == 48 } else { false } }
            })
        let held = recorder.events.dropFirst(tapped).compactMap { entry -> (KeyboardEvent, MonotonicInstant)? in
            if case .key(let key) = entry.event.kind { (key, entry.event.time.time) } else { nil }
        }
        let b = KeySymbol(rawValue: 0x62)
        try #require(held.count >= 5, "\(held)")
        #expect(held.first?.0 == KeyboardEvent(phase: .pressed, symbol: b, code: 48, text: "b"))
        #expect(held.last?.0 == KeyboardEvent(phase: .released, symbol: b, code: 48))
        let pressedAt = held[0].1
        for (k, again) in held.dropFirst().dropLast().enumerated() {
            #expect(again.0 == KeyboardEvent(phase: .repeated, symbol: b, code: 48, text: "b"))
            #expect(again.1 == pressedAt + delay + Nanoseconds(Int64(k) * 1_000_000_000 / Int64(rate)), "repeat \(k)")
        }
        #expect(keys.suffix(held.count - 1).allSatisfy { $0 == b.rawValue }, "onKey: press and repeats of b")
        recorder.expectTimes(after: start)
        print("[drm] seat input: keyboard \(keyEvents().count) keys, \(held.count - 2) repeats of b, times precise and in order")
    }

    @Test("SeatInput: a mouse moves a pointer kept on the output, clicks and scrolls")
    func seatInputMouse() async throws {
        guard let session = try inputSession() else { return }
        defer { session.close() }
        let mouse = try VirtualMouse()
        let input = try SeatInput(session: session, width: 640, height: 480, devicePaths: [mouse.device.devicePath])
        defer { input.close() }
        #expect(input.pointers == [mouse.device.devicePath])
        let recorder = InputRecorder()
        input.onInput = { recorder.record($0) }
        let start = MonotonicInstant.now()
        mouse.move(dx: 5000, dy: 5000)
        mouse.move(dx: -5000, dy: 0)
        mouse.move(dx: 0, dy: -10)
        mouse.button(VirtualMouse.buttonLeft, pressed: true)
        mouse.button(VirtualMouse.buttonLeft, pressed: false)
        // libinput holds a button's release back a little (debouncing) while later events pass.
        #expect(await eventually(within: .seconds(60)) { recorder.kinds.contains(.pointer(.button(.left, isPressed: false))) })
        mouse.wheel(-1)
        #expect(await eventually(within: .seconds(60)) { recorder.kinds.count >= 12 }, "\(recorder.kinds)")
        let kinds = recorder.kinds
        try #require(kinds.count == 12, "\(kinds)")
        #expect(
            Array(kinds[0..<4]) == [
                .pointer(.moved(SurfacePoint(x: 639, y: 479))), .pointer(.frame), .pointer(.moved(SurfacePoint(x: 0, y: 479))),
                .pointer(.frame)
            ])
        if case .pointer(.moved(let point)) = kinds[4] {
            #expect(point.x == 0 && point.y < 479, "\(point)")
        } else {
            Issue.record("not a motion: \(kinds[4])")
        }
        #expect(
            Array(kinds[5..<10]) == [
                .pointer(.frame), .pointer(.button(.left, isPressed: true)), .pointer(.frame), .pointer(.button(.left, isPressed: false)),
                .pointer(.frame)
            ])
        if case .pointer(.scrolled(.vertical, let points, let steps)) = kinds[10] {
            #expect(points > 0 && steps == 1, "down by one click: \(points) points, \(String(describing: steps)) steps")
        } else {
            Issue.record("not a vertical scroll: \(kinds[10])")
        }
        #expect(kinds[11] == .pointer(.frame))
        recorder.expectTimes(after: start)
        print("[drm] seat input: mouse \(kinds.count) events (motion clamped to 640×480, left button, one wheel click)")
    }

    @Test("SeatInput: a multitouch touchscreen's fingers by slot, at their places on the output, in frames")
    func seatInputTouch() async throws {
        guard let session = try inputSession() else { return }
        defer { session.close() }
        let screen = try VirtualTouchscreen()
        let input = try SeatInput(session: session, width: 640, height: 480, devicePaths: [screen.device.devicePath])
        defer { input.close() }
        #expect(input.touchscreens == [screen.device.devicePath])
        let recorder = InputRecorder()
        input.onInput = { recorder.record($0) }
        let start = MonotonicInstant.now()
        screen.touch(slot: 0, id: 1, x: 512, y: 256)
        screen.touch(slot: 1, id: 2, x: 256, y: 768)
        screen.touch(slot: 0, x: 768, y: 256)
        screen.lift(slot: 1)
        screen.lift(slot: 0)
        #expect(await eventually(within: .seconds(60)) { recorder.kinds.count >= 10 }, "\(recorder.kinds)")
        // Device units 0...1023 scaled to 640×480 points: x·640/1024, y·480/1024.
        #expect(
            recorder.kinds == [
                .touch(.down(id: 0, at: SurfacePoint(x: 320, y: 120))), .touch(.frame),
                .touch(.down(id: 1, at: SurfacePoint(x: 160, y: 360))), .touch(.frame),
                .touch(.moved(id: 0, to: SurfacePoint(x: 480, y: 120))), .touch(.frame),
                .touch(.up(id: 1)), .touch(.frame),
                .touch(.up(id: 0)), .touch(.frame)
            ])
        recorder.expectTimes(after: start)
        print("[drm] seat input: touchscreen \(recorder.kinds.count) events, two fingers by slot")
    }

    @Test("SeatInput without udev: a device with no database entry is left out and the error names the missing file; with one it works")
    func seatInputWithoutUdevEntry() async throws {
        guard let session = try inputSession() else { return }
        defer { session.close() }
        let keyboard = try VirtualKeyboard()
        let entry = keyboard.device.udevEntry
        let saved = try String(contentsOfFile: entry, encoding: .utf8)
        unlink(entry)
        do {
            _ = try SeatInput(session: session, width: 640, height: 480, devicePaths: [keyboard.devicePath])
            Issue.record("a device without a udev entry was used")
        } catch {
            #expect(error == .noDevice([InputDeviceReport(path: keyboard.devicePath, finding: .noUdevEntry(entry))]))
            #expect(error.description.contains("no udev database entry \(entry) (is systemd-udevd or eudev running?"), "\(error)")
        }
        try "I:1\nE:ID_INPUT_KEY=1\n".write(toFile: entry, atomically: false, encoding: .utf8)
        #expect(throws: SeatInputError.noDevice([InputDeviceReport(path: keyboard.devicePath, finding: .notTaggedAsInput(entry))])) {
            try SeatInput(session: session, width: 640, height: 480, devicePaths: [keyboard.devicePath])
        }
        try saved.write(toFile: entry, atomically: false, encoding: .utf8)
        // Every device: ours is used, the VM's own (no entries) are left out, each saying why.
        let input = try SeatInput(session: session, width: 640, height: 480)
        defer { input.close() }
        #expect(input.devices.contains(InputDeviceReport(path: keyboard.devicePath, finding: .used([.keyboard]))))
        for report in input.devices where report.path != keyboard.devicePath {
            if case .noUdevEntry = report.finding { continue }
            Issue.record("unexpected: \(report)")
        }
        print("[drm] seat input without udev: \(input.devices.map(\.description).joined(separator: "; "))")
    }

    @Test("DisplaySurface on KMS: input from the seat reaches onInput in the output's points, and presses reach onKey")
    func surfaceInput() async throws {
        guard insideVM else { return }
        let mouse = try VirtualMouse()
        let keyboard = try VirtualKeyboard()
        // No terminal on standard input while the surface opens: input comes through libinput.
        let savedInput = dup(0)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        dup2(null, 0)
        close(null)
        let opened = Result { try DisplaySurface(options: .init(backend: .drm, mode: .init(width: 640, height: 480))) }
        dup2(savedInput, 0)
        close(savedInput)
        let surface = try opened.get()
        defer { surface.close() }
        let recorder = InputRecorder()
        var keys: [KeySymbol] = []
        surface.onInput = { recorder.record($0) }
        surface.onKey = { keys.append($0.symbol) }
        let start = MonotonicInstant.now()
        mouse.move(dx: -5000, dy: 5000)
        keyboard.tap(VirtualKeyboard.keyQ)
        #expect(await eventually(within: .seconds(60)) { recorder.kinds.count >= 4 }, "\(recorder.kinds)")
        #expect(
            recorder.kinds == [
                .pointer(.moved(SurfacePoint(x: 0, y: 479))), .pointer(.frame),
                .key(KeyboardEvent(phase: .pressed, symbol: .q, code: 16, text: "q")),
                .key(KeyboardEvent(phase: .released, symbol: .q, code: 16))
            ])
        #expect(keys == [.q])
        recorder.expectTimes(after: start)
    }
}
