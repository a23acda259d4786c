@testable import ConsoleSeat
import DisplayLinkCore
import SurfaceInput
import Testing

/// The pure parts of console input: pointer and touch translation, modifiers, text, udev entries.
@Suite("Console input: libinput's values become InputEvents")
struct SeatInputTranslationTests {
    func collect(_ body: ((InputEvent) -> Void) -> Void) -> [InputEvent.Kind] {
        var kinds: [InputEvent.Kind] = []
        body { kinds.append($0.kind) }
        return kinds
    }

    @Test("libinput's microseconds are precise instants on the monotonic clock")
    func times() {
        #expect(
            SeatPointerTouch.time(microseconds: 1_234_567)
                == InputTime(time: MonotonicInstant(nanoseconds: 1_234_567_000), source: .precise))
        #expect(SeatPointerTouch.time(microseconds: .max).time == MonotonicInstant(nanoseconds: .max))
    }

    @Test("relative motion moves a pointer that starts at the centre and stays on the output; each event ends with a frame")
    func relativeMotion() {
        var pointer = SeatPointerTouch(width: 640, height: 480)
        #expect(pointer.position == SurfacePoint(x: 320, y: 240))
        #expect(
            collect { pointer.moved(dx: 10, dy: -5.5, microseconds: 1, $0) } == [
                .pointer(.moved(SurfacePoint(x: 330, y: 234.5))), .pointer(.frame)
            ])
        #expect(
            collect { pointer.moved(dx: 1e6, dy: 1e6, microseconds: 2, $0) } == [
                .pointer(.moved(SurfacePoint(x: 639, y: 479))), .pointer(.frame)
            ])
        #expect(
            collect { pointer.moved(dx: -1e6, dy: -3, microseconds: 3, $0) } == [
                .pointer(.moved(SurfacePoint(x: 0, y: 476))), .pointer(.frame)
            ])
        #expect(collect { pointer.moved(dx: .nan, dy: 1, microseconds: 4, $0) }.isEmpty)
        #expect(
            collect { pointer.moved(toX: 700, y: 12.25, microseconds: 5, $0) } == [
                .pointer(.moved(SurfacePoint(x: 639, y: 12.25))), .pointer(.frame)
            ])
        pointer.resize(width: 320, height: 200)
        #expect(pointer.position == SurfacePoint(x: 319, y: 12.25))
    }

    @Test("buttons keep their evdev codes and the event's time")
    func buttons() {
        let pointer = SeatPointerTouch(width: 100, height: 100)
        var events: [InputEvent] = []
        pointer.button(0x110, isPressed: true, microseconds: 7) { events.append($0) }
        pointer.button(0x113, isPressed: false, microseconds: 9) { events.append($0) }
        #expect(
            events.map(\.kind) == [
                .pointer(.button(.left, isPressed: true)), .pointer(.frame),
                .pointer(.button(PointerButton(rawValue: 0x113), isPressed: false)), .pointer(.frame)
            ])
        #expect(events.map(\.time.time.nanoseconds) == [7000, 7000, 9000, 9000])
    }

    @Test("wheel 120ths become whole steps, the rest carried in the same direction; fingers count no steps; both axes share a frame")
    func scrolling() {
        var pointer = SeatPointerTouch(width: 100, height: 100)
        func scroll(_ points: Double, _ v120: Double?) -> [InputEvent.Kind] {
            collect { pointer.scrolled(vertical: (points, v120), horizontal: nil, microseconds: 1, $0) }
        }
        #expect(scroll(15, 120) == [.pointer(.scrolled(axis: .vertical, points: 15, steps: 1)), .pointer(.frame)])
        #expect(scroll(7.5, 60) == [.pointer(.scrolled(axis: .vertical, points: 7.5, steps: 0)), .pointer(.frame)])
        #expect(scroll(7.5, 60) == [.pointer(.scrolled(axis: .vertical, points: 7.5, steps: 1)), .pointer(.frame)])
        #expect(scroll(7.5, 90) == [.pointer(.scrolled(axis: .vertical, points: 7.5, steps: 0)), .pointer(.frame)])
        // The other way: the 90 left over do not count against it.
        #expect(scroll(-3.75, -30) == [.pointer(.scrolled(axis: .vertical, points: -3.75, steps: 0)), .pointer(.frame)])
        #expect(scroll(-11.25, -90) == [.pointer(.scrolled(axis: .vertical, points: -11.25, steps: -1)), .pointer(.frame)])
        #expect(scroll(2.5, nil) == [.pointer(.scrolled(axis: .vertical, points: 2.5, steps: nil)), .pointer(.frame)])
        let both = collect { pointer.scrolled(vertical: (1, nil), horizontal: (-2, 240), microseconds: 1, $0) }
        #expect(
            both == [
                .pointer(.scrolled(axis: .vertical, points: 1, steps: nil)), .pointer(.scrolled(axis: .horizontal, points: -2, steps: 2)),
                .pointer(.frame)
            ])
        #expect(collect { pointer.scrolled(vertical: nil, horizontal: nil, microseconds: 1, $0) }.isEmpty)
    }

    @Test("touch points keep their slots and positions on the output; leaving the session cancels the ones down")
    func touch() {
        var touch = SeatPointerTouch(width: 640, height: 480)
        let kinds = collect { emit in
            touch.touchDown(slot: 0, x: 320, y: 120, microseconds: 1, emit)
            touch.touchFrame(microseconds: 1, emit)
            touch.touchDown(slot: 1, x: 800, y: -4, microseconds: 2, emit)
            touch.touchMoved(slot: 0, x: 480, y: 120, microseconds: 3, emit)
            touch.touchUp(slot: 1, microseconds: 4, emit)
            touch.touchFrame(microseconds: 4, emit)
        }
        #expect(
            kinds == [
                .touch(.down(id: 0, at: SurfacePoint(x: 320, y: 120))), .touch(.frame),
                .touch(.down(id: 1, at: SurfacePoint(x: 639, y: 0))),
                .touch(.moved(id: 0, to: SurfacePoint(x: 480, y: 120))), .touch(.up(id: 1)), .touch(.frame)
            ])
        #expect(touch.touchesDown == 1)
        let away = InputTime(time: MonotonicInstant(nanoseconds: 50), source: .received)
        #expect(collect { touch.sessionLeft(at: away, $0) } == [.pointer(.left), .pointer(.frame), .touch(.cancelled)])
        #expect(touch.touchesDown == 0)
        #expect(collect { touch.sessionLeft(at: away, $0) } == [.pointer(.left), .pointer(.frame)])
        #expect(collect { touch.sessionReturned(at: away, $0) } == [.pointer(.entered(SurfacePoint(x: 320, y: 240))), .pointer(.frame)])
    }

    @Test("a keymap's modifier bits map to KeyModifiers by name; missing modifiers never match")
    func modifiers() {
        // The usual order of an xkb keymap's modifiers: Shift Lock Control Mod1 Mod2 Mod3 Mod4 Mod5.
        let order = ["Shift", "Lock", "Control", "Mod1", "Mod2", "Mod3", "Mod4", "Mod5"]
        let map = XKBModifierMap { UInt32(order.firstIndex(of: $0) ?? 0xffff_ffff) }
        #expect(map.modifiers(mask: 0) == [])
        #expect(map.modifiers(mask: 0b0100_0101) == [.shift, .control, .logo])
        #expect(map.modifiers(mask: 0b0001_1010) == [.capsLock, .alt, .numLock])
        #expect(map.modifiers(mask: 0b1010_0000) == [])
        let sparse = XKBModifierMap { $0 == "Shift" ? 31 : 0xffff_ffff }
        #expect(sparse.modifiers(mask: .max) == [.shift])
    }

    @Test("typed text is xkbcommon's without control characters")
    func typedText() {
        #expect(XKBModifierMap.typedText("a") == "a")
        #expect(XKBModifierMap.typedText("Ö") == "Ö")
        #expect(XKBModifierMap.typedText("€") == "€")
        for control in ["\r", "\t", "\u{8}", "\u{1b}", "\u{1}", "\u{7f}", "\u{85}"] { #expect(XKBModifierMap.typedText(control) == "") }
    }

    @Test("udev entries: the path from the device number, and the ID_INPUT tags libinput reads")
    func udevEntries() {
        #expect(UdevEntry.path(device: 13 << 8 | 64) == "/run/udev/data/c13:64")
        // glibc's dev_t (makedev(0x12345, 0x6789a)): minor bits 0-7 and 20-43, major bits 8-19 and 44-63.
        #expect(UdevEntry.path(device: 0x0001_2000_6783_459A) == "/run/udev/data/c74565:424090")
        let entry = UdevEntry(contents: "I:1\nE:ID_INPUT=1\nE:ID_INPUT_TOUCHSCREEN=1\nE:ID_INPUT_KEY=0\nG:seat\n")
        #expect(entry.inputTags == ["ID_INPUT", "ID_INPUT_TOUCHSCREEN"])
        #expect(entry.isInput)
        #expect(!UdevEntry(contents: "I:1\nE:ID_INPUT_KEYBOARD=1\n").isInput)
        #expect(!UdevEntry(contents: "").isInput)
    }

    @Test("findings name what is missing")
    func findings() {
        let missing = InputDeviceReport(path: "/dev/input/event3", finding: .noUdevEntry("/run/udev/data/c13:67"))
        #expect(missing.description.contains("no udev database entry /run/udev/data/c13:67"))
        #expect(missing.description.contains("systemd-udevd or eudev"))
        #expect(
            InputDeviceReport(path: "/dev/input/event1", finding: .used([.keyboard, .touch])).description
                == "/dev/input/event1: keyboard, touchscreen")
        #expect(SeatInputError.noDevice([missing]).description.contains("/dev/input/event3: no udev database entry"))
        #expect(SeatInputError.noDevice([]).description.contains("No input device under /dev/input"))
    }
}

