/// One message of the Wayland wire protocol: the sender's object id, the opcode, and the whole
/// message (header and arguments, native byte order, 32-bit words). The fault proxy reads and
/// rewrites the few messages it acts on with it; every other message passes as bytes.
public struct WaylandWireMessage: Equatable, Sendable {
    public private(set) var bytes: [UInt8]

    /// A message as the wire carries it; nil unless `bytes` holds exactly one well-formed message.
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 8, bytes.count % 4 == 0 else { return nil }
        self.bytes = bytes
        guard size == bytes.count else { return nil }
    }

    /// A message from `sender` with `opcode` and 32-bit `arguments`.
    public init(sender: UInt32, opcode: UInt16, arguments: [UInt32]) {
        let size = UInt32(8 + 4 * arguments.count)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(size))
        for word in [sender, size << 16 | UInt32(opcode)] + arguments {
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
        }
        self.bytes = bytes
    }

    public var sender: UInt32 { word(0) }
    public var opcode: UInt16 { UInt16(truncatingIfNeeded: word(1)) }
    public var size: Int { Int(word(1) >> 16) }
    /// The number of 32-bit argument words.
    public var argumentCount: Int { bytes.count / 4 - 2 }

    /// The `index`th argument word (0 for one past the end).
    public func argument(_ index: Int) -> UInt32 {
        index >= 0 && index < argumentCount ? word(index + 2) : 0
    }

    /// Replaces the `index`th argument word (ignored past the end).
    public mutating func setArgument(_ index: Int, _ value: UInt32) {
        guard index >= 0, index < argumentCount else { return }
        let offset = 4 * (index + 2)
        withUnsafeBytes(of: value) { raw in
            for i in 0..<4 { bytes[offset + i] = raw[i] }
        }
    }

    /// The string argument that starts at word `index` (length word, then the bytes with their
    /// terminating NUL, padded to a word), and the index of the word after it.
    public func string(at index: Int) -> (value: String, next: Int)? {
        let length = Int(argument(index))
        let start = 4 * (index + 3)
        guard length > 0, start + length <= bytes.count else { return nil }
        let value = String(decoding: bytes[start..<(start + length - 1)], as: UTF8.self)
        return (value, index + 1 + (length + 3) / 4)
    }

    private func word(_ index: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self) }
    }
}

/// Cuts a byte stream into ``WaylandWireMessage``s: bytes go in as they are read from a socket,
/// whole messages come out; a partial message waits for the rest.
public struct WaylandWireReader: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Whether a malformed header (a size below 8 or not a multiple of 4) stopped the reader: the
    /// stream cannot be cut any further.
    public private(set) var isMalformed = false

    /// Appends `bytes` and returns the messages now complete.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [WaylandWireMessage] {
        pending.append(contentsOf: bytes)
        var messages: [WaylandWireMessage] = []
        var offset = 0
        while !isMalformed, pending.count - offset >= 8 {
            let size = pending.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) >> 16) }
            guard size >= 8, size % 4 == 0 else {
                isMalformed = true
                break
            }
            guard pending.count - offset >= size else { break }
            if let message = WaylandWireMessage(bytes: Array(pending[offset..<(offset + size)])) { messages.append(message) }
            offset += size
        }
        pending.removeFirst(offset)
        return messages
    }

    /// Bytes of a message not yet complete.
    public var pendingCount: Int { pending.count }
}
