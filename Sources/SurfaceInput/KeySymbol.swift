/// An XKB keysym (xkbcommon's `xkb_keysym_t` values, `XKB_KEY_*`), the same on every backend:
/// from the keymap on Wayland and through libinput, from the terminal's bytes on DRM/KMS.
public struct KeySymbol: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The keysym of a printable ASCII character (Latin-1 keysyms equal their code points).
    public init?(ascii: Unicode.Scalar) {
        guard (0x20...0x7e).contains(ascii.value) else { return nil }
        rawValue = ascii.value
    }

    public static let space = KeySymbol(rawValue: 0x0020)  // XKB_KEY_space
    public static let q = KeySymbol(rawValue: 0x0071)  // XKB_KEY_q
    public static let returnKey = KeySymbol(rawValue: 0xff0d)  // XKB_KEY_Return
    public static let keypadEnter = KeySymbol(rawValue: 0xff8d)  // XKB_KEY_KP_Enter
    public static let escape = KeySymbol(rawValue: 0xff1b)  // XKB_KEY_Escape
    public static let tab = KeySymbol(rawValue: 0xff09)  // XKB_KEY_Tab
    public static let backspace = KeySymbol(rawValue: 0xff08)  // XKB_KEY_BackSpace
    public static let delete = KeySymbol(rawValue: 0xffff)  // XKB_KEY_Delete
    public static let home = KeySymbol(rawValue: 0xff50)  // XKB_KEY_Home
    public static let left = KeySymbol(rawValue: 0xff51)  // XKB_KEY_Left
    public static let up = KeySymbol(rawValue: 0xff52)  // XKB_KEY_Up
    public static let right = KeySymbol(rawValue: 0xff53)  // XKB_KEY_Right
    public static let down = KeySymbol(rawValue: 0xff54)  // XKB_KEY_Down
    public static let pageUp = KeySymbol(rawValue: 0xff55)  // XKB_KEY_Prior
    public static let pageDown = KeySymbol(rawValue: 0xff56)  // XKB_KEY_Next
    public static let end = KeySymbol(rawValue: 0xff57)  // XKB_KEY_End

    public var description: String {
        if (0x21...0x7e).contains(rawValue), let scalar = Unicode.Scalar(rawValue) { return String(Character(scalar)) }
        return "keysym 0x" + String(rawValue, radix: 16)
    }
}
