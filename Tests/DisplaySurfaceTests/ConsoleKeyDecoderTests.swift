@testable import DisplaySurface
import Testing

@Suite("Console bytes become XKB keysyms")
struct TerminalKeyDecoderTests {
    func decode(_ reads: [[UInt8]]) -> [KeySymbol] {
        var decoder = TerminalKeyDecoder()
        var keys: [KeySymbol] = []
        for read in reads {
            for byte in read { decoder.feed(byte) { keys.append($0) } }
            decoder.finish { keys.append($0) }
        }
        return keys
    }

    @Test("printable ASCII, Enter, Tab, Backspace")
    func plain() {
        #expect(decode([Array(" q".utf8)]) == [.space, .q])
        #expect(decode([[0x0d], [0x0a], [0x09], [0x7f], [0x08]]) == [.returnKey, .returnKey, .tab, .backspace, .backspace])
        #expect(decode([Array("A~".utf8)]) == [KeySymbol(rawValue: 0x41), KeySymbol(rawValue: 0x7e)])
        #expect(KeySymbol(ascii: "q") == .q)
    }

    @Test("a lone Escape is the Escape key; cursor and editing sequences are their keys")
    func escapes() {
        #expect(decode([[0x1b]]) == [.escape])
        #expect(decode([[0x1b, 0x5b, 0x41], [0x1b, 0x4f, 0x42]]) == [.up, .down])
        #expect(decode([Array("\u{1b}[5~\u{1b}[6~\u{1b}[3~".utf8)]) == [.pageUp, .pageDown, .delete])
        #expect(decode([[0x1b, UInt8(ascii: "q")]]) == [.escape, .q])  // Alt+q
        #expect(decode([[0x1b, 0x1b]]) == [.escape, .escape])
    }

    @Test("control bytes, non-ASCII and unknown sequences give nothing and never trap")
    func garbage() {
        #expect(decode([[0x00, 0x01, 0x80, 0xff], Array("\u{1b}[99999999999Z".utf8)]).isEmpty)
        var all: [UInt8] = []
        for i in 0..<2048 { all.append(UInt8(truncatingIfNeeded: i &* 7919)) }
        _ = decode([all])
    }
}
