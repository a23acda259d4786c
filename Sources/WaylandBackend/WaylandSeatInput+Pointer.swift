import DisplayLinkCore
import SurfaceInput
internal import CWayland
internal import CWaylandClient

/// `wl_pointer`: each event to the translator with the instant it was read; what it makes is
/// delivered (at the group's `frame`, from version 5).
extension WaylandSeatInput {
    static func axis(_ value: UInt32) -> ScrollAxis {
        value == WL_POINTER_AXIS_HORIZONTAL_SCROLL.rawValue ? .horizontal : .vertical
    }

    nonisolated(unsafe) static let pointerListener = WaylandListeners.make(
        wl_pointer_listener(
            enter: { data, _, _, _, x, y in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.pointerEntered(x: x, y: y, receivedAt: .now(), object.deliver)
                }
            },
            leave: { data, _, _, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.pointerLeft(receivedAt: .now(), object.deliver) }
            },
            motion: { data, _, time, x, y in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.pointerMoved(milliseconds: time, x: x, y: y, receivedAt: .now(), object.deliver)
                }
            },
            button: { data, _, _, time, button, state in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.pointerButton(
                        milliseconds: time, button: button, pressed: state == WL_POINTER_BUTTON_STATE_PRESSED.rawValue,
                        receivedAt: .now(), object.deliver)
                }
            },
            axis: { data, _, time, axis, value in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.pointerAxis(
                        milliseconds: time, axis: WaylandSeatInput.axis(axis), value: value, receivedAt: .now(), object.deliver)
                }
            },
            frame: { data, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.pointerFrame(receivedAt: .now(), object.deliver) }
            },
            axis_source: { _, _, _ in },
            axis_stop: { data, _, time, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.pointerAxisStopped(milliseconds: time, receivedAt: .now()) }
            },
            axis_discrete: { data, _, axis, discrete in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.pointerAxisSteps(WaylandSeatInput.axis(axis), steps: discrete) }
            },
            axis_value120: { data, _, axis, value120 in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.pointerAxisValue120(WaylandSeatInput.axis(axis), value120: value120) }
            }
        ))
}
