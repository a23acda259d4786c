import DisplayLinkCore
import SurfaceInput
internal import CWayland
internal import CWaylandClient

/// `wl_touch`: each event to the translator with the instant it was read; what it makes is
/// delivered at once.
extension WaylandSeatInput {
    nonisolated(unsafe) static let touchListener = WaylandListeners.make(
        wl_touch_listener(
            down: { data, _, _, time, _, id, x, y in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.touchDown(milliseconds: time, id: id, x: x, y: y, receivedAt: .now(), object.deliver)
                }
            },
            up: { data, _, _, time, id in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.touchUp(milliseconds: time, id: id, receivedAt: .now(), object.deliver) }
            },
            motion: { data, _, time, id, x, y in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.touchMoved(milliseconds: time, id: id, x: x, y: y, receivedAt: .now(), object.deliver)
                }
            },
            frame: { data, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.touchFrame(receivedAt: .now(), object.deliver) }
            },
            cancel: { data, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.translator.touchCancelled(receivedAt: .now(), object.deliver) }
            },
            shape: { _, _, _, _, _ in },
            orientation: { _, _, _, _ in }
        ))
}
