/// The clocks a frame source may report time on, with their Linux `clockid_t` numbers
/// (`wp_presentation.clock_id` sends exactly these numbers).
public enum ClockDomain: Hashable, Sendable, CustomStringConvertible {
    case realtime
    case monotonic
    case monotonicRaw
    case boottime
    case other(clockID: UInt32)

    public init(clockID: UInt32) {
        switch clockID {
        case 0: self = .realtime
        case 1: self = .monotonic
        case 4: self = .monotonicRaw
        case 7: self = .boottime
        default: self = .other(clockID: clockID)
        }
    }

    public var clockID: UInt32 {
        switch self {
        case .realtime: 0
        case .monotonic: 1
        case .monotonicRaw: 4
        case .boottime: 7
        case .other(let id): id
        }
    }

    public var description: String {
        switch self {
        case .realtime: "CLOCK_REALTIME"
        case .monotonic: "CLOCK_MONOTONIC"
        case .monotonicRaw: "CLOCK_MONOTONIC_RAW"
        case .boottime: "CLOCK_BOOTTIME"
        case .other(let id): "clock \(id)"
        }
    }
}

/// The offset between a source clock and `CLOCK_MONOTONIC`, measured by reading both.
///
/// Measuring reads the target clock, the source clock, the target clock again, several times, and
/// keeps the reading with the narrowest bracket: the source reading is assumed to sit in the middle
/// of its bracket, so the error is at most half that bracket (``uncertainty``). Two clocks that
/// tick at different rates (`CLOCK_MONOTONIC` is slewed by NTP, `CLOCK_MONOTONIC_RAW` is not) drift
/// apart by tens of milliseconds per hour of uptime, so a backend re-measures from time to time
/// (see ``isStale(at:maxAge:)``).
public struct ClockOffset: Sendable, Hashable {
    /// Add this to a source-clock time to get the `CLOCK_MONOTONIC` time.
    public var nanoseconds: Int64
    /// Half the narrowest bracket seen while measuring.
    public var uncertainty: Int64
    /// When (on `CLOCK_MONOTONIC`) it was measured.
    public var measuredAt: MonotonicInstant

    public static let identity = ClockOffset(nanoseconds: 0, uncertainty: 0, measuredAt: .zero)

    public init(nanoseconds: Int64, uncertainty: Int64, measuredAt: MonotonicInstant) {
        self.nanoseconds = nanoseconds
        self.uncertainty = uncertainty
        self.measuredAt = measuredAt
    }

    /// Measures the offset of `source` from `monotonic` (both reading nanoseconds).
    public static func measure(
        samples: Int = 7,
        monotonic: () -> Int64,
        source: () -> Int64
    ) -> ClockOffset {
        var best = ClockOffset(nanoseconds: 0, uncertainty: .max, measuredAt: .zero)
        for _ in 0..<max(1, samples) {
            let before = monotonic()
            let s = source()
            let after = monotonic()
            let bracket = after &- before
            guard bracket >= 0 else { continue }
            let half = bracket / 2
            if half < best.uncertainty {
                best = ClockOffset(
                    nanoseconds: (before &+ half) &- s, uncertainty: half,
                    measuredAt: MonotonicInstant(nanoseconds: after))
            }
        }
        return best
    }

    /// A source-clock time, in nanoseconds, as a `CLOCK_MONOTONIC` instant; a time the offset
    /// would carry past either end of 64 bits stays at that end (it is implausible either way,
    /// and a wrapped one would look like a plausible time far in the past).
    @inlinable public func monotonic(fromSource nanoseconds: Int64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds) + Nanoseconds(self.nanoseconds)
    }

    /// A source-clock time as a `timespec`-like pair (Wayland's `presented` carries 64-bit seconds
    /// and 32-bit nanoseconds, neither checked by libwayland) as a `CLOCK_MONOTONIC` instant:
    /// seconds past what 64-bit nanoseconds hold give `.max`, and nanoseconds of a second or more
    /// count as what they say.
    @inlinable public func monotonic(fromSeconds seconds: UInt64, nanoseconds: UInt32) -> MonotonicInstant {
        let (whole, overflow) = Int64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carried) = whole.addingReportingOverflow(Int64(nanoseconds))
        return monotonic(fromSource: overflow || carried ? .max : total)
    }

    /// Whether a measurement this old should be redone (default: after 10 s; NTP slew between two
    /// clocks is at most 500 ppm, so 10 s bounds the drift at 5 ms in the worst case and ~0.1 ms
    /// for the usual tens of ppm).
    public func isStale(at now: MonotonicInstant, maxAge: Nanoseconds = Nanoseconds(10_000_000_000)) -> Bool {
        now - measuredAt > maxAge
    }
}
