/// A reproducible random number generator (xorshift64) for the property-style tests: a failing
/// seed fails the same way every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed | 1 }  // xorshift never leaves 0
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
}
