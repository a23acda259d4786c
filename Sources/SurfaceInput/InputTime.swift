import DisplayLinkCore

/// When an input event happened, on the display link's clock (`CLOCK_MONOTONIC`, the timebase of
/// `timestamp` and `targetTimestamp`), and where that time came from.
public struct InputTime: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable, CustomStringConvertible {
        /// Microseconds or better from the compositor (`zwp_input_timestamps_v1`) or the kernel
        /// (evdev through libinput).
        case precise
        /// The protocol's 32-bit milliseconds, which the compositor takes from `CLOCK_MONOTONIC`:
        /// the millisecond the event happened in.
        case milliseconds
        /// When the client read the event: the compositor's milliseconds are on another base.
        case received

        public var description: String { rawValue }
    }

    public var time: MonotonicInstant
    public var source: Source

    public init(time: MonotonicInstant, source: Source) {
        self.time = time
        self.source = source
    }
}

/// Turns Wayland's event times (32-bit milliseconds on an unspecified base, wrapping every 49.7
/// days) into instants on `CLOCK_MONOTONIC`. Compositors in practice use the monotonic clock;
/// that is checked against when each event was read: a time after it, or more than
/// ``maximumAge`` before it, means another base, and from then on the read time stands in
/// (`InputTime.Source.received`), so one surface never mixes the two.
///
/// Pure value type: no clock reads, no allocation.
public struct WaylandInputClock: Sendable {
    /// Events read this long after they happened still count as on the monotonic base.
    public static let maximumAge = Nanoseconds(10_000_000_000)
    /// Whether the compositor's milliseconds turned out not to be monotonic.
    public private(set) var isOtherBase = false

    public init() {}

    /// The instant of an event stamped `milliseconds` and read at `receivedAt`.
    public mutating func time(milliseconds: UInt32, receivedAt: MonotonicInstant) -> InputTime {
        guard !isOtherBase, receivedAt.nanoseconds >= 0 else { return InputTime(time: receivedAt, source: .received) }
        let receivedMilliseconds = receivedAt.nanoseconds / 1_000_000
        // How long before the read the event happened, across a wrap of the 32-bit counter.
        let age = Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: receivedMilliseconds) &- milliseconds))
        guard age >= 0, age * 1_000_000 <= WaylandInputClock.maximumAge.value else {
            isOtherBase = true
            return InputTime(time: receivedAt, source: .received)
        }
        return InputTime(time: MonotonicInstant(nanoseconds: (receivedMilliseconds - age) * 1_000_000), source: .milliseconds)
    }

    /// The instant `zwp_input_timestamps_v1.timestamp` gives (seconds in two halves, nanoseconds).
    public static func precise(secondsHigh: UInt32, secondsLow: UInt32, nanoseconds: UInt32) -> InputTime {
        let seconds = Int64(secondsHigh) << 32 | Int64(secondsLow)
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let time = overflow ? Int64.max : whole &+ Int64(min(nanoseconds, 999_999_999))
        return InputTime(time: MonotonicInstant(nanoseconds: time), source: .precise)
    }
}
