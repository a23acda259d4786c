/// A reusable byte buffer for text that is built every frame (HUD values, row labels) without
/// allocating: capacity is reserved once, contents are replaced in place. What it appends is
/// ASCII; the renderer draws its bytes as UTF-8.
public struct TextBuffer: Sendable {
    public private(set) var bytes: ContiguousArray<UInt8>

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func clear() { bytes.removeAll(keepingCapacity: true) }

    public mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { buffer in
            for byte in buffer { bytes.append(byte) }
        }
    }

    public mutating func append(_ value: Int) {
        var v = value
        if v < 0 { bytes.append(UInt8(ascii: "-")); v = -v }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0 && n < 20
            for i in stride(from: n - 1, through: 0, by: -1) { bytes.append(raw[i]) }
        }
    }

    /// Appends `value` with a fixed number of decimals (rounded).
    public mutating func append(_ value: Double, decimals: Int) {
        guard value.isFinite else { append("-"); return }
        var scale = 1
        for _ in 0..<max(0, decimals) { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        if value < 0 && scaled > 0 { bytes.append(UInt8(ascii: "-")) }
        append(scaled / scale)
        guard decimals > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var fraction = scaled % scale
        var divisor = scale / 10
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }
}
