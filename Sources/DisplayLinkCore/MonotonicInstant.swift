import Dispatch

/// A point in time on the library's one clock: Linux `CLOCK_MONOTONIC`, in exact nanoseconds.
///
/// Every timestamp the library hands out (`timestamp`, `targetTimestamp`, presentation times) is a
/// `MonotonicInstant`. Backends whose hardware or compositor reports another clock (weston presents
/// on `CLOCK_MONOTONIC_RAW`) convert into this one with ``ClockOffset`` before reporting.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's epoch (boot, for `CLOCK_MONOTONIC`).
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Seconds as a `Double`, like `CFTimeInterval` on Apple platforms.
    @inlinable public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static let zero = MonotonicInstant(nanoseconds: 0)

    /// The current time on `CLOCK_MONOTONIC`.
    ///
    /// On Linux, Dispatch's uptime clock *is* `CLOCK_MONOTONIC` (a test checks this against
    /// `clock_gettime`), so the core needs no C import to read it.
    @inlinable public static func now() -> MonotonicInstant {
        MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds))
    }

    @inlinable public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanoseconds < b.nanoseconds }
    // Arithmetic on times saturates at the ends of 64 bits: a time a compositor or kernel got
    // wrong (near either end) must neither trap nor wrap into a plausible time on the other side.
    @inlinable public static func + (a: MonotonicInstant, d: Nanoseconds) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: saturating(a.nanoseconds.addingReportingOverflow(d.value), d.value))
    }
    @inlinable public static func - (a: MonotonicInstant, d: Nanoseconds) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: saturating(a.nanoseconds.subtractingReportingOverflow(d.value), d.value == .min ? 1 : -d.value))
    }
    @inlinable public static func - (a: MonotonicInstant, b: MonotonicInstant) -> Nanoseconds {
        Nanoseconds(saturating(a.nanoseconds.subtractingReportingOverflow(b.nanoseconds), b.nanoseconds == .min ? 1 : -b.nanoseconds))
    }

    public var description: String { String(format6(seconds)) + " s" }
}

/// A signed span of time in exact nanoseconds.
public struct Nanoseconds: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var value: Int64
    @inlinable public init(_ value: Int64) { self.value = value }
    /// Rounds to the nearest nanosecond.
    @inlinable public init(seconds: Double) { self.value = Int64((seconds * 1e9).rounded()) }
    /// The period of a refresh rate, rounded to the nearest nanosecond.
    @inlinable public init(periodOfHertz hz: Double) { self.init(seconds: 1 / hz) }

    @inlinable public var seconds: Double { Double(value) / 1e9 }
    public static let zero = Nanoseconds(0)

    @inlinable public static func < (a: Nanoseconds, b: Nanoseconds) -> Bool { a.value < b.value }
    // Saturating, as times are (see ``MonotonicInstant``).
    @inlinable public static func + (a: Nanoseconds, b: Nanoseconds) -> Nanoseconds {
        Nanoseconds(saturating(a.value.addingReportingOverflow(b.value), b.value))
    }
    @inlinable public static func - (a: Nanoseconds, b: Nanoseconds) -> Nanoseconds {
        Nanoseconds(saturating(a.value.subtractingReportingOverflow(b.value), b.value == .min ? 1 : -b.value))
    }
    @inlinable public static func * (a: Nanoseconds, k: Int) -> Nanoseconds {
        let factor = Int64(clamping: k)
        let (product, overflow) = a.value.multipliedReportingOverflow(by: factor)
        return Nanoseconds(overflow ? ((a.value < 0) == (factor < 0) ? .max : .min) : product)
    }

    public var description: String { format6(seconds * 1000) + " ms" }
}

/// The result of an addition, or the end of 64 bits it went past: the sign of `direction` says
/// which (what was added, or the negation of what was subtracted).
@inlinable func saturating(_ result: (partialValue: Int64, overflow: Bool), _ direction: Int64) -> Int64 {
    guard result.overflow else { return result.partialValue }
    return direction > 0 ? .max : .min
}

/// The `CACurrentMediaTime()` of this library: now, in seconds, on `CLOCK_MONOTONIC`, the clock of
/// every `timestamp` and `targetTimestamp`. So `link.targetTimestamp - currentMediaTime()` is the
/// time left to prepare the frame.
@inlinable public func currentMediaTime() -> Double { MonotonicInstant.now().seconds }

@usableFromInline func format6(_ x: Double) -> String {
    // Fixed six decimals without Foundation. Values too large for six decimals in an Int64
    // (times a compositor or kernel reported wrongly, near the clock's ends) print as Swift does.
    guard x.isFinite, abs(x) < 1e12 else { return String(x) }
    let negative = x < 0
    let scaled = (abs(x) * 1_000_000).rounded()
    let whole = Int64(scaled / 1_000_000)
    let frac = Int64(scaled) - whole * 1_000_000
    var fracText = String(frac)
    while fracText.count < 6 { fracText = "0" + fracText }
    return (negative ? "-" : "") + String(whole) + "." + fracText
}
