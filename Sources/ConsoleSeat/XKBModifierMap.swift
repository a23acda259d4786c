import SurfaceInput

/// Which bits of a keymap's modifier mask are which ``KeyModifiers``: xkbcommon numbers a
/// keymap's modifiers itself (`xkb_keymap_mod_get_index`), so the bits are looked up once per
/// keymap by name (Shift, Control, Mod1 for Alt, Mod4 for the logo key, Lock, Mod2 for Num Lock,
/// as the usual keymaps bind them).
///
/// Pure value type: no C, no allocation.
struct XKBModifierMap: Sendable, Hashable {
    /// The modifier names in the order of ``KeyModifiers``' bits.
    static let names = ["Shift", "Control", "Mod1", "Mod4", "Lock", "Mod2"]
    private static let flags: [KeyModifiers] = [.shift, .control, .alt, .logo, .capsLock, .numLock]

    /// Each name's index in the keymap (`XKB_MOD_INVALID`, or anything past 31, for none).
    let indices: [UInt32]

    /// `index(name)` is the keymap's index for a modifier name.
    init(index: (String) -> UInt32) {
        indices = Self.names.map(index)
    }

    /// The modifiers set in `mask` (an `xkb_mod_mask_t`, e.g. the effective modifiers).
    func modifiers(mask: UInt32) -> KeyModifiers {
        var result: KeyModifiers = []
        for (flag, index) in zip(Self.flags, indices) where index < 32 && mask & (1 << index) != 0 {
            result.insert(flag)
        }
        return result
    }

    /// What typing a key enters: xkbcommon's UTF-8 without control characters (Return, Tab,
    /// Backspace, Escape and Ctrl+letter give C0 controls, DEL, or C1 controls: keys, not text).
    static func typedText(_ utf8: String) -> String {
        guard utf8.unicodeScalars.contains(where: isControl) else { return utf8 }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: utf8.unicodeScalars.filter { !isControl($0) })
        return String(text)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
    }
}
