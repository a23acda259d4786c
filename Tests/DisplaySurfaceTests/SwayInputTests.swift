import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import Glibc
import SurfaceInput
import Testing
import WaylandBackend

/// What a surface delivered through `onInput`, with the instant each event was delivered.
@MainActor
final class InputLog {
    var entries: [(event: InputEvent, deliveredAt: MonotonicInstant)] = []
    var keys: [KeyEvent] = []

    init(_ surface: DisplaySurface) {
        surface.onInput = { [weak self] event in self?.entries.append((event, .now())) }
        surface.onKey = { [weak self] key in self?.keys.append(key) }
    }

    /// Waits (a hang guard only) for an event from `start` on that `matches`; returns its index.
    func next(from start: Int, _ matches: (InputEvent.Kind) -> Bool) async -> Int? {
        _ = await eventually { entries[start...].contains { matches($0.event.kind) } }
        return entries[start...].firstIndex { matches($0.event.kind) }
    }

    /// The event at `index` happened after `before` (read just before the command that caused it
    /// started; a time in milliseconds is the millisecond it happened in) and not after it was
    /// delivered.
    func expectCaused(at index: Int, after before: MonotonicInstant, sourceLocation: SourceLocation = #_sourceLocation) {
        let (event, deliveredAt) = entries[index]
        let slack = event.time.source == .milliseconds ? Nanoseconds(999_999) : .zero
        #expect(event.time.time + slack >= before, "\(event) before its command (\(before))", sourceLocation: sourceLocation)
        #expect(event.time.time <= deliveredAt, "\(event) after its delivery (\(deliveredAt))", sourceLocation: sourceLocation)
    }
}

@MainActor
@Suite("input on a real compositor: sway's cursor (IPC) and wtype's keys", .serialized)
struct SwayInputTests {
    @Test(
        """
        pointer: enter before motion, positions in points, buttons pressed then released, wheel steps, frames after each group; \
        keys: focus, keysyms, UTF-8 text, Control, release after press, repeat at the compositor's settings; \
        every time on the link's clock, never decreasing
        """)
    func pointerAndKeys() async throws {
        let sway = try await HeadlessSway.start(width: 320, height: 240, repeatDelay: 200, repeatRate: 20)
        defer { sway.stop() }
        // The seat's devices: a virtual pointer (sway's seat has a pointer only while one exists)
        // and a keyboard held for the whole test.
        let devices = try WaylandConnection(socket: sway.socketPath)
        let pointer = try #require(WaylandVirtualPointer(connection: devices), "sway offers zwlr_virtual_pointer_manager_v1")
        defer { pointer.destroy() }
        var synced = false
        devices.sync { synced = true }
        #expect(await eventually { synced })
        try await sway.holdVirtualKeyboard()

        let opened = MonotonicInstant.now()
        let surface = try DisplaySurface(
            options: .init(title: "input", width: 320, height: 240, backend: .wayland, waylandSocket: sway.socketPath))
        defer { surface.close() }
        let log = InputLog(surface)
        let client = SurfaceClient(surface)
        client.start()
        // Mapped (the only window: the whole output, at 0,0) and focused.
        let focus = try #require(await log.next(from: 0) { $0 == .keyboardFocus(true) })
        log.expectCaused(at: focus, after: opened)
        #expect(await eventually { client.frames.count >= 2 && surface.width == 320 })

        // Absolute, then relative: (80, 60), then 16 right and 4 up. Exact in points (wl_fixed).
        var start = log.entries.count
        var before = MonotonicInstant.now()
        #expect(try await sway.swaymsg("seat", "seat0", "cursor", "set", "80", "60").termination == .exited(0))
        let at80 = try #require(await log.next(from: start) { $0 == .pointer(.moved(SurfacePoint(x: 80, y: 60))) })
        log.expectCaused(at: at80, after: before)
        start = log.entries.count
        before = MonotonicInstant.now()
        #expect(try await sway.swaymsg("seat", "seat0", "cursor", "move", "16", "-4").termination == .exited(0))
        let moved = try #require(await log.next(from: start) { $0 == .pointer(.moved(SurfacePoint(x: 96, y: 56))) })
        log.expectCaused(at: moved, after: before)

        // A click, and a wheel click up (sway: 15 points, one step, per `button4`).
        for (command, expected) in [
            ("press", PointerEvent.button(.left, isPressed: true)), ("release", .button(.left, isPressed: false)),
            ("press", .scrolled(axis: .vertical, points: -15, steps: -1))
        ] {
            start = log.entries.count
            before = MonotonicInstant.now()
            let button = expected == .scrolled(axis: .vertical, points: -15, steps: -1) ? "button4" : "button1"
            #expect(try await sway.swaymsg("seat", "seat0", "cursor", command, button).termination == .exited(0))
            let index = try #require(await log.next(from: start) { $0 == .pointer(expected) }, "\(expected)")
            log.expectCaused(at: index, after: before)
            let frame = try #require(await log.next(from: index) { $0 == .pointer(.frame) }, "a frame after \(expected)")
            #expect(frame > index)
        }

        // Text beyond ASCII: a, é, € (each a key of wtype's keymap, pressed and released).
        start = log.entries.count
        before = MonotonicInstant.now()
        #expect(try await sway.wtype(["aé€"]).termination == .exited(0))
        _ = await log.next(from: start) {
            if case .key(let key) = $0 { key.symbol.rawValue == 0x20ac && key.phase == .released } else { false }
        }
        let typed = log.entries[start...].compactMap { entry -> KeyboardEvent? in
            if case .key(let key) = entry.event.kind { key } else { nil }
        }
        #expect(typed.map(\.phase) == [.pressed, .released, .pressed, .released, .pressed, .released])
        #expect(typed.map(\.symbol.rawValue) == [0x61, 0x61, 0xe9, 0xe9, 0x20ac, 0x20ac])
        #expect(typed.map(\.text) == ["a", "", "é", "", "€", ""])
        #expect(typed.allSatisfy { $0.modifiers.isEmpty })
        #expect(typed[0].code == typed[1].code && typed[2].code == typed[3].code && typed[0].code != typed[2].code)
        for index in start..<log.entries.count { log.expectCaused(at: index, after: before) }

        // Control held: the key's modifiers say it, and xkbcommon's text is the control character.
        start = log.entries.count
        before = MonotonicInstant.now()
        #expect(try await sway.wtype(["-M", "ctrl", "c", "-m", "ctrl"]).termination == .exited(0))
        let control = try #require(
            await log.next(from: start) {
                if case .key(let key) = $0 { key.phase == .released && key.symbol.rawValue == 0x63 } else { false }
            })
        let controlKeys = log.entries[start...control].compactMap { entry -> KeyboardEvent? in
            if case .key(let key) = entry.event.kind { key } else { nil }
        }
        #expect(controlKeys.map(\.phase) == [.pressed, .released])
        #expect(controlKeys.first?.modifiers == [.control])
        #expect(controlKeys.first?.text == "\u{03}")

