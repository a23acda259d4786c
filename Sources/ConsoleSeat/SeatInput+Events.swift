internal import CInput

/// libinput's events read into plain values: keys to `SeatKeyboard` (through
/// ``SeatInput/keyChanged(_:isPressed:microseconds:)``), pointers and touch to `SeatPointerTouch`.
extension SeatInput {
    /// Reads one libinput event; what it makes goes to ``pending``.
    func handle(_ event: OpaquePointer) {
        // libinput numbers its event types by kind (keyboard 3xx, pointer 4xx, touch 5xx) and
        // logs a client bug when asked for the wrong kind of event.
        let type = libinput_event_get_type(event)
        switch type.rawValue {
        case LIBINPUT_EVENT_KEYBOARD_KEY.rawValue:
            guard let key = libinput_event_get_keyboard_event(event) else { return }
            let pressed = libinput_event_keyboard_get_key_state(key) == LIBINPUT_KEY_STATE_PRESSED
            keyChanged(libinput_event_keyboard_get_key(key), isPressed: pressed, microseconds: libinput_event_keyboard_get_time_usec(key))
        case LIBINPUT_EVENT_POINTER_MOTION.rawValue..<LIBINPUT_EVENT_TOUCH_DOWN.rawValue:
            guard let pointer = libinput_event_get_pointer_event(event) else { return }
            handlePointer(type, pointer)
        case LIBINPUT_EVENT_TOUCH_DOWN.rawValue...LIBINPUT_EVENT_TOUCH_FRAME.rawValue:
            guard let touch = libinput_event_get_touch_event(event) else { return }
            handleTouch(type, touch)
        default:
            break  // devices added and removed, gestures, tablets, switches
        }
    }

    private func handlePointer(_ type: libinput_event_type, _ event: OpaquePointer) {
        let time = libinput_event_pointer_get_time_usec(event)
        deliverRepeats(until: SeatPointerTouch.time(microseconds: time).time)
        switch type {
        case LIBINPUT_EVENT_POINTER_MOTION:
            pointerTouch.moved(dx: libinput_event_pointer_get_dx(event), dy: libinput_event_pointer_get_dy(event), microseconds: time) {
                pending.append($0)
            }
        case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
            let x = libinput_event_pointer_get_absolute_x_transformed(event, points(pointerTouch.width))
            let y = libinput_event_pointer_get_absolute_y_transformed(event, points(pointerTouch.height))
            pointerTouch.moved(toX: x, y: y, microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_POINTER_BUTTON:
            let pressed = libinput_event_pointer_get_button_state(event) == LIBINPUT_BUTTON_STATE_PRESSED
            pointerTouch.button(libinput_event_pointer_get_button(event), isPressed: pressed, microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_POINTER_SCROLL_WHEEL, LIBINPUT_EVENT_POINTER_SCROLL_FINGER, LIBINPUT_EVENT_POINTER_SCROLL_CONTINUOUS:
            // libinput 1.19's scroll events; the older LIBINPUT_EVENT_POINTER_AXIS repeats them and is left out.
            let wheel = type == LIBINPUT_EVENT_POINTER_SCROLL_WHEEL
            func axis(_ axis: libinput_pointer_axis) -> (points: Double, v120: Double?)? {
                guard libinput_event_pointer_has_axis(event, axis) != 0 else { return nil }
                return (
                    libinput_event_pointer_get_scroll_value(event, axis),
                    wheel ? libinput_event_pointer_get_scroll_value_v120(event, axis) : nil
                )
            }
            pointerTouch.scrolled(
                vertical: axis(LIBINPUT_POINTER_AXIS_SCROLL_VERTICAL), horizontal: axis(LIBINPUT_POINTER_AXIS_SCROLL_HORIZONTAL),
                microseconds: time
            ) { pending.append($0) }
        default:
            break
        }
    }

    private func handleTouch(_ type: libinput_event_type, _ event: OpaquePointer) {
        let time = libinput_event_touch_get_time_usec(event)
        deliverRepeats(until: SeatPointerTouch.time(microseconds: time).time)
        switch type {
        case LIBINPUT_EVENT_TOUCH_DOWN:
            let x = libinput_event_touch_get_x_transformed(event, points(pointerTouch.width))
            let y = libinput_event_touch_get_y_transformed(event, points(pointerTouch.height))
            pointerTouch.touchDown(slot: libinput_event_touch_get_seat_slot(event), x: x, y: y, microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_TOUCH_MOTION:
            let x = libinput_event_touch_get_x_transformed(event, points(pointerTouch.width))
            let y = libinput_event_touch_get_y_transformed(event, points(pointerTouch.height))
            pointerTouch.touchMoved(slot: libinput_event_touch_get_seat_slot(event), x: x, y: y, microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_TOUCH_UP:
            pointerTouch.touchUp(slot: libinput_event_touch_get_seat_slot(event), microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_TOUCH_CANCEL:
            pointerTouch.touchCancelled(microseconds: time) { pending.append($0) }
        case LIBINPUT_EVENT_TOUCH_FRAME:
            pointerTouch.touchFrame(microseconds: time) { pending.append($0) }
        default:
            break
        }
    }

    /// A size in points as libinput's transform takes it (whole points: the output's are).
    private func points(_ size: Double) -> UInt32 {
        UInt32(max(1, min(Double(UInt32.max), size.rounded())))
    }
}
