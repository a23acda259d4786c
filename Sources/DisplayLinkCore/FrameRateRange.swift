/// A preferred callback rate, as `CAFrameRateRange`: the link fires on every k-th refresh, choosing
/// the achievable rate (refresh rate / k) nearest `preferred` among those inside
/// `minimum...maximum`. If none is inside, the one nearest the range wins.
///
/// `preferred == 0` means "as fast as the range allows".
public struct FrameRateRange: Sendable, Hashable {
    public var minimum: Double
    public var maximum: Double
    public var preferred: Double

    public init(minimum: Double, maximum: Double, preferred: Double? = nil) {
        self.minimum = minimum
        self.maximum = maximum
        self.preferred = preferred ?? maximum
    }

    /// No preference: the display's own rate.
    public static let `default` = FrameRateRange(minimum: 0, maximum: .infinity, preferred: 0)

    /// The longest frame interval ever chosen (slower than refresh/240 is not a display link).
    public static let maximumInterval = 240

    /// The number of refreshes per callback for a display with this refresh period.
    public func frameInterval(refreshPeriod: Nanoseconds) -> Int {
        guard refreshPeriod.value > 0 else { return 1 }
        let refresh = 1e9 / Double(refreshPeriod.value)
        let low = minimum.isFinite && minimum > 0 ? minimum : 0
        let high = maximum.isFinite && maximum > 0 ? max(maximum, low) : .infinity
        let goal = preferred > 0 ? preferred : (high.isFinite ? high : refresh)

        var best = 1
        var bestInRange = false
        var bestScore = Double.infinity
        var k = 1
        while k <= FrameRateRange.maximumInterval {
            let rate = refresh / Double(k)
            // A small tolerance so 144/2 = 72.000001 still counts as ≤ 72.
            let inRange = rate >= low * (1 - 1e-9) && rate <= high * (1 + 1e-9)
            let score = inRange ? abs(rate - goal) : min(abs(rate - low), abs(rate - high))
            if (inRange && !bestInRange) || (inRange == bestInRange && score < bestScore - 1e-9) {
                best = k
                bestInRange = inRange
                bestScore = score
            }
            // Rates only fall as k grows: once below the goal and not above the range, every
            // further rate is farther from the goal or outside the range.
            if rate < goal && rate <= high * (1 + 1e-9) { break }
            k += 1
        }
        return best
    }
}
