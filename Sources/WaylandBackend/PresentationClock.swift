import DisplayLinkCore
import Glibc

/// Reads Linux clocks for converting presentation times into `CLOCK_MONOTONIC`.
enum PresentationClock {
    static func read(_ domain: ClockDomain) -> Int64 {
        var ts = timespec()
        clock_gettime(clockid_t(Int32(bitPattern: domain.clockID)), &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }

    /// The offset that turns `domain` times into `CLOCK_MONOTONIC` times.
    static func offset(for domain: ClockDomain) -> ClockOffset {
        if domain == .monotonic {
            return ClockOffset(nanoseconds: 0, uncertainty: 0, measuredAt: MonotonicInstant.now())
        }
        return ClockOffset.measure(monotonic: { read(.monotonic) }, source: { read(domain) })
    }
}