/// The keymap's answers through xkbcommon (the system's xkb-data, layout `us` asked for explicitly).
@Suite("Console input: the keyboard through xkbcommon")
struct SeatKeyboardTests {
    @Test("keysyms, modifiers before the key's own change, text, repeats")
    func keys() throws {
        let keyboard = try SeatKeyboard(layout: "us")
        let a = keyboard.key(30, isPressed: true)
        #expect(a == KeyboardEvent(phase: .pressed, symbol: KeySymbol(rawValue: 0x61), code: 30, modifiers: [], text: "a"))
        #expect(keyboard.key(30, isPressed: false) == KeyboardEvent(phase: .released, symbol: KeySymbol(rawValue: 0x61), code: 30))
        let shift = keyboard.key(42, isPressed: true)
        #expect(shift == KeyboardEvent(phase: .pressed, symbol: KeySymbol(rawValue: 0xffe1), code: 42, modifiers: []))
        #expect(
            keyboard.key(30, isPressed: true)
                == KeyboardEvent(phase: .pressed, symbol: KeySymbol(rawValue: 0x41), code: 30, modifiers: [.shift], text: "A"))
        #expect(
            keyboard.repeated(30)
                == KeyboardEvent(phase: .repeated, symbol: KeySymbol(rawValue: 0x41), code: 30, modifiers: [.shift], text: "A"))
        _ = keyboard.key(30, isPressed: false)
        _ = keyboard.key(42, isPressed: false)
        #expect(keyboard.key(28, isPressed: true) == KeyboardEvent(phase: .pressed, symbol: .returnKey, code: 28, modifiers: [], text: ""))
        #expect(keyboard.repeats(30))
        #expect(!keyboard.repeats(42))
        _ = keyboard.key(29, isPressed: true)  // Control
        #expect(
            keyboard.key(30, isPressed: true)
                == KeyboardEvent(phase: .pressed, symbol: KeySymbol(rawValue: 0x61), code: 30, modifiers: [.control], text: ""))
        keyboard.reset()
        #expect(keyboard.key(30, isPressed: true).modifiers == [])
    }

    @Test("another layout gives non-ASCII text: German ö and Ö")
    func german() throws {
        let keyboard = try SeatKeyboard(layout: "de")
        #expect(keyboard.key(39, isPressed: true) == KeyboardEvent(phase: .pressed, symbol: KeySymbol(rawValue: 0xf6), code: 39, text: "ö"))
        _ = keyboard.key(39, isPressed: false)
        _ = keyboard.key(54, isPressed: true)  // right Shift
        #expect(keyboard.key(39, isPressed: true).text == "Ö")
    }

    @Test("a layout that does not exist is an error naming the option")
    func unknownLayout() {
        #expect(throws: SeatInputError.self) { try SeatKeyboard(layout: "no-such-layout-xx") }
        do {
            _ = try SeatKeyboard(layout: "no-such-layout-xx")
        } catch {
            #expect(error.description.contains("xkbLayout"))
        }
    }
}
