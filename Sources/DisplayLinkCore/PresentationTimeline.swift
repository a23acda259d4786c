/// Learns a display's presentation rhythm from the presentation times a source observes, and
/// predicts when a frame prepared now will be presented.
///
/// - ``period``: the median of the recent intervals between presentations (robust to the odd
///   missed or late frame), divided by the vblank-sequence step when the source has sequences.
///   Until three intervals are known it is the advertised refresh, or 60 Hz.
/// - ``predictTarget(now:)``: `latest + depth·period`, moved past `now`, where `depth` is learned
///   from the frames already presented: how many periods after the newest presentation known at
///   drawing time the drawn frame appeared. DRM: 1 (the next vblank). weston's headless backend:
///   2, because it sends the frame callback when it composites and presents 16 ms later.
///
/// Pure value type; no clock reads, no allocation after init.
public struct PresentationTimeline: Sendable {
    /// The newest presentation time observed.
    public private(set) var latest: MonotonicInstant?
    /// Its vblank sequence, when the source reports one.
    public private(set) var latestSequence: UInt64?
    /// The refresh the source advertised most recently (0: unknown).
    public private(set) var advertisedPeriod: Nanoseconds
    /// Presentations observed.
    public private(set) var presentationCount = 0

    private var intervals: RecentMedian
    private var depths: RecentMedian

    public init(advertisedPeriod: Nanoseconds = .zero) {
        self.advertisedPeriod = advertisedPeriod
        intervals = RecentMedian()
        depths = RecentMedian()
    }

    /// The refresh period: measured when possible, else advertised, else 60 Hz.
    public var period: Nanoseconds {
        if intervals.count >= 3 && intervals.median > 0 { return Nanoseconds(intervals.median) }
        if advertisedPeriod.value > 0 { return advertisedPeriod }
        return Nanoseconds(16_666_667)
    }

    /// Whether ``period`` comes from measurements.
    public var isPeriodMeasured: Bool { intervals.count >= 3 && intervals.median > 0 }

    /// The learned presentation depth in periods (see the type's notes); 1 until learned.
    public var depth: Int { depths.count == 0 ? 1 : Int(depths.median) }

    /// Records a presentation. Older-than-latest times (reordered feedback) only count for depth.
    public mutating func recordPresentation(at time: MonotonicInstant, sequence: UInt64? = nil,
                                            advertisedRefresh: Nanoseconds = .zero) {
        if advertisedRefresh.value > 0 { advertisedPeriod = advertisedRefresh }
        presentationCount += 1
        guard let previous = latest else {
            latest = time
            latestSequence = sequence
            return
        }
        guard time > previous else { return }
        let difference = time.nanoseconds.subtractingReportingOverflow(previous.nanoseconds)
        guard !difference.overflow else { return }
        let elapsed = difference.partialValue
        if let sequence, let previousSequence = latestSequence, sequence > previousSequence {
            let steps = sequence - previousSequence
            if steps <= 16 { intervals.append(elapsed / Int64(steps)) }
        } else if intervals.count < 3 || elapsed / 3 < intervals.median / 2 {
            // Without sequences, an interval well above the typical one spans missed refreshes:
            // it says nothing precise about the period.
            intervals.append(elapsed)
        }
        latest = time
        latestSequence = sequence
    }

    /// Records how a frame drawn when `knownAtDraw` was the newest presentation turned out.
    public mutating func recordOutcome(knownAtDraw: MonotonicInstant?, presentedAt: MonotonicInstant) {
        guard let knownAtDraw, presentedAt > knownAtDraw else { return }
        let p = period.value
        let elapsed = presentedAt.nanoseconds.subtractingReportingOverflow(knownAtDraw.nanoseconds)
        guard p > 0, !elapsed.overflow else { return }
        let periods = elapsed.partialValue / p + (elapsed.partialValue % p >= p - p / 2 ? 1 : 0)
        depths.append(min(max(periods, 1), 8))
    }

    /// When a frame prepared now is expected on screen.
    public func predictTarget(now: MonotonicInstant) -> MonotonicInstant {
        let p = period
        guard let latest else { return now + p }
        var target = latest + p * depth
        if target <= now {
            let behind = (now - target).value / p.value + 1
            target = target + Nanoseconds(behind &* p.value)
        }
        return target
    }

    /// The latest presentation at or before `now` that the rhythm implies (for sources that
    /// must report a timestamp when no new presentation arrived).
    public func extrapolatedPresentation(now: MonotonicInstant) -> MonotonicInstant? {
        guard let latest else { return nil }
        let p = period.value
        guard p > 0, now > latest else { return latest }
        return latest + Nanoseconds(((now - latest).value / p) * p)
    }
}

/// The last 31 values, with an allocation-free median (for sources that learn from recent frames).
public struct RecentMedian: Sendable {
    public static let capacity = 31
    private typealias Slots = (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                               Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                               Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                               Int64, Int64, Int64, Int64, Int64, Int64, Int64)
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
