/// The property tests' own sequence of numbers from one seed (xorshift): a seed the property
/// checker shrinks and reports gives the same run again.
struct SeededRandom {
    private var state: Int64

    init(seed: Int64) { state = seed | 1 }

    /// The next number in `0..<bound`.
    mutating func next(_ bound: Int64) -> Int64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return (state & Int64.max) % bound
    }
}
