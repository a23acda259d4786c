import DisplayLinkCore
import Dispatch
import Glibc
import SurfaceInput
internal import CWayland
internal import CWaylandClient
internal import CXKBCommon

/// `wl_keyboard`: the keymap compiled with xkbcommon, keys resolved to keysyms, modifiers and
/// text through its state, and key repeat from a timer on the main queue.
extension WaylandSeatInput {
    /// The compositor sends the keymap as a file descriptor: mapped, compiled, and from then on
    /// each key is resolved through a state of it (so layouts and modifiers are honoured).
    func keymap(format: UInt32, fd: Int32, size: UInt32) {
        defer { close(fd) }
        guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, size > 0, let xkbContext else { return }
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
                xkbContext, text, strnlen(text, Int(size)), XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS)
        else { return }
        guard let newState = xkb_state_new(newKeymap) else {
            xkb_keymap_unref(newKeymap)
            return
        }
        if let xkbState { xkb_state_unref(xkbState) }
        if let keymap { xkb_keymap_unref(keymap) }
        keymap = newKeymap
        xkbState = newState
    }

    func key(_ code: UInt32, pressed: Bool, milliseconds: UInt32) {
        // Wayland sends evdev codes; xkb's keycodes are those + 8.
        let keycode = code <= UInt32.max - 8 ? code + 8 : 0
        let repeats = pressed && keymap.map { xkb_keymap_key_repeats($0, keycode) != 0 } ?? false
        let time = translator.key(code: code, pressed: pressed, repeats: repeats, milliseconds: milliseconds, receivedAt: .now())
        deliver(InputEvent(time: time, kind: .key(keyEvent(code, phase: pressed ? .pressed : .released))))
        scheduleRepeat()
    }

    func modifiers(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
    }

    func focus(_ focused: Bool) {
        deliver(translator.keyboardFocus(focused, receivedAt: .now()))
        scheduleRepeat()
    }

    /// Key `code` resolved through the current state: its keysym, the effective modifiers, and
    /// (pressed or repeated) the text it enters.
    func keyEvent(_ code: UInt32, phase: KeyboardEvent.Phase) -> KeyboardEvent {
        guard let xkbState, code <= UInt32.max - 8 else { return KeyboardEvent(phase: phase, symbol: KeySymbol(rawValue: 0), code: code) }
        let keycode = code + 8
        let symbol = KeySymbol(rawValue: xkb_state_key_get_one_sym(xkbState, keycode))
        var modifiers: KeyModifiers = []
        for (name, modifier) in WaylandSeatInput.modifierNames
        where xkb_state_mod_name_is_active(xkbState, name, XKB_STATE_MODS_EFFECTIVE) > 0 {
            modifiers.insert(modifier)
        }
        var text = ""
        if phase != .released {
            let length = Int(xkb_state_key_get_utf8(xkbState, keycode, nil, 0))
            if length > 0 {
                var bytes = [CChar](repeating: 0, count: length + 1)
                xkb_state_key_get_utf8(xkbState, keycode, &bytes, bytes.count)
                text = String(decoding: bytes.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return KeyboardEvent(phase: phase, symbol: symbol, code: code, modifiers: modifiers, text: text)
    }

    /// XKB's names of the modifiers `KeyModifiers` has (Alt is Mod1, Super Mod4, Num Lock Mod2
    /// in the keymaps compositors send).
    static let modifierNames: [(String, KeyModifiers)] = [
        ("Shift", .shift), ("Control", .control), ("Mod1", .alt), ("Mod4", .logo), ("Lock", .capsLock), ("Mod2", .numLock)
    ]

    // MARK: Repeat

    /// Sets the repeat timer for the next repeat due, or parks it when none is.
    func scheduleRepeat() {
        guard !isDestroyed else { return }
        guard let due = translator.nextRepeat else {
            repeatTimer?.cancel()
            return
        }
        let timer = repeatTimer ?? MainQueueTimer { [weak self] in self?.repeatTimerFired() }
        repeatTimer = timer
        timer.schedule(at: due, leeway: Nanoseconds(1_000_000))
    }

    private func repeatTimerFired() {
        guard !isDestroyed else { return }
        translator.repeats(until: .now()) { code, time in
            deliver(InputEvent(time: time, kind: .key(keyEvent(code, phase: .repeated))))
        }
        scheduleRepeat()
    }

    nonisolated(unsafe) static let keyboardListener = WaylandListeners.make(
        wl_keyboard_listener(
            keymap: { data, _, format, fd, size in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.keymap(format: format, fd: fd, size: size) }
            },
            enter: { data, _, _, _, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.focus(true) }
            },
            leave: { data, _, _, _ in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.focus(false) }
            },
            key: { data, _, _, time, key, state in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.key(key, pressed: state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue, milliseconds: time)
                }
            },
            modifiers: { data, _, _, depressed, latched, locked, group in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated { object.modifiers(depressed: depressed, latched: latched, locked: locked, group: group) }
            },
            repeat_info: { data, _, rate, delay in
                let object = WaylandSeatInput.from(data)
                MainActor.assumeIsolated {
                    object.translator.repeatInfo(rate: rate, delayMilliseconds: delay)
                    object.scheduleRepeat()
                }
            }
        ))
}
