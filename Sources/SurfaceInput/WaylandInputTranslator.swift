import DisplayLinkCore

/// Turns a Wayland seat's events (`wl_pointer`, `wl_touch`, `wl_keyboard`, and
/// `zwp_input_timestamps_v1`) into ``InputEvent``s: positions from `wl_fixed`, times on the
/// link's clock, pointer frames, scroll steps, and key repeat. The backend reads the socket,
/// resolves keys with xkbcommon, and hands each event here with the instant it was read.
///
/// Times:
/// - An event with a time takes its device's precise timestamp when one came just before it
///   (`zwp_input_timestamps_v1`), else ``WaylandInputClock`` on its milliseconds.
/// - A time of 0 means "no time": synthetic events carry it (sway's `seat … cursor` commands,
///   wlroots' virtual keyboards). The read time stands in for that event alone
///   (``InputTime/Source/received``), and the compositor's base is not judged by it.
/// - Events without a time of their own take the time of the group they belong to: a pointer
///   `enter` the time of the motion in its frame, a `frame` the time of its group's last event.
///   With nothing timed in the group, or outside groups (keyboard focus, a touch cancel), the
///   read time stands in.
/// - Times never decrease from one event to the next: a time before the previous event's is
///   raised to it. The compositor sends events in the order they happened, so at millisecond
///   resolution the raised time stays within the millisecond the event gives.
///
/// Pointer events of `wl_pointer` version 5 and later are held until their `frame` and delivered
/// together; before version 5 there are no frames, and each event is followed by a ``PointerEvent/frame``
/// of its own.
///
/// Pure value type: no clock reads.
public struct WaylandInputTranslator: Sendable {
    /// The device a precise timestamp belongs to.
    public enum Device: Sendable, Hashable {
        case pointer, keyboard, touch
    }

    /// Whether the pointer sends `frame` events (`wl_pointer` version 5 and later).
    public var pointerHasFrames: Bool
    /// The clock of the compositor's milliseconds.
    public private(set) var clock = WaylandInputClock()
    /// Key repeat, at the compositor's `repeat_info`.
    public private(set) var repeater = KeyRepeater()
    /// The newest time delivered: no event gets an earlier one.
    public private(set) var lastTime: MonotonicInstant?

    private var precise: [Device: InputTime] = [:]
    /// The pointer group waiting for its frame (events, and their times when they have one).
    private var pointerGroup: [(event: PointerEvent, time: InputTime?)] = []
    /// Steps of the next `axis` event per axis (`axis_discrete`), or 120ths (`axis_value120`).
    private var pendingSteps: [ScrollAxis: Int] = [:]
    private var pendingValue120: [ScrollAxis: Int] = [:]
    /// 120ths of a wheel click not yet a whole one, per axis.
    private var value120Remainder: [ScrollAxis: Int] = [:]
    /// The newest timed touch event since the last touch frame.
    private var touchGroupTime: InputTime?
    /// Where the repeating key's time came from (its repeats keep it).
    private var repeatSource = InputTime.Source.milliseconds

    public init(pointerHasFrames: Bool = true) {
        self.pointerHasFrames = pointerHasFrames
        pointerGroup.reserveCapacity(8)
    }

    // MARK: Times

    /// `zwp_input_timestamps_v1.timestamp` for `device`: the time of its next timed event.
    public mutating func preciseTimestamp(_ device: Device, secondsHigh: UInt32, secondsLow: UInt32, nanoseconds: UInt32) {
        precise[device] = WaylandInputClock.precise(secondsHigh: secondsHigh, secondsLow: secondsLow, nanoseconds: nanoseconds)
    }

    /// The time of a timed event of `device` stamped `milliseconds` and read at `receivedAt`,
    /// before the never-decreasing rule.
    private mutating func eventTime(_ device: Device, milliseconds: UInt32, receivedAt: MonotonicInstant) -> InputTime {
        if let exact = precise.removeValue(forKey: device), exact.time <= receivedAt,
            (receivedAt - exact.time) <= WaylandInputClock.maximumAge
        {
            return exact
        }
        if milliseconds == 0 { return InputTime(time: receivedAt, source: .received) }
        return clock.time(milliseconds: milliseconds, receivedAt: receivedAt)
    }

