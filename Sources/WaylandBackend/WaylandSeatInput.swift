import DisplayLinkCore
import Dispatch
import SurfaceInput
internal import CWayland
internal import CWaylandClient
internal import CXKBCommon

// This file holds the seat, its devices' lifetimes and the delivery of events. Each device's
// listener is in its own extension: +Pointer, +Touch, +Keyboard (keymap, keys, repeat).
// Listener data is this object, unretained: every proxy is destroyed before it goes.

/// The input of the compositor's first seat (`wl_seat`): its pointer, keyboard and touch
/// devices, as `InputEvent`s (module `SurfaceInput`) through one callback, ``onInput``.
///
/// Devices come and go with the seat's capabilities. Event times are on the link's clock
/// (`WaylandInputTranslator` says how): precise when the compositor offers
/// `zwp_input_timestamps_manager_v1` (one subscription per device), else its milliseconds.
/// Keys are resolved with xkbcommon from the compositor's keymap; held keys repeat at its
/// `repeat_info`, from a timer on the main queue, with phase `KeyboardEvent.Phase.repeated`.
@MainActor
public final class WaylandSeatInput {
    /// Called on the main actor with each input event on the connection's surfaces, in order.
    public var onInput: ((InputEvent) -> Void)?
    /// The version of `wl_seat` bound (devices get the same).
    public let version: UInt32
    /// The seat's devices now.
    public private(set) var hasPointer = false
    public private(set) var hasKeyboard = false
    public private(set) var hasTouch = false
    /// Whether each device's events carry precise timestamps (`zwp_input_timestamps_v1`).
    public var hasPreciseTimestamps: Bool { timestampsManager != nil }

    let seat: OpaquePointer
    /// The connection's `zwp_input_timestamps_manager_v1` (not owned), when offered.
    let timestampsManager: OpaquePointer?
    var translator = WaylandInputTranslator()

    var pointer: OpaquePointer?
    var pointerTimestamps: OpaquePointer?
    var keyboard: OpaquePointer?
    var keyboardTimestamps: OpaquePointer?
    var touch: OpaquePointer?
    var touchTimestamps: OpaquePointer?

    // Keyboard (see +Keyboard)
    let xkbContext: OpaquePointer?
    var keymap: OpaquePointer?
    var xkbState: OpaquePointer?
    var repeatTimer: MainQueueTimer?
    private(set) var isDestroyed = false

