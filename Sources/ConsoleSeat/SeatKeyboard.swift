import SurfaceInput
internal import CXKBCommon

/// The console keyboards' state through xkbcommon: one keymap (`XKB_DEFAULT_LAYOUT` and friends,
/// else the system's default, usually `us`) and one state for every keyboard of the seat, as
/// compositors keep it. Turns evdev key codes into `KeyboardEvent`s: keysym, modifiers and text
/// as they are when the key goes down (the key itself not yet counted, as on Wayland, where the
/// modifiers a key changes follow its event).
final class SeatKeyboard {
    private let context: OpaquePointer
    private let keymap: OpaquePointer
    private var state: OpaquePointer
    private let modifierMap: XKBModifierMap

    /// `layout`: an XKB layout (`de`, `fr`, …); nil for `XKB_DEFAULT_LAYOUT`, else the default.
    init(layout: String? = nil) throws(SeatInputError) {
        guard let context = xkb_context_new(XKB_CONTEXT_NO_FLAGS) else { throw .keymap("xkb_context_new failed") }
        let made = layout.flatMap { layout in
            layout.withCString { name in
                var names = xkb_rule_names(rules: nil, model: nil, layout: name, variant: nil, options: nil)
                return xkb_keymap_new_from_names(context, &names, XKB_KEYMAP_COMPILE_NO_FLAGS)
            }
        }
        guard let keymap = layout == nil ? xkb_keymap_new_from_names(context, nil, XKB_KEYMAP_COMPILE_NO_FLAGS) : made else {
            xkb_context_unref(context)
            throw .keymap(
                layout.map { "no keymap could be compiled for the layout '\($0)' (SeatInput's xkbLayout)" }
                    ?? "no keymap could be compiled from the default rules (is xkb-data installed, /usr/share/X11/xkb? "
                    + "are XKB_DEFAULT_LAYOUT and friends valid?)")
        }
        guard let state = xkb_state_new(keymap) else {
            xkb_keymap_unref(keymap)
            xkb_context_unref(context)
            throw .keymap("xkb_state_new failed")
        }
        self.context = context
        self.keymap = keymap
        self.state = state
        modifierMap = XKBModifierMap { name in xkb_keymap_mod_get_index(keymap, name) }
    }

    deinit {
        xkb_state_unref(state)
        xkb_keymap_unref(keymap)
        xkb_context_unref(context)
    }

    /// Nothing held: after the time away (keys held then were released elsewhere).
    func reset() {
        guard let fresh = xkb_state_new(keymap) else { return }
        xkb_state_unref(state)
        state = fresh
    }

    /// Evdev key `code` went down or up: its event, then the state updated.
    func key(_ code: UInt32, isPressed: Bool) -> KeyboardEvent {
        let event = self.event(code, phase: isPressed ? .pressed : .released)
        _ = xkb_state_update_key(state, code &+ 8, isPressed ? XKB_KEY_DOWN : XKB_KEY_UP)
        return event
    }

    /// Evdev key `code`, held, repeats: its event with the modifiers in effect now.
    func repeated(_ code: UInt32) -> KeyboardEvent {
        event(code, phase: .repeated)
    }

    /// Whether holding evdev key `code` repeats it (not for modifiers, as the keymap says).
    func repeats(_ code: UInt32) -> Bool {
        xkb_keymap_key_repeats(keymap, code &+ 8) != 0
    }

    private func event(_ code: UInt32, phase: KeyboardEvent.Phase) -> KeyboardEvent {
        let keycode = code &+ 8  // evdev code → XKB keycode
        let symbol = xkb_state_key_get_one_sym(state, keycode)
        let modifiers = modifierMap.modifiers(mask: xkb_state_serialize_mods(state, XKB_STATE_MODS_EFFECTIVE))
        var text = ""
        if phase != .released {
            text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
                let length = xkb_state_key_get_utf8(state, keycode, buffer.baseAddress, buffer.count)
                guard length > 0, Int(length) < buffer.count else { return "" }
                return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(length)), as: UTF8.self)
            }
        }
        return KeyboardEvent(
            phase: phase, symbol: KeySymbol(rawValue: symbol), code: code, modifiers: modifiers,
            text: XKBModifierMap.typedText(text))
    }
}