    /// `time`, raised to the previous event's when earlier; becomes the newest.
    private mutating func ordered(_ time: InputTime) -> InputTime {
        var time = time
        if let lastTime, time.time < lastTime { time.time = lastTime }
        lastTime = time.time
        return time
    }

    // MARK: Pointer

    /// `wl_pointer.enter` at surface-local `wl_fixed` coordinates.
    public mutating func pointerEntered(x: Int32, y: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        pointer(.entered(Self.point(x, y)), time: nil, receivedAt: receivedAt, emit)
    }

    /// `wl_pointer.leave`.
    public mutating func pointerLeft(receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        pointer(.left, time: nil, receivedAt: receivedAt, emit)
    }

    /// `wl_pointer.motion` to surface-local `wl_fixed` coordinates.
    public mutating func pointerMoved(
        milliseconds: UInt32, x: Int32, y: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void
    ) {
        let time = eventTime(.pointer, milliseconds: milliseconds, receivedAt: receivedAt)
        pointer(.moved(Self.point(x, y)), time: time, receivedAt: receivedAt, emit)
    }

    /// `wl_pointer.button` (a Linux input event code; `pressed` from its state).
    public mutating func pointerButton(
        milliseconds: UInt32, button: UInt32, pressed: Bool, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void
    ) {
        let time = eventTime(.pointer, milliseconds: milliseconds, receivedAt: receivedAt)
        pointer(.button(PointerButton(rawValue: button), isPressed: pressed), time: time, receivedAt: receivedAt, emit)
    }

    /// `wl_pointer.axis_discrete` (versions 5 to 7): wheel clicks of the next `axis` event.
    public mutating func pointerAxisSteps(_ axis: ScrollAxis, steps: Int32) {
        pendingSteps[axis] = Int(steps)
    }

    /// `wl_pointer.axis_value120` (version 8): 120ths of a wheel click of the next `axis` event.
    public mutating func pointerAxisValue120(_ axis: ScrollAxis, value120: Int32) {
        pendingValue120[axis, default: 0] += Int(value120)
    }

    /// `wl_pointer.axis`: `value` (`wl_fixed`) is the scroll in surface-local points.
    public mutating func pointerAxis(
        milliseconds: UInt32, axis: ScrollAxis, value: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void
    ) {
        let time = eventTime(.pointer, milliseconds: milliseconds, receivedAt: receivedAt)
        var steps = pendingSteps.removeValue(forKey: axis)
        if let value120 = pendingValue120.removeValue(forKey: axis) {
            let total = value120Remainder[axis, default: 0] + value120
            steps = total / 120
            value120Remainder[axis] = total % 120
        }
        let event = PointerEvent.scrolled(axis: axis, points: Self.fixed(value), steps: steps)
        pointer(event, time: time, receivedAt: receivedAt, emit)
    }

    /// `wl_pointer.axis_stop`: no event of its own, but it takes the precise timestamp sent for it.
    public mutating func pointerAxisStopped(milliseconds: UInt32, receivedAt: MonotonicInstant) {
        _ = eventTime(.pointer, milliseconds: milliseconds, receivedAt: receivedAt)
    }

    /// `wl_pointer.frame`: the group so far is delivered, then ``PointerEvent/frame``.
    public mutating func pointerFrame(receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        let timed = pointerGroup.compactMap(\.time)
        var previous = timed.first ?? InputTime(time: receivedAt, source: .received)
        for entry in pointerGroup {
            if let time = entry.time { previous = time }
            emit(InputEvent(time: ordered(previous), kind: .pointer(entry.event)))
        }
        pointerGroup.removeAll(keepingCapacity: true)
        emit(InputEvent(time: ordered(previous), kind: .pointer(.frame)))
    }

    /// The pointer went away (the seat lost it): a group without its frame is dropped.
    public mutating func pointerRemoved() {
        pointerGroup.removeAll(keepingCapacity: true)
        pendingSteps.removeAll()
        pendingValue120.removeAll()
        precise[.pointer] = nil
    }

    private mutating func pointer(_ event: PointerEvent, time: InputTime?, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        if pointerHasFrames {
            pointerGroup.append((event, time))
            return
        }
        let stamped = ordered(time ?? InputTime(time: receivedAt, source: .received))
        emit(InputEvent(time: stamped, kind: .pointer(event)))
        emit(InputEvent(time: stamped, kind: .pointer(.frame)))
    }

