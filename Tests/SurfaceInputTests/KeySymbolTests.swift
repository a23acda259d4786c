import Foundation
import SurfaceInput
import Testing

@Suite("key symbols: the usual keys' constants are XKB's")
struct KeySymbolTests {
    /// Each constant and the XKB name it stands for (`XKB_KEY_<name>` in xkbcommon-keysyms.h).
    static let constants: [(KeySymbol, String)] = [
        (.a, "a"),
        (.b, "b"),
        (.c, "c"),
        (.d, "d"),
        (.e, "e"),
        (.f, "f"),
        (.g, "g"),
        (.h, "h"),
        (.i, "i"),
        (.j, "j"),
        (.k, "k"),
        (.l, "l"),
        (.m, "m"),
        (.n, "n"),
        (.o, "o"),
        (.p, "p"),
        (.r, "r"),
        (.s, "s"),
        (.t, "t"),
        (.u, "u"),
        (.v, "v"),
        (.w, "w"),
        (.x, "x"),
        (.y, "y"),
        (.z, "z"),
        (.digit0, "0"),
        (.digit1, "1"),
        (.digit2, "2"),
        (.digit3, "3"),
        (.digit4, "4"),
        (.digit5, "5"),
        (.digit6, "6"),
        (.digit7, "7"),
        (.digit8, "8"),
        (.digit9, "9"),
        (.keypad0, "KP_0"),
        (.keypad1, "KP_1"),
        (.keypad2, "KP_2"),
        (.keypad3, "KP_3"),
        (.keypad4, "KP_4"),
        (.keypad5, "KP_5"),
        (.keypad6, "KP_6"),
        (.keypad7, "KP_7"),
        (.keypad8, "KP_8"),
        (.keypad9, "KP_9"),
        (.f1, "F1"),
        (.f2, "F2"),
        (.f3, "F3"),
        (.f4, "F4"),
        (.f5, "F5"),
        (.f6, "F6"),
        (.f7, "F7"),
        (.f8, "F8"),
        (.f9, "F9"),
        (.f10, "F10"),
        (.f11, "F11"),
        (.f12, "F12"),
        (.insert, "Insert"),
        (.menu, "Menu"),
        (.printScreen, "Print"),
        (.pause, "Pause"),
        (.scrollLock, "Scroll_Lock"),
        (.numLock, "Num_Lock"),
        (.capsLock, "Caps_Lock"),
        (.leftShift, "Shift_L"),
        (.rightShift, "Shift_R"),
        (.leftControl, "Control_L"),
        (.rightControl, "Control_R"),
        (.leftAlt, "Alt_L"),
        (.rightAlt, "Alt_R"),
        (.leftSuper, "Super_L"),
        (.rightSuper, "Super_R"),
        (.minus, "minus"),
        (.equal, "equal"),
        (.comma, "comma"),
        (.period, "period"),
        (.slash, "slash"),
        (.semicolon, "semicolon"),
        (.apostrophe, "apostrophe"),
        (.bracketLeft, "bracketleft"),
        (.bracketRight, "bracketright"),
        (.backslash, "backslash"),
        (.grave, "grave"),
        (.keypadAdd, "KP_Add"),
        (.keypadSubtract, "KP_Subtract"),
        (.keypadMultiply, "KP_Multiply"),
        (.keypadDivide, "KP_Divide"),
        (.keypadDecimal, "KP_Decimal")
    ]

    @Test("every constant equals its keysym in xkbcommon-keysyms.h (libxkbcommon-dev)")
    func constantsMatchXKB() throws {
        let header = try String(contentsOfFile: "/usr/include/xkbcommon/xkbcommon-keysyms.h", encoding: .utf8)
        var keysyms: [String: UInt32] = [:]
        for line in header.split(separator: "\n") where line.hasPrefix("#define XKB_KEY_") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, fields[2].hasPrefix("0x"), let value = UInt32(fields[2].dropFirst(2), radix: 16) else { continue }
            keysyms[String(fields[1].dropFirst("XKB_KEY_".count))] = value
        }
        #expect(keysyms.count > 1000)
        for (symbol, name) in Self.constants {
            #expect(keysyms[name] == symbol.rawValue, "XKB_KEY_\(name)")
        }
    }

    @Test("lowercased: a capital letter's keysym is its small letter's, any other stays")
    func lowercased() {
        #expect(KeySymbol(rawValue: 0x5a).lowercased == .z)  // XKB_KEY_Z
        #expect(KeySymbol(rawValue: 0x41).lowercased == .a)
        #expect(KeySymbol.z.lowercased == .z)
        #expect(KeySymbol.digit1.lowercased == .digit1)
        #expect(KeySymbol.f1.lowercased == .f1)
        #expect(KeySymbol(rawValue: 0x40).lowercased.rawValue == 0x40)  // @, just below A
        #expect(KeySymbol(rawValue: 0x5b).lowercased == .bracketLeft)  // just above Z
    }
}
