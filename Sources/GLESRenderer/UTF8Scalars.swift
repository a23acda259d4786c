/// The Unicode scalars of UTF-8 bytes, without allocating: each ill-formed sequence (a stray
/// continuation byte, a truncated or overlong sequence, a surrogate) comes out as U+FFFD, as
/// `String(decoding:as:)` would make it, so that text from outside draws the replacement
/// character and goes on.
struct UTF8Scalars<Bytes: Collection>: Sequence, IteratorProtocol where Bytes.Element == UInt8 {
    private var bytes: Bytes.Iterator
    private var decoder = UTF8()

    init(_ bytes: Bytes) {
        self.bytes = bytes.makeIterator()
    }

    mutating func next() -> Unicode.Scalar? {
        switch decoder.decode(&bytes) {
        case .scalarValue(let scalar): scalar
        case .emptyInput: nil
        case .error: "\u{FFFD}"
        }
    }
}