    // MARK: Touch

    /// `wl_touch.down` of point `id` at surface-local `wl_fixed` coordinates.
    public mutating func touchDown(
        milliseconds: UInt32, id: Int32, x: Int32, y: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void
    ) {
        touch(.down(id: id, at: Self.point(x, y)), milliseconds: milliseconds, receivedAt: receivedAt, emit)
    }

    /// `wl_touch.motion` of point `id`.
    public mutating func touchMoved(
        milliseconds: UInt32, id: Int32, x: Int32, y: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void
    ) {
        touch(.moved(id: id, to: Self.point(x, y)), milliseconds: milliseconds, receivedAt: receivedAt, emit)
    }

    /// `wl_touch.up` of point `id`.
    public mutating func touchUp(milliseconds: UInt32, id: Int32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        touch(.up(id: id), milliseconds: milliseconds, receivedAt: receivedAt, emit)
    }

    /// `wl_touch.frame`: at its group's last time.
    public mutating func touchFrame(receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        let time = touchGroupTime ?? InputTime(time: receivedAt, source: .received)
        touchGroupTime = nil
        emit(InputEvent(time: ordered(time), kind: .touch(.frame)))
    }

    /// `wl_touch.cancel`.
    public mutating func touchCancelled(receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        touchGroupTime = nil
        emit(InputEvent(time: ordered(InputTime(time: receivedAt, source: .received)), kind: .touch(.cancelled)))
    }

    private mutating func touch(_ event: TouchEvent, milliseconds: UInt32, receivedAt: MonotonicInstant, _ emit: (InputEvent) -> Void) {
        let time = ordered(eventTime(.touch, milliseconds: milliseconds, receivedAt: receivedAt))
        touchGroupTime = time
        emit(InputEvent(time: time, kind: .touch(event)))
    }

    // MARK: Keyboard

    /// `wl_keyboard.enter` or `leave`; leaving stops a repeat.
    public mutating func keyboardFocus(_ focused: Bool, receivedAt: MonotonicInstant) -> InputEvent {
        if !focused { repeater.focusLost() }
        return InputEvent(time: ordered(InputTime(time: receivedAt, source: .received)), kind: .keyboardFocus(focused))
    }

    /// The keyboard went away (the seat lost it): nothing is held, a repeat stops.
    public mutating func keyboardRemoved() {
        repeater.focusLost()
    }

    /// `wl_keyboard.repeat_info`: `rate` a second after `delay` milliseconds (rate 0: none).
    public mutating func repeatInfo(rate: Int32, delayMilliseconds: Int32) {
        repeater.setRepeat(rate: Int(max(0, rate)), delay: Nanoseconds(Int64(max(0, delayMilliseconds)) * 1_000_000))
    }

    /// `wl_keyboard.key` with evdev `code`: its time. A press of a key that `repeats` (as the
    /// keymap says) starts repeating; its release stops it.
    public mutating func key(
        code: UInt32, pressed: Bool, repeats: Bool, milliseconds: UInt32, receivedAt: MonotonicInstant
    ) -> InputTime {
        let time = ordered(eventTime(.keyboard, milliseconds: milliseconds, receivedAt: receivedAt))
        if pressed, repeats {
            repeater.pressed(code, at: time.time)
            repeatSource = time.source
        } else if !pressed {
            repeater.released(code)
        }
        return time
    }

    /// When the next repeat is due (nil: none).
    public var nextRepeat: MonotonicInstant? { repeater.nextRepeat }

    /// Calls `body` with the key and time of each repeat due by `now`, in order: the time the
    /// repeat settings give, from the press.
    public mutating func repeats(until now: MonotonicInstant, _ body: (UInt32, InputTime) -> Void) {
        var due: [(UInt32, MonotonicInstant)] = []
        repeater.repeats(until: now) { due.append(($0, $1)) }
        for (code, time) in due { body(code, ordered(InputTime(time: time, source: repeatSource))) }
    }

    // MARK: Values

    /// A `wl_fixed` (24.8 fixed point) as a `Double`, exactly.
    public static func fixed(_ value: Int32) -> Double { Double(value) / 256 }

    static func point(_ x: Int32, _ y: Int32) -> SurfacePoint { SurfacePoint(x: fixed(x), y: fixed(y)) }
}
