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

    /// How far a display's rate may lie outside the range and still count as in it, and how close
    /// two rates' distances to `preferred` count as a tie (the faster wins), relative: 0.5 %. A
    /// 120 Hz mode's period, 8,333,333 ns, is 120.000005 Hz, and modes are 59.94 or 60.004 Hz
    /// where a range says 60; on Wayland the period is measured and moves by a few ns from frame
    /// to frame. Without it a range's own maximum would be excluded (half rate), and a tie would
    /// flip between two intervals with the measurement's noise.
    public static let rateTolerance = 0.005

    /// The longest frame interval ever chosen (slower than refresh/240 is not a display link).
    public static let maximumInterval = 240

    /// The number of refreshes per callback for a display with this refresh period.
    public func frameInterval(refreshPeriod: Nanoseconds) -> Int {
        guard refreshPeriod.value > 0 else { return 1 }
        let refresh = 1e9 / Double(refreshPeriod.value)
        let low = minimum.isFinite && minimum > 0 ? minimum : 0
        let high = maximum.isFinite && maximum > 0 ? max(maximum, low) : .infinity
        let goal = preferred > 0 ? preferred : (high.isFinite ? high : refresh)

        let tolerance = FrameRateRange.rateTolerance
        let ceiling = high * (1 + tolerance)
        let tie = (goal.isFinite ? goal : refresh) * tolerance
        var best = 1
        var bestInRange = false
        var bestScore = Double.infinity
        var k = 1
        while k <= FrameRateRange.maximumInterval {
            let rate = refresh / Double(k)
            let inRange = rate >= low * (1 - tolerance) && rate <= ceiling
            let score = inRange ? abs(rate - goal) : min(abs(rate - low), abs(rate - high))
            if (inRange && !bestInRange) || (inRange == bestInRange && score < bestScore - tie) {
                best = k
                bestInRange = inRange
                bestScore = score
            }
            // Rates only fall as k grows: once below the goal and not above the range, every
            // further rate is farther from the goal or outside the range.
            if rate < goal && rate <= ceiling { break }
            k += 1
        }
        return best
    }
}
