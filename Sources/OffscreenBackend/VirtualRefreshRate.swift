import DisplayLinkCore

/// The refresh rate of a display on virtual time, exact: refresh `n` comes `n × period` after the
/// first, rounded down to whole nanoseconds per refresh and never accumulated.
///
/// The period is a fraction of nanoseconds in lowest terms (60 Hz: 50,000,000/3 ns), so no rate
/// drifts: refresh 2n at 60 Hz is refresh n at 30 Hz to the nanosecond, and `.hertz(50)` equals
/// `.period(Nanoseconds(20_000_000))`. A rate without a positive period (`.hertz(0)`) is kept as
/// given; ``isValid`` is false for it and opening a display with it fails.
public struct VirtualRefreshRate: Sendable, Hashable, CustomStringConvertible {
    /// The period's numerator: the period is ``periodNumerator`` / ``periodDenominator`` nanoseconds.
    public let periodNumerator: Int64
    /// The period's denominator (1 for a period of whole nanoseconds).
    public let periodDenominator: Int64

    /// A period of `numerator / denominator` nanoseconds, reduced to lowest terms when positive.
    public init(periodNumerator numerator: Int64, denominator: Int64) {
        guard numerator > 0, denominator > 0 else {
            (periodNumerator, periodDenominator) = (numerator, denominator)
            return
        }
        let divisor = VirtualRefreshRate.greatestCommonDivisor(numerator, denominator)
        (periodNumerator, periodDenominator) = (numerator / divisor, denominator / divisor)
    }

    /// `hz` refreshes a second (period 1,000,000,000 / `hz` ns).
    public static func hertz(_ hz: Int) -> VirtualRefreshRate {
        VirtualRefreshRate(periodNumerator: 1_000_000_000, denominator: Int64(hz))
    }

    /// `cycles` refreshes every `seconds` seconds: NTSC's 59.94 Hz is `.hertz(60_000, per: 1001)`.
    public static func hertz(_ cycles: Int, per seconds: Int) -> VirtualRefreshRate {
        let (numerator, overflow) = Int64(1_000_000_000).multipliedReportingOverflow(by: Int64(seconds))
        return VirtualRefreshRate(periodNumerator: overflow ? -1 : numerator, denominator: Int64(cycles))
    }

    /// A period of whole nanoseconds.
    public static func period(_ period: Nanoseconds) -> VirtualRefreshRate {
        VirtualRefreshRate(periodNumerator: period.value, denominator: 1)
    }

    /// Whether the period is positive (a display can run at this rate).
    public var isValid: Bool { periodNumerator > 0 && periodDenominator > 0 }

    /// The period rounded to the nearest nanosecond (what links see as `duration`).
    public var period: Nanoseconds {
        guard isValid else { return .zero }
        return Nanoseconds((periodNumerator + periodDenominator / 2) / periodDenominator)
    }

    /// Refreshes per second.
    public var hertz: Double {
        guard isValid else { return 0 }
        return 1e9 * Double(periodDenominator) / Double(periodNumerator)
    }

    /// How long after the first refresh refresh `n` comes: ⌊n × period⌋ nanoseconds, exact (the
    /// product is taken in 128 bits), `Int64.max` where it does not fit; zero for an invalid rate.
    public func offset(ofRefresh n: UInt64) -> Nanoseconds {
        guard isValid else { return .zero }
        let product = n.multipliedFullWidth(by: UInt64(periodNumerator))
        let divisor = UInt64(periodDenominator)
        guard product.high < divisor else { return Nanoseconds(.max) }
        let quotient = divisor.dividingFullWidth(product).quotient
        return Nanoseconds(quotient > UInt64(Int64.max) ? .max : Int64(quotient))
    }

    /// `60 Hz` for a whole number of hertz, `60000/1001 Hz` for a fraction of hertz with a small
    /// denominator, else the period (`16666667 ns period`).
    public var description: String {
        guard isValid else { return "invalid rate (period \(periodNumerator)/\(periodDenominator) ns)" }
        let (perSecond, overflow) = Int64(1_000_000_000).multipliedReportingOverflow(by: periodDenominator)
        if !overflow {
            let divisor = VirtualRefreshRate.greatestCommonDivisor(perSecond, periodNumerator)
            let (cycles, seconds) = (perSecond / divisor, periodNumerator / divisor)
            if seconds == 1 { return "\(cycles) Hz" }
            if seconds <= 1_000_000 { return "\(cycles)/\(seconds) Hz" }
        }
        return periodDenominator == 1 ? "\(periodNumerator) ns period" : "\(periodNumerator)/\(periodDenominator) ns period"
    }

    private static func greatestCommonDivisor(_ a: Int64, _ b: Int64) -> Int64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
