@_exported import SurfaceInput

/// A key press on the surface.
public struct KeyEvent: Sendable, Hashable {
    public var symbol: KeySymbol
    public init(symbol: KeySymbol) { self.symbol = symbol }
}

/// Turns a terminal's bytes into keysyms: printable ASCII as itself, Enter, Tab, Backspace, a
/// lone Escape, and the cursor and editing keys' escape sequences (`ESC [ A`, `ESC O A`,
/// `ESC [ 5 ~`, …). Unknown sequences are dropped. A lone Escape is only known to be one when
/// the bytes read with it end: call ``finish(_:)`` after each read.
struct TerminalKeyDecoder {
    private enum State { case ground, escape, sequence(parameter: UInt32) }
    private var state = State.ground

    /// Feeds one byte; `emit` is called with each key completed.
    mutating func feed(_ byte: UInt8, _ emit: (KeySymbol) -> Void) {
        switch state {
        case .ground:
            ground(byte, emit)
        case .escape:
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") {
                state = .sequence(parameter: 0)
            } else {
                state = .ground
                emit(.escape)  // Escape, then a key of its own (Alt+key arrives this way)
                ground(byte, emit)
            }
        case .sequence(let parameter):
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                state = .sequence(parameter: min(parameter &* 10 &+ UInt32(byte - UInt8(ascii: "0")), 1000))
            case UInt8(ascii: ";"):
                state = .sequence(parameter: parameter)  // modifiers: ignored
            case 0x40...0x7e:
                state = .ground
                if let key = TerminalKeyDecoder.final(byte, parameter: parameter) { emit(key) }
            default:
                state = .ground  // not a sequence we know: dropped
            }
        }
    }

    /// The bytes of one read have ended: a pending Escape was the Escape key.
    mutating func finish(_ emit: (KeySymbol) -> Void) {
        if case .escape = state { emit(.escape) }
        state = .ground
    }

    var isIdle: Bool {
        if case .ground = state { return true }
        return false
    }

    private mutating func ground(_ byte: UInt8, _ emit: (KeySymbol) -> Void) {
        switch byte {
        case 0x1b: state = .escape
        case 0x0d, 0x0a: emit(.returnKey)
        case 0x09: emit(.tab)
        case 0x08, 0x7f: emit(.backspace)
        case 0x20...0x7e: emit(KeySymbol(rawValue: UInt32(byte)))
        default: break  // other control bytes and non-ASCII: no key
        }
    }

    private static func final(_ byte: UInt8, parameter: UInt32) -> KeySymbol? {
        switch byte {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "~"):
            switch parameter {
            case 1, 7: .home
            case 3: .delete
            case 4, 8: .end
            case 5: .pageUp
            case 6: .pageDown
            default: nil
            }
        default: nil
        }
    }
}
