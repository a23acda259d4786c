/// The newest presentation a source observed: its time, its vblank sequence when the source
/// reports one, and the refresh period the source advertised. A source's rhythm (period, phase,
/// presentation depth, targets) is learned from these by its scheduler (`RhythmEstimator` in
/// FrameSchedulers for Wayland; the KMS schedulers know the period from the mode).
///
/// Pure value type; no clock reads, no allocation.
public struct PresentationTimeline: Sendable {
    /// The newest presentation time observed.
    public private(set) var latest: MonotonicInstant?
    /// Its vblank sequence, when the source reports one.
    public private(set) var latestSequence: UInt64?
    /// The refresh the source advertised most recently (0: unknown).
    public private(set) var advertisedPeriod: Nanoseconds
    /// Presentations observed.
    public private(set) var presentationCount = 0

    public init(advertisedPeriod: Nanoseconds = .zero) {
        self.advertisedPeriod = advertisedPeriod
    }

    /// Records a presentation. A time not after the latest (reordered feedback) is counted but
    /// does not replace it; `advertisedRefresh` 0 leaves the advertised period as it is.
    public mutating func recordPresentation(
        at time: MonotonicInstant, sequence: UInt64? = nil,
        advertisedRefresh: Nanoseconds = .zero
    ) {
        if advertisedRefresh.value > 0 { advertisedPeriod = advertisedRefresh }
        presentationCount += 1
        if let previous = latest, time <= previous { return }
        latest = time
        latestSequence = sequence
    }
}

/// The last 31 values, with an allocation-free median (for sources that learn from recent frames).
public struct RecentMedian: Sendable {
    public static let capacity = 31
    private typealias Slots = (
        Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
        Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
        Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
        Int64, Int64, Int64, Int64, Int64, Int64, Int64
    )
    private static let zeros: Slots = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    /// The values in arrival order (a ring; `next` is where the next one goes).
    private var values: Slots = RecentMedian.zeros
    /// The same values, ascending (the first `count` slots): each append takes the leaving value
    /// out and puts the new one in, at most `capacity` moves instead of a sort of the window.
    private var sorted: Slots = RecentMedian.zeros
    public private(set) var count = 0
    private var next = 0
    /// The median of the values held (0 when empty).
    public private(set) var median: Int64 = 0

    public init() {}

    public mutating func append(_ value: Int64) {
        let leaving: Int64? = count == RecentMedian.capacity ? slot(next, of: values) : nil
        withUnsafeMutableBytes(of: &values) { raw in
            raw.bindMemory(to: Int64.self)[next] = value
        }
        next = (next + 1) % RecentMedian.capacity
        var n = count
        median = withUnsafeMutableBytes(of: &sorted) { raw -> Int64 in
            let a = raw.bindMemory(to: Int64.self)
            if let leaving {
                // Its place among the sorted (it is there: every value held is in both).
                var i = 0
                while i < n - 1 && a[i] != leaving { i += 1 }
                while i < n - 1 { a[i] = a[i + 1]; i += 1 }
                n -= 1
            }
            var j = n - 1
            while j >= 0 && a[j] > value { a[j + 1] = a[j]; j -= 1 }
            a[j + 1] = value
            n += 1
            if n % 2 == 1 { return a[n / 2] }
            // The mean of the middle two without overflow, rounded toward zero like (x + y) / 2.
            let x = a[n / 2 - 1], y = a[n / 2]
            let (sum, overflow) = x.addingReportingOverflow(y)
            return overflow ? x / 2 + y / 2 + (x % 2 + y % 2) / 2 : sum / 2
        }
        count = n
    }

    private func slot(_ index: Int, of slots: Slots) -> Int64 {
        withUnsafeBytes(of: slots) { $0.bindMemory(to: Int64.self)[index] }
    }
}