        // A key held (by a wtype that waits): repeats 200 ms after the press, then every 50 ms,
        // until it is released (sway releases it when the wtype's keyboard goes).
        start = log.entries.count
        before = MonotonicInstant.now()
        let holder = try sway.startWtype(["-P", "x", "-s", "600000"])
        let press = try #require(await log.next(from: start) { if case .key(let key) = $0 { key.phase == .pressed } else { false } })
        log.expectCaused(at: press, after: before)
        let repeated = { (kind: InputEvent.Kind) in if case .key(let key) = kind { key.phase == .repeated } else { false } }
        #expect(await eventually { log.entries[press...].filter { repeated($0.event.kind) }.count >= 2 })
        before = MonotonicInstant.now()
        holder.stop()
        let release = try #require(await log.next(from: press) { if case .key(let key) = $0 { key.phase == .released } else { false } })
        log.expectCaused(at: release, after: before)
        let repeats = log.entries[press..<release].filter { repeated($0.event.kind) }
        let pressTime = log.entries[press].event.time.time
        for (k, entry) in repeats.enumerated() {
            #expect(entry.event.time.time == pressTime + Nanoseconds(200_000_000 + Int64(k) * 50_000_000), "repeat \(k)")
            #expect(entry.event.time.time <= entry.deliveredAt)
            if case .key(let key) = entry.event.kind { #expect(key.symbol.rawValue == 0x78 && key.text == "x") }
        }
        #expect(repeats.count >= 2)

        // The whole run: pointer events between an enter and a frame, times never decreasing and
        // not before the surface opened; onKey saw every press and repeat.
        let kinds = log.entries.map(\.event.kind)
        let firstPointer = try #require(kinds.firstIndex { if case .pointer = $0 { true } else { false } })
        if case .pointer(.entered) = kinds[firstPointer] {} else { Issue.record("the first pointer event is \(kinds[firstPointer])") }
        for index in log.entries.indices {
            log.expectCaused(at: index, after: opened)
            if index > 0 { #expect(log.entries[index - 1].event.time.time <= log.entries[index].event.time.time) }
        }
        let pressesAndRepeats = kinds.compactMap { kind -> KeySymbol? in
            if case .key(let key) = kind, key.phase != .released { key.symbol } else { nil }
        }
        #expect(log.keys.map(\.symbol) == pressesAndRepeats)
        #expect(client.failure == nil)

        // Closing the surface from a key's handler (inside the connection's dispatch): closed at
        // once, the compositor takes no offence.
        surface.onKey = { key in if key.symbol == .escape { surface.close() } }
        #expect(try await sway.wtype(["-k", "Escape"]).termination == .exited(0))
        #expect(await eventually { surface.isClosed })
        #expect(sway.isRunning)
    }
}