    init(seat: OpaquePointer, version: UInt32, timestampsManager: OpaquePointer?) {
        self.seat = seat
        self.version = version
        self.timestampsManager = timestampsManager
        xkbContext = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
        wl_seat_add_listener(seat, WaylandSeatInput.seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Releases the devices (each device's timestamps first), the seat, and the keyboard's xkb
    /// objects, in that order; stops the repeat timer. Before the connection disconnects.
    func destroy() {
        guard !isDestroyed else { return }
        isDestroyed = true
        onInput = nil
        repeatTimer?.cancel()
        repeatTimer = nil
        releasePointer()
        releaseKeyboard(stopsRepeat: false)  // perhaps from a listener, inside the translator's call
        releaseTouch()
        if version >= 5 { wl_seat_release(seat) } else { wl_seat_destroy(seat) }
        if let xkbState { xkb_state_unref(xkbState) }
        if let keymap { xkb_keymap_unref(keymap) }
        if let xkbContext { xkb_context_unref(xkbContext) }
        xkbState = nil
        keymap = nil
    }

    /// Hands `event` to ``onInput`` (nothing once destroyed).
    func deliver(_ event: InputEvent) {
        guard !isDestroyed else { return }
        onInput?(event)
    }

    /// This object as listener data (unretained: the connection owns it, and destroys every
    /// proxy it listens on before releasing it).
    var listenerData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandSeatInput {
        Unmanaged<WaylandSeatInput>.fromOpaque(data!).takeUnretainedValue()
    }

    // MARK: Capabilities

    private func capabilities(_ caps: UInt32) {
        guard !isDestroyed else { return }
        hasPointer = caps & WL_SEAT_CAPABILITY_POINTER.rawValue != 0
        hasKeyboard = caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
        hasTouch = caps & WL_SEAT_CAPABILITY_TOUCH.rawValue != 0
        if hasPointer, pointer == nil {
            bindPointer()
        } else if !hasPointer, pointer != nil {
            releasePointer()
            translator.pointerRemoved()
        }
        if hasKeyboard, keyboard == nil { bindKeyboard() } else if !hasKeyboard { releaseKeyboard(stopsRepeat: true) }
        if hasTouch, touch == nil { bindTouch() } else if !hasTouch { releaseTouch() }
    }

    private func bindPointer() {
        bindDevice(
            &pointer, timestamps: &pointerTimestamps, get: wl_seat_get_pointer,
            addListener: { wl_pointer_add_listener($0, WaylandSeatInput.pointerListener, $1) },
            getTimestamps: zwp_input_timestamps_manager_v1_get_pointer_timestamps, WaylandSeatInput.pointerTimestampsListener)
        if let pointer { translator.pointerHasFrames = wl_pointer_get_version(pointer) >= 5 }
    }

    private func bindKeyboard() {
        bindDevice(
            &keyboard, timestamps: &keyboardTimestamps, get: wl_seat_get_keyboard,
            addListener: { wl_keyboard_add_listener($0, WaylandSeatInput.keyboardListener, $1) },
            getTimestamps: zwp_input_timestamps_manager_v1_get_keyboard_timestamps, WaylandSeatInput.keyboardTimestampsListener)
    }

    private func bindTouch() {
        bindDevice(
            &touch, timestamps: &touchTimestamps, get: wl_seat_get_touch,
            addListener: { wl_touch_add_listener($0, WaylandSeatInput.touchListener, $1) },
            getTimestamps: zwp_input_timestamps_manager_v1_get_touch_timestamps, WaylandSeatInput.touchTimestampsListener)
    }

    /// Gets a device's proxy from the seat into `proxy` and listens on it; with the timestamps
    /// manager, also subscribes to its precise timestamps (into `timestamps`). The devices' C calls
    /// differ only in their types, so each device passes its own. Nothing when the seat gives no proxy.
    private func bindDevice(
        _ proxy: inout OpaquePointer?, timestamps: inout OpaquePointer?,
        get: (OpaquePointer) -> OpaquePointer?,
        addListener: (OpaquePointer, UnsafeMutableRawPointer) -> Void,
        getTimestamps: (OpaquePointer, OpaquePointer) -> OpaquePointer?,
        _ timestampsListener: UnsafeMutablePointer<zwp_input_timestamps_v1_listener>
    ) {
        guard let device = get(seat) else { return }
        proxy = device
        addListener(device, listenerData)
        guard let timestampsManager, let stamps = getTimestamps(timestampsManager, device) else { return }
        timestamps = stamps
        zwp_input_timestamps_v1_add_listener(stamps, timestampsListener, listenerData)
    }

    private func releasePointer() {
        releaseDevice(
            &pointer, timestamps: &pointerTimestamps, version: wl_pointer_get_version, release: wl_pointer_release,
            destroy: wl_pointer_destroy)
    }

    private func releaseKeyboard(stopsRepeat: Bool) {
        guard
            releaseDevice(
                &keyboard, timestamps: &keyboardTimestamps, version: wl_keyboard_get_version, release: wl_keyboard_release,
                destroy: wl_keyboard_destroy),
            stopsRepeat
        else { return }
        translator.keyboardRemoved()
        scheduleRepeat()
    }

    private func releaseTouch() {
        releaseDevice(
            &touch, timestamps: &touchTimestamps, version: wl_touch_get_version, release: wl_touch_release,
            destroy: wl_touch_destroy)
    }

    /// Destroys a device's timestamps subscription, then releases the device (`release` from
    /// version 3, which tells the compositor; `destroy` before it). Returns whether there was a
    /// device to release.
    @discardableResult
    private func releaseDevice(
        _ proxy: inout OpaquePointer?, timestamps: inout OpaquePointer?,
        version: (OpaquePointer) -> UInt32, release: (OpaquePointer) -> Void, destroy: (OpaquePointer) -> Void
    ) -> Bool {
        if let stamps = timestamps { zwp_input_timestamps_v1_destroy(stamps) }
        timestamps = nil
        guard let device = proxy else { return false }
        if version(device) >= 3 { release(device) } else { destroy(device) }
        proxy = nil
        return true
    }

    // MARK: Listeners

    private nonisolated(unsafe) static let seatListener = WaylandListeners.make(
        wl_seat_listener(
            capabilities: { data, _, caps in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.capabilities(caps) }
            },
            name: { _, _, _ in }
        ))

    private nonisolated static func timestampsListener(_ device: WaylandInputTranslator.Device) -> UnsafeMutablePointer<
        zwp_input_timestamps_v1_listener
    > {
        let listener: zwp_input_timestamps_v1_listener
        switch device {
        case .pointer:
            listener = zwp_input_timestamps_v1_listener(timestamp: { data, _, high, low, nanoseconds in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.preciseTimestamp(.pointer, secondsHigh: high, secondsLow: low, nanoseconds: nanoseconds)
                }
            })
        case .keyboard:
            listener = zwp_input_timestamps_v1_listener(timestamp: { data, _, high, low, nanoseconds in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.preciseTimestamp(.keyboard, secondsHigh: high, secondsLow: low, nanoseconds: nanoseconds)
                }
            })
        case .touch:
            listener = zwp_input_timestamps_v1_listener(timestamp: { data, _, high, low, nanoseconds in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.preciseTimestamp(.touch, secondsHigh: high, secondsLow: low, nanoseconds: nanoseconds)
                }
            })
        }
        return WaylandListeners.make(listener)
    }

    private nonisolated(unsafe) static let pointerTimestampsListener = timestampsListener(.pointer)
    private nonisolated(unsafe) static let keyboardTimestampsListener = timestampsListener(.keyboard)
    private nonisolated(unsafe) static let touchTimestampsListener = timestampsListener(.touch)
}
