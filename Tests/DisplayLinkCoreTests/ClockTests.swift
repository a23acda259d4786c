import DisplayLinkCore
import Glibc
import Testing

@Suite("Clocks")
struct ClockTests {
    @Test("conversion between two clocks with a known offset is exact")
    func knownOffset() {
        // A virtual time that advances 10 ns per read; the source clock is 5 s 123 ns behind.
        final class Ticker: @unchecked Sendable { var t: Int64 = 1_000_000_000 }
        let ticker = Ticker()
        let offset = ClockOffset.measure(
            samples: 5,
            monotonic: {
                ticker.t += 10; return ticker.t
            },
            source: {
                ticker.t += 10; return ticker.t - 5_000_000_123
            }
        )
        #expect(offset.nanoseconds == 5_000_000_123)
        #expect(offset.uncertainty == 10)
        #expect(offset.monotonic(fromSource: 7_000_000_000).nanoseconds == 12_000_000_123)
    }

    @Test("source times at the ends of 64 bits saturate instead of wrapping; seconds and nanoseconds combine exactly below them")
    func saturating() {
        let ahead = ClockOffset(nanoseconds: 5_000, uncertainty: 0, measuredAt: .zero)
        let behind = ClockOffset(nanoseconds: -5_000, uncertainty: 0, measuredAt: .zero)
        #expect(ahead.monotonic(fromSource: .max - 1).nanoseconds == .max)
        #expect(behind.monotonic(fromSource: .min + 1).nanoseconds == .min)
        #expect(behind.monotonic(fromSource: .max).nanoseconds == .max - 5_000)
        #expect(ahead.monotonic(fromSeconds: 12, nanoseconds: 345).nanoseconds == 12_000_005_345)
        // 2⁶³ ns is 9,223,372,036.85 s: one second more cannot be held.
        #expect(behind.monotonic(fromSeconds: 9_223_372_037, nanoseconds: 0).nanoseconds == .max - 5_000)
        #expect(behind.monotonic(fromSeconds: .max, nanoseconds: .max).nanoseconds == .max - 5_000)
        #expect(ahead.monotonic(fromSeconds: 9_223_372_036, nanoseconds: 900_000_000).nanoseconds == .max)
        // Nanoseconds of a second or more (the protocol says below 10⁹) count as they are.
        #expect(ahead.monotonic(fromSeconds: 1, nanoseconds: 2_000_000_000).nanoseconds == 3_000_005_000)
    }

    @Test("the narrowest bracket wins when reads are slow")
    func narrowestBracket() {
        final class Ticker: @unchecked Sendable { var t: Int64 = 0; var reads = 0 }
        let ticker = Ticker()
        // The 3rd sample is preempted between its reads (a 1 ms gap): it must not be used.
        let offset = ClockOffset.measure(
            samples: 4,
            monotonic: {
                ticker.reads += 1; ticker.t += (ticker.reads == 6 ? 1_000_000 : 100); return ticker.t
            },
            source: {
                ticker.t += 100; return ticker.t + 42
            }
        )
        #expect(offset.nanoseconds == -42)
        #expect(offset.uncertainty == 100)
    }

    @Test("clock ids map to the wp_presentation numbering")
    func clockIDs() {
        #expect(ClockDomain(clockID: UInt32(CLOCK_MONOTONIC)) == .monotonic)
        #expect(ClockDomain(clockID: UInt32(CLOCK_MONOTONIC_RAW)) == .monotonicRaw)
        #expect(ClockDomain(clockID: UInt32(CLOCK_REALTIME)) == .realtime)
        #expect(ClockDomain(clockID: UInt32(CLOCK_BOOTTIME)) == .boottime)
        #expect(ClockDomain.monotonicRaw.clockID == 4)
    }

    @Test("MonotonicInstant.now() and currentMediaTime() read CLOCK_MONOTONIC")
    func nowIsClockMonotonic() {
        func read(_ id: clockid_t) -> Int64 {
            var ts = timespec()
            clock_gettime(id, &ts)
            return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        }
        // Bracket our reading between two CLOCK_MONOTONIC readings: it must fall inside.
        let before = read(CLOCK_MONOTONIC)
        let ours = MonotonicInstant.now().nanoseconds
        let after = read(CLOCK_MONOTONIC)
        #expect(before <= ours && ours <= after)
        let media = currentMediaTime()
        let after2 = read(CLOCK_MONOTONIC)
        #expect(Double(before) / 1e9 <= media && media <= Double(after2) / 1e9)
    }

    @Test("nanosecond and second views agree")
    func units() {
        #expect(Nanoseconds(periodOfHertz: 60).value == 16_666_667)
        #expect(Nanoseconds(periodOfHertz: 144).value == 6_944_444)
        #expect(MonotonicInstant(nanoseconds: 1_500_000_000).seconds == 1.5)
        #expect((MonotonicInstant(nanoseconds: 10) - MonotonicInstant(nanoseconds: 4)).value == 6)
    }
}
