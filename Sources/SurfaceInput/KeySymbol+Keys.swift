// The usual keys' XKB keysyms (xkbcommon-keysyms.h): letters as typed without Shift (with Shift
// XKB gives the capital's keysym: compare `symbol.lowercased`), digits of the main row and the
// keypad, function keys, modifiers and the editing and lock keys.
extension KeySymbol {
    public static let a = KeySymbol(rawValue: 0x0061)  // XKB_KEY_a
    public static let b = KeySymbol(rawValue: 0x0062)  // XKB_KEY_b
    public static let c = KeySymbol(rawValue: 0x0063)  // XKB_KEY_c
    public static let d = KeySymbol(rawValue: 0x0064)  // XKB_KEY_d
    public static let e = KeySymbol(rawValue: 0x0065)  // XKB_KEY_e
    public static let f = KeySymbol(rawValue: 0x0066)  // XKB_KEY_f
    public static let g = KeySymbol(rawValue: 0x0067)  // XKB_KEY_g
    public static let h = KeySymbol(rawValue: 0x0068)  // XKB_KEY_h
    public static let i = KeySymbol(rawValue: 0x0069)  // XKB_KEY_i
    public static let j = KeySymbol(rawValue: 0x006a)  // XKB_KEY_j
    public static let k = KeySymbol(rawValue: 0x006b)  // XKB_KEY_k
    public static let l = KeySymbol(rawValue: 0x006c)  // XKB_KEY_l
    public static let m = KeySymbol(rawValue: 0x006d)  // XKB_KEY_m
    public static let n = KeySymbol(rawValue: 0x006e)  // XKB_KEY_n
    public static let o = KeySymbol(rawValue: 0x006f)  // XKB_KEY_o
    public static let p = KeySymbol(rawValue: 0x0070)  // XKB_KEY_p
    public static let r = KeySymbol(rawValue: 0x0072)  // XKB_KEY_r
    public static let s = KeySymbol(rawValue: 0x0073)  // XKB_KEY_s
    public static let t = KeySymbol(rawValue: 0x0074)  // XKB_KEY_t
    public static let u = KeySymbol(rawValue: 0x0075)  // XKB_KEY_u
    public static let v = KeySymbol(rawValue: 0x0076)  // XKB_KEY_v
    public static let w = KeySymbol(rawValue: 0x0077)  // XKB_KEY_w
    public static let x = KeySymbol(rawValue: 0x0078)  // XKB_KEY_x
    public static let y = KeySymbol(rawValue: 0x0079)  // XKB_KEY_y
    public static let z = KeySymbol(rawValue: 0x007a)  // XKB_KEY_z
    public static let digit0 = KeySymbol(rawValue: 0x0030)  // XKB_KEY_0
    public static let digit1 = KeySymbol(rawValue: 0x0031)  // XKB_KEY_1
    public static let digit2 = KeySymbol(rawValue: 0x0032)  // XKB_KEY_2
    public static let digit3 = KeySymbol(rawValue: 0x0033)  // XKB_KEY_3
    public static let digit4 = KeySymbol(rawValue: 0x0034)  // XKB_KEY_4
    public static let digit5 = KeySymbol(rawValue: 0x0035)  // XKB_KEY_5
    public static let digit6 = KeySymbol(rawValue: 0x0036)  // XKB_KEY_6
    public static let digit7 = KeySymbol(rawValue: 0x0037)  // XKB_KEY_7
    public static let digit8 = KeySymbol(rawValue: 0x0038)  // XKB_KEY_8
    public static let digit9 = KeySymbol(rawValue: 0x0039)  // XKB_KEY_9
    public static let keypad0 = KeySymbol(rawValue: 0xffb0)  // XKB_KEY_KP_0
    public static let keypad1 = KeySymbol(rawValue: 0xffb1)  // XKB_KEY_KP_1
    public static let keypad2 = KeySymbol(rawValue: 0xffb2)  // XKB_KEY_KP_2
    public static let keypad3 = KeySymbol(rawValue: 0xffb3)  // XKB_KEY_KP_3
    public static let keypad4 = KeySymbol(rawValue: 0xffb4)  // XKB_KEY_KP_4
    public static let keypad5 = KeySymbol(rawValue: 0xffb5)  // XKB_KEY_KP_5
    public static let keypad6 = KeySymbol(rawValue: 0xffb6)  // XKB_KEY_KP_6
    public static let keypad7 = KeySymbol(rawValue: 0xffb7)  // XKB_KEY_KP_7
    public static let keypad8 = KeySymbol(rawValue: 0xffb8)  // XKB_KEY_KP_8
    public static let keypad9 = KeySymbol(rawValue: 0xffb9)  // XKB_KEY_KP_9
    public static let f1 = KeySymbol(rawValue: 0xffbe)  // XKB_KEY_F1
    public static let f2 = KeySymbol(rawValue: 0xffbf)  // XKB_KEY_F2
    public static let f3 = KeySymbol(rawValue: 0xffc0)  // XKB_KEY_F3
    public static let f4 = KeySymbol(rawValue: 0xffc1)  // XKB_KEY_F4
    public static let f5 = KeySymbol(rawValue: 0xffc2)  // XKB_KEY_F5
    public static let f6 = KeySymbol(rawValue: 0xffc3)  // XKB_KEY_F6
    public static let f7 = KeySymbol(rawValue: 0xffc4)  // XKB_KEY_F7
    public static let f8 = KeySymbol(rawValue: 0xffc5)  // XKB_KEY_F8
    public static let f9 = KeySymbol(rawValue: 0xffc6)  // XKB_KEY_F9
    public static let f10 = KeySymbol(rawValue: 0xffc7)  // XKB_KEY_F10
    public static let f11 = KeySymbol(rawValue: 0xffc8)  // XKB_KEY_F11
    public static let f12 = KeySymbol(rawValue: 0xffc9)  // XKB_KEY_F12
    public static let insert = KeySymbol(rawValue: 0xff63)  // XKB_KEY_Insert
    public static let menu = KeySymbol(rawValue: 0xff67)  // XKB_KEY_Menu
    public static let printScreen = KeySymbol(rawValue: 0xff61)  // XKB_KEY_Print
    public static let pause = KeySymbol(rawValue: 0xff13)  // XKB_KEY_Pause
    public static let scrollLock = KeySymbol(rawValue: 0xff14)  // XKB_KEY_Scroll_Lock
    public static let numLock = KeySymbol(rawValue: 0xff7f)  // XKB_KEY_Num_Lock
    public static let capsLock = KeySymbol(rawValue: 0xffe5)  // XKB_KEY_Caps_Lock
    public static let leftShift = KeySymbol(rawValue: 0xffe1)  // XKB_KEY_Shift_L
    public static let rightShift = KeySymbol(rawValue: 0xffe2)  // XKB_KEY_Shift_R
    public static let leftControl = KeySymbol(rawValue: 0xffe3)  // XKB_KEY_Control_L
    public static let rightControl = KeySymbol(rawValue: 0xffe4)  // XKB_KEY_Control_R
    public static let leftAlt = KeySymbol(rawValue: 0xffe9)  // XKB_KEY_Alt_L
    public static let rightAlt = KeySymbol(rawValue: 0xffea)  // XKB_KEY_Alt_R
    public static let leftSuper = KeySymbol(rawValue: 0xffeb)  // XKB_KEY_Super_L
    public static let rightSuper = KeySymbol(rawValue: 0xffec)  // XKB_KEY_Super_R
    public static let minus = KeySymbol(rawValue: 0x002d)  // XKB_KEY_minus
    public static let equal = KeySymbol(rawValue: 0x003d)  // XKB_KEY_equal
    public static let comma = KeySymbol(rawValue: 0x002c)  // XKB_KEY_comma
    public static let period = KeySymbol(rawValue: 0x002e)  // XKB_KEY_period
    public static let slash = KeySymbol(rawValue: 0x002f)  // XKB_KEY_slash
    public static let semicolon = KeySymbol(rawValue: 0x003b)  // XKB_KEY_semicolon
    public static let apostrophe = KeySymbol(rawValue: 0x0027)  // XKB_KEY_apostrophe
    public static let bracketLeft = KeySymbol(rawValue: 0x005b)  // XKB_KEY_bracketleft
    public static let bracketRight = KeySymbol(rawValue: 0x005d)  // XKB_KEY_bracketright
    public static let backslash = KeySymbol(rawValue: 0x005c)  // XKB_KEY_backslash
    public static let grave = KeySymbol(rawValue: 0x0060)  // XKB_KEY_grave
    public static let keypadAdd = KeySymbol(rawValue: 0xffab)  // XKB_KEY_KP_Add
    public static let keypadSubtract = KeySymbol(rawValue: 0xffad)  // XKB_KEY_KP_Subtract
    public static let keypadMultiply = KeySymbol(rawValue: 0xffaa)  // XKB_KEY_KP_Multiply
    public static let keypadDivide = KeySymbol(rawValue: 0xffaf)  // XKB_KEY_KP_Divide
    public static let keypadDecimal = KeySymbol(rawValue: 0xffae)  // XKB_KEY_KP_Decimal

    /// A capital letter's keysym as its small letter's (`A` with Shift → `.a`), any other as it is:
    /// for shortcuts that ignore Shift (Ctrl+Z and Ctrl+Shift+Z both give `.z`).
    public var lowercased: KeySymbol {
        (0x41...0x5a).contains(rawValue) ? KeySymbol(rawValue: rawValue + 0x20) : self
    }
}
