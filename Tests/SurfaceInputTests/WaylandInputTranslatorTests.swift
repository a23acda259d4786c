import DisplayLinkCore
import PropertyBased
import SurfaceInput
import Testing

@Suite("Wayland seat events to InputEvents: points, groups, times on the link's clock, repeat")
struct WaylandInputTranslatorTests {
    static let ms: Int64 = 1_000_000

    static func at(_ milliseconds: Int64, plus nanoseconds: Int64 = 0) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: milliseconds * ms + nanoseconds)
    }

    static func time(_ milliseconds: Int64, _ source: InputTime.Source = .milliseconds, plus nanoseconds: Int64 = 0) -> InputTime {
        InputTime(time: at(milliseconds, plus: nanoseconds), source: source)
    }

    @Test("a pointer frame (version 5): held until its frame; enter takes the motion's time, the frame the group's last")
    func pointerFrame() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        // wl_fixed: 256ths. (10, 5) entered, moved to (10.5, 5.25) at 5,000 ms, read 0.4 ms later.
        translator.pointerEntered(x: 2560, y: 1280, receivedAt: Self.at(5_000, plus: 400_000)) { out.append($0) }
        translator.pointerMoved(milliseconds: 5_000, x: 2688, y: 1344, receivedAt: Self.at(5_000, plus: 400_000)) { out.append($0) }
        #expect(out.isEmpty, "nothing before the frame")
        translator.pointerButton(milliseconds: 5_003, button: 0x110, pressed: true, receivedAt: Self.at(5_003, plus: 500_000)) {
            out.append($0)
        }
        translator.pointerFrame(receivedAt: Self.at(5_003, plus: 600_000)) { out.append($0) }
        #expect(
            out == [
                InputEvent(time: Self.time(5_000), kind: .pointer(.entered(SurfacePoint(x: 10, y: 5)))),
                InputEvent(time: Self.time(5_000), kind: .pointer(.moved(SurfacePoint(x: 10.5, y: 5.25)))),
                InputEvent(time: Self.time(5_003), kind: .pointer(.button(.left, isPressed: true))),
                InputEvent(time: Self.time(5_003), kind: .pointer(.frame))
            ])
        // The pointer removed mid-group: the group is dropped.
        out.removeAll()
        translator.pointerMoved(milliseconds: 5_500, x: 0, y: 0, receivedAt: Self.at(5_501)) { out.append($0) }
        translator.pointerRemoved()
        translator.pointerFrame(receivedAt: Self.at(5_502)) { out.append($0) }
        #expect(out == [InputEvent(time: Self.time(5_502, .received), kind: .pointer(.frame))])
        // A group with no time (leave alone): the frame's read time.
        out.removeAll()
        translator.pointerLeft(receivedAt: Self.at(6_000)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(6_001)) { out.append($0) }
        #expect(
            out == [
                InputEvent(time: Self.time(6_001, .received), kind: .pointer(.left)),
                InputEvent(time: Self.time(6_001, .received), kind: .pointer(.frame))
            ])
    }

    @Test("before version 5: each pointer event delivered at once, with a frame of its own")
    func pointerWithoutFrames() {
        var translator = WaylandInputTranslator(pointerHasFrames: false)
        var out: [InputEvent] = []
        translator.pointerEntered(x: 256, y: -256, receivedAt: Self.at(100)) { out.append($0) }
        #expect(
            out == [
                InputEvent(time: Self.time(100, .received), kind: .pointer(.entered(SurfacePoint(x: 1, y: -1)))),
                InputEvent(time: Self.time(100, .received), kind: .pointer(.frame))
            ])
        out.removeAll()
        translator.pointerMoved(milliseconds: 101, x: 128, y: 64, receivedAt: Self.at(102)) { out.append($0) }
        #expect(out.map(\.kind) == [.pointer(.moved(SurfacePoint(x: 0.5, y: 0.25))), .pointer(.frame)])
        #expect(out.map(\.time) == [Self.time(101), Self.time(101)])
    }

    @Test("time 0 (synthetic events): the read time for that event alone; the milliseconds stay trusted")
    func zeroTime() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        translator.pointerButton(milliseconds: 0, button: 0x111, pressed: true, receivedAt: Self.at(7_000, plus: 250)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(7_000, plus: 300)) { out.append($0) }
        translator.pointerMoved(milliseconds: 7_001, x: 0, y: 0, receivedAt: Self.at(7_002)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(7_002)) { out.append($0) }
        #expect(
            out.map(\.time) == [
                Self.time(7_000, .received, plus: 250), Self.time(7_000, .received, plus: 250), Self.time(7_001), Self.time(7_001)
            ])
        #expect(!translator.clock.isOtherBase)
        let key = translator.key(code: 30, pressed: true, repeats: false, milliseconds: 0, receivedAt: Self.at(7_010))
        #expect(key == Self.time(7_010, .received))
    }

    @Test("times never decrease: an event stamped earlier than the one before is raised to it (within its millisecond)")
    func neverDecreasing() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        // A key read at 9,000.7 ms (time 0: the read time), then a motion stamped 9,000 ms.
        _ = translator.key(code: 30, pressed: true, repeats: false, milliseconds: 0, receivedAt: Self.at(9_000, plus: 700_000))
        translator.pointerMoved(milliseconds: 9_000, x: 0, y: 0, receivedAt: Self.at(9_001)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(9_001)) { out.append($0) }
        #expect(out.map(\.time) == [Self.time(9_000, plus: 700_000), Self.time(9_000, plus: 700_000)])
    }

    @Test("precise timestamps: the device's next timed event takes it, the one after its milliseconds again")
    func precise() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        translator.preciseTimestamp(.pointer, secondsHigh: 0, secondsLow: 12, nanoseconds: 345_678_901)
        // A keyboard event does not take the pointer's timestamp.
        let key = translator.key(code: 1, pressed: true, repeats: false, milliseconds: 12_345, receivedAt: Self.at(12_346))
        #expect(key == Self.time(12_345))
        translator.pointerMoved(milliseconds: 12_345, x: 0, y: 0, receivedAt: Self.at(12_346)) { out.append($0) }
        translator.pointerMoved(milliseconds: 12_346, x: 256, y: 0, receivedAt: Self.at(12_347)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(12_347)) { out.append($0) }
        #expect(
            out.map(\.time) == [
                InputTime(time: MonotonicInstant(nanoseconds: 12_345_678_901), source: .precise), Self.time(12_346), Self.time(12_346)
            ])
        // A precise time after the read (another clock): the milliseconds instead.
        out.removeAll()
        translator.preciseTimestamp(.touch, secondsHigh: 0, secondsLow: 20, nanoseconds: 0)
        translator.touchDown(milliseconds: 12_400, id: 0, x: 0, y: 0, receivedAt: Self.at(12_401)) { out.append($0) }
        #expect(out.map(\.time) == [Self.time(12_400)])
    }

    @Test("scrolling: points from wl_fixed, wheel steps from axis_discrete or summed axis_value120, none for smooth scrolling")
    func scrolling() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        translator.pointerAxisSteps(.vertical, steps: 1)
        translator.pointerAxis(milliseconds: 50, axis: .vertical, value: 15 * 256, receivedAt: Self.at(51)) { out.append($0) }
        translator.pointerAxis(milliseconds: 50, axis: .horizontal, value: -384, receivedAt: Self.at(51)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(51)) { out.append($0) }
        // Half a click twice: 0 steps, then 1.
        translator.pointerAxisValue120(.vertical, value120: 60)
        translator.pointerAxis(milliseconds: 52, axis: .vertical, value: 7 * 256, receivedAt: Self.at(53)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(53)) { out.append($0) }
        translator.pointerAxisValue120(.vertical, value120: 60)
        translator.pointerAxis(milliseconds: 54, axis: .vertical, value: 8 * 256, receivedAt: Self.at(55)) { out.append($0) }
        translator.pointerFrame(receivedAt: Self.at(55)) { out.append($0) }
        #expect(
            out.map(\.kind) == [
                .pointer(.scrolled(axis: .vertical, points: 15, steps: 1)),
                .pointer(.scrolled(axis: .horizontal, points: -1.5, steps: nil)),
                .pointer(.frame),
                .pointer(.scrolled(axis: .vertical, points: 7, steps: 0)),
                .pointer(.frame),
                .pointer(.scrolled(axis: .vertical, points: 8, steps: 1)),
                .pointer(.frame)
            ])
    }

    @Test("touch: ids and points delivered at once, the frame at its group's last time, cancel at its read time")
    func touch() {
        var translator = WaylandInputTranslator()
        var out: [InputEvent] = []
        translator.touchDown(milliseconds: 200, id: 0, x: 512, y: 768, receivedAt: Self.at(201)) { out.append($0) }
        translator.touchDown(milliseconds: 200, id: 1, x: 1024, y: 768, receivedAt: Self.at(201)) { out.append($0) }
        translator.touchFrame(receivedAt: Self.at(201)) { out.append($0) }
        translator.touchMoved(milliseconds: 210, id: 1, x: 1152, y: 768, receivedAt: Self.at(211)) { out.append($0) }
        translator.touchUp(milliseconds: 212, id: 0, receivedAt: Self.at(213)) { out.append($0) }
        translator.touchFrame(receivedAt: Self.at(214)) { out.append($0) }
        translator.touchCancelled(receivedAt: Self.at(220)) { out.append($0) }
        translator.touchFrame(receivedAt: Self.at(221)) { out.append($0) }
        #expect(
            out == [
                InputEvent(time: Self.time(200), kind: .touch(.down(id: 0, at: SurfacePoint(x: 2, y: 3)))),
                InputEvent(time: Self.time(200), kind: .touch(.down(id: 1, at: SurfacePoint(x: 4, y: 3)))),
                InputEvent(time: Self.time(200), kind: .touch(.frame)),
                InputEvent(time: Self.time(210), kind: .touch(.moved(id: 1, to: SurfacePoint(x: 4.5, y: 3)))),
                InputEvent(time: Self.time(212), kind: .touch(.up(id: 0))),
                InputEvent(time: Self.time(212), kind: .touch(.frame)),
                InputEvent(time: Self.time(220, .received), kind: .touch(.cancelled)),
                InputEvent(time: Self.time(221, .received), kind: .touch(.frame))
            ])
    }

    @Test(
        "keys: focus at its read time; a repeating key repeats at the compositor's settings from its press; release, focus and the keyboard's removal stop it"
    )
    func keysAndRepeat() {
        var translator = WaylandInputTranslator()
        translator.repeatInfo(rate: 20, delayMilliseconds: 300)
        #expect(
            translator.keyboardFocus(true, receivedAt: Self.at(999))
                == InputEvent(time: Self.time(999, .received), kind: .keyboardFocus(true)))
        // A modifier (not repeating in the keymap) does not repeat.
        #expect(
            translator.key(code: 42, pressed: true, repeats: false, milliseconds: 1_000, receivedAt: Self.at(1_001)) == Self.time(1_000))
        #expect(translator.nextRepeat == nil)
        _ = translator.key(code: 30, pressed: true, repeats: true, milliseconds: 1_010, receivedAt: Self.at(1_011))
        #expect(translator.nextRepeat == Self.at(1_310))
        var repeats: [(UInt32, InputTime)] = []
        translator.repeats(until: Self.at(1_409)) { repeats.append(($0, $1)) }
        // 300 ms after the press, then every 50 ms.
        #expect(repeats.map(\.0) == [30, 30])
        #expect(repeats.map(\.1) == [Self.time(1_310), Self.time(1_360)])
        // Releasing the modifier changes nothing; releasing the key stops it.
        _ = translator.key(code: 42, pressed: false, repeats: false, milliseconds: 1_400, receivedAt: Self.at(1_401))
        #expect(translator.nextRepeat == Self.at(1_410))
        _ = translator.key(code: 30, pressed: false, repeats: false, milliseconds: 1_405, receivedAt: Self.at(1_406))
        #expect(translator.nextRepeat == nil)
        _ = translator.key(code: 31, pressed: true, repeats: true, milliseconds: 1_500, receivedAt: Self.at(1_501))
        #expect(translator.keyboardFocus(false, receivedAt: Self.at(1_502)).kind == .keyboardFocus(false))
        #expect(translator.nextRepeat == nil)
        _ = translator.key(code: 31, pressed: true, repeats: true, milliseconds: 1_600, receivedAt: Self.at(1_601))
        translator.keyboardRemoved()
        #expect(translator.nextRepeat == nil)
        // Rate 0: keys do not repeat.
        translator.repeatInfo(rate: 0, delayMilliseconds: 300)
        _ = translator.key(code: 32, pressed: true, repeats: true, milliseconds: 1_700, receivedAt: Self.at(1_701))
        #expect(translator.nextRepeat == nil)
    }

    @Test("any mix of events read in order: delivered times never decrease and are never after their read")
    func orderProperty() async {
        await propertyCheck(count: 300, input: Gen.int64(in: 0...Int64.max)) { seed in
            var random = SeededRandom(seed: seed)
            func next(_ bound: Int64) -> Int64 { random.next(bound) }
            var translator = WaylandInputTranslator()
            translator.repeatInfo(rate: 30, delayMilliseconds: 100)
            var read = MonotonicInstant(nanoseconds: 1_000_000_000_000)
            var delivered: [(InputTime, MonotonicInstant)] = []
            for _ in 0..<60 {
                read = read + Nanoseconds(next(5_000_000))
                // Stamped up to 3 ms before the read, or 0 now and then.
                let stamp = next(8) == 0 ? 0 : UInt32(truncatingIfNeeded: (read.nanoseconds - next(3_000_000)) / 1_000_000)
                let now = read
                let emit: (InputEvent) -> Void = { delivered.append(($0.time, now)) }
                switch next(9) {
                case 0: translator.pointerEntered(x: 0, y: 0, receivedAt: read, emit)
                case 1: translator.pointerMoved(milliseconds: stamp, x: 1, y: 1, receivedAt: read, emit)
                case 2: translator.pointerButton(milliseconds: stamp, button: 0x110, pressed: true, receivedAt: read, emit)
                case 3: translator.pointerFrame(receivedAt: read, emit)
                case 4: translator.touchDown(milliseconds: stamp, id: 0, x: 0, y: 0, receivedAt: read, emit)
                case 5: translator.touchFrame(receivedAt: read, emit)
                case 6:
                    let time = translator.key(code: 30, pressed: next(2) == 0, repeats: true, milliseconds: stamp, receivedAt: read)
                    emit(InputEvent(time: time, kind: .keyboardFocus(true)))
                case 7: translator.repeats(until: read) { _, time in emit(InputEvent(time: time, kind: .keyboardFocus(true))) }
                default: emit(translator.keyboardFocus(next(2) == 0, receivedAt: read))
                }
            }
            for (index, (time, readAt)) in delivered.enumerated() {
                #expect(time.time <= readAt)
                if index > 0 { #expect(delivered[index - 1].0.time <= time.time) }
            }
        }
    }
}
