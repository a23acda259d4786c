import Glibc
internal import CWayland
internal import CWaylandClient
internal import CXKBCommon

/// The keyboard of the compositor's first seat, translated to keysyms with xkbcommon.
///
/// The compositor sends the keymap as a file descriptor; it is mapped, compiled once, and each key
/// event becomes a keysym through the xkb state (so layouts and modifiers are honoured).
@MainActor
public final class WaylandKeyboard {
    /// Keysyms this library names (xkbcommon's values).
    public enum KeySym {
        public static let space: UInt32 = 0x0020
        public static let returnKey: UInt32 = 0xff0d
        public static let keypadEnter: UInt32 = 0xff8d
        public static let escape: UInt32 = 0xff1b
        public static let q: UInt32 = 0x0071
    }

    /// Called with each key press (keysym).
    public var onKeyPress: ((UInt32) -> Void)?
    /// Whether the seat has a keyboard at all.
    public private(set) var isAvailable = false

    private let seat: OpaquePointer
    private var keyboard: OpaquePointer?
    private let context: OpaquePointer?
    private var keymap: OpaquePointer?
    private var state: OpaquePointer?

    init(seat: OpaquePointer) {
        self.seat = seat
        context = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
        wl_seat_add_listener(seat, WaylandKeyboard.seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    func destroy() {
        if let keyboard {
            if wl_keyboard_get_version(keyboard) >= 3 { wl_keyboard_release(keyboard) } else { wl_keyboard_destroy(keyboard) }
        }
        keyboard = nil
        if wl_seat_get_version(seat) >= 5 { wl_seat_release(seat) } else { wl_seat_destroy(seat) }
        if let state { xkb_state_unref(state) }
        if let keymap { xkb_keymap_unref(keymap) }
        if let context { xkb_context_unref(context) }
        state = nil; keymap = nil
    }

    private func capabilities(_ caps: UInt32) {
        let has = caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
        isAvailable = has
        if has, keyboard == nil {
            keyboard = wl_seat_get_keyboard(seat)
            wl_keyboard_add_listener(keyboard, WaylandKeyboard.keyboardListener, Unmanaged.passUnretained(self).toOpaque())
        } else if !has, let keyboard {
            if wl_keyboard_get_version(keyboard) >= 3 { wl_keyboard_release(keyboard) } else { wl_keyboard_destroy(keyboard) }
            self.keyboard = nil
        }
    }

    private func keymap(format: UInt32, fd: Int32, size: UInt32) {
        defer { close(fd) }
        guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, size > 0, let context else { return }
        // Mapping past the file's end would fault when read (SIGBUS): the size must be there.
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size >= Int(size) else { return }
        guard let mapped = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else { return }
        defer { munmap(mapped, Int(size)) }
        let text = mapped.assumingMemoryBound(to: CChar.self)
        // The text ends at its NUL or at the mapping's end, whichever comes first (a keymap
        // without a NUL must not be read past the mapping).
        guard
            let newKeymap = xkb_keymap_new_from_buffer(
                context, text, strnlen(text, Int(size)), XKB_KEYMAP_FORMAT_TEXT_V1,
                XKB_KEYMAP_COMPILE_NO_FLAGS),
            let newState = xkb_state_new(newKeymap)
        else { return }
        if let state { xkb_state_unref(state) }
        if let keymap { xkb_keymap_unref(keymap) }
        keymap = newKeymap
        state = newState
    }

    private func key(_ key: UInt32, pressed: Bool) {
        guard pressed, let state, key <= UInt32.max - 8 else { return }
        // Wayland sends evdev codes; xkb's keycodes are those + 8.
        let sym = xkb_state_key_get_one_sym(state, key + 8)
        onKeyPress?(sym)
    }

    private func modifiers(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
        guard let state else { return }
        xkb_state_update_mask(state, depressed, latched, locked, 0, 0, group)
    }

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandKeyboard {
        Unmanaged<WaylandKeyboard>.fromOpaque(data!).takeUnretainedValue()
    }

    private nonisolated(unsafe) static let seatListener = WaylandListeners.make(
        wl_seat_listener(
            capabilities: { data, _, caps in
                let object = WaylandKeyboard.from(data)
                MainActor.assumeIsolated { object.capabilities(caps) }
            },
            name: { _, _, _ in }
        ))

    private nonisolated(unsafe) static let keyboardListener = WaylandListeners.make(
        wl_keyboard_listener(
            keymap: { data, _, format, fd, size in
                let object = WaylandKeyboard.from(data)
                MainActor.assumeIsolated { object.keymap(format: format, fd: fd, size: size) }
            },
            enter: { _, _, _, _, _ in },
            leave: { _, _, _, _ in },
            key: { data, _, _, _, key, state in
                let object = WaylandKeyboard.from(data)
                MainActor.assumeIsolated { object.key(key, pressed: state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue) }
            },
            modifiers: { data, _, _, depressed, latched, locked, group in
                let object = WaylandKeyboard.from(data)
                MainActor.assumeIsolated { object.modifiers(depressed: depressed, latched: latched, locked: locked, group: group) }
            },
            repeat_info: { _, _, _, _ in }
        ))
}
