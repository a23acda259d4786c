/// How late a timer wakes after the time it was armed for: the median of the last ``window``
/// wakes. A median, not a mean or a maximum: aiming a timer early by it puts as many wakes before
/// the aimed-for time as after, and one stalled wake moves it by one place, not by the stall.
///
/// Pure value type: no clock reads, no allocation after init.
public struct WakeLatenessMedian: Sendable, Equatable {
    /// How many recent wakes the median is taken over (odd: one middle).
    public static let window = 15

    private var samples = [Int64](repeating: 0, count: WakeLatenessMedian.window)
    private var sorted = [Int64](repeating: 0, count: WakeLatenessMedian.window)
    private var count = 0
    /// The median of the recent wakes' lateness in nanoseconds (0 before any).
    public private(set) var median: Int64 = 0

    public init() {}

    /// A wake `lateness` nanoseconds after the time it was armed for.
    public mutating func record(_ lateness: Int64) {
        samples[count % samples.count] = lateness
        count &+= 1
        let filled = min(count, samples.count)
        for i in 0..<filled {
            // Insertion into the sorted prefix: at most 15 entries, in place.
            let value = samples[i]
            var j = i
            while j > 0, sorted[j - 1] > value {
                sorted[j] = sorted[j - 1]
                j -= 1
            }
            sorted[j] = value
        }
        median = sorted[(filled - 1) / 2]
    }
}
