import DisplayLinkCore
import PropertyBased
import SurfaceInput
import Testing

@Suite("input times on the link's clock, and key repeat")
struct InputTimingTests {
    static let ms: Int64 = 1_000_000

    @Test("Wayland milliseconds: the millisecond the event happened in, across the 32-bit wrap; another base is found and kept")
    func waylandMilliseconds() {
        var clock = WaylandInputClock()
        // Read at 5,000.0042 s; stamped 4,999,990 ms: 10 ms earlier, in whole milliseconds.
        let read = MonotonicInstant(nanoseconds: 5_000_004_200_000)
        #expect(
            clock.time(milliseconds: 4_999_990, receivedAt: read)
                == InputTime(time: MonotonicInstant(nanoseconds: 4_999_990 * Self.ms), source: .milliseconds))
        // Just after the counter wrapped: read at 2^32 + 3 ms, stamped 2^32 − 2 (5 ms earlier).
        let wrapped = MonotonicInstant(nanoseconds: (Int64(1) << 32 + 3) * Self.ms)
        #expect(
            clock.time(milliseconds: UInt32.max - 1, receivedAt: wrapped).time
                == MonotonicInstant(nanoseconds: ((Int64(1) << 32) - 2) * Self.ms))
        // A time after the read: not the monotonic base; from then on the read time.
        let later = clock.time(milliseconds: 5_000_100, receivedAt: read)
        #expect(later == InputTime(time: read, source: .received))
        #expect(clock.isOtherBase)
        #expect(clock.time(milliseconds: 4_999_990, receivedAt: read).source == .received)
        // Older than the maximum age: another base too.
        var old = WaylandInputClock()
        #expect(old.time(milliseconds: 4_900_000, receivedAt: read).source == .received)
    }

    @Test("Wayland milliseconds, any event up to 10 s old: within a millisecond before the true time, never after the read")
    func waylandMillisecondsProperty() async {
        await propertyCheck(count: 1000, input: Gen.int64(in: 0...(1 << 45)), Gen.int64(in: 0...10_000_000_000)) { happened, age in
            var clock = WaylandInputClock()
            let read = MonotonicInstant(nanoseconds: happened + age)
            let time = clock.time(milliseconds: UInt32(truncatingIfNeeded: happened / 1_000_000), receivedAt: read)
            #expect(time.source == .milliseconds)
            #expect(time.time.nanoseconds <= happened && happened - time.time.nanoseconds < 1_000_000)
            #expect(time.time <= read)
        }
    }

    @Test("precise timestamps: seconds in two halves and nanoseconds")
    func precise() {
        #expect(
            WaylandInputClock.precise(secondsHigh: 0, secondsLow: 12, nanoseconds: 345_678_901)
                == InputTime(time: MonotonicInstant(nanoseconds: 12_345_678_901), source: .precise))
        #expect(
            WaylandInputClock.precise(secondsHigh: 1, secondsLow: 0, nanoseconds: 0).time.nanoseconds == (Int64(1) << 32) * 1_000_000_000)
    }

    @Test("key repeat: after the delay, then at the rate from the press (no drift); the newest key repeats; release and focus stop it")
    func repeats() {
        var repeater = KeyRepeater(rate: 3, delay: .init(500 * Self.ms))
        let t0 = MonotonicInstant(nanoseconds: 1_000 * Self.ms)
        #expect(repeater.nextRepeat == nil)
        repeater.pressed(38, at: t0)
        var seen: [(UInt32, Int64)] = []
        repeater.repeats(until: t0 + Nanoseconds(499 * Self.ms)) { seen.append(($0, $1.nanoseconds)) }
        #expect(seen.isEmpty)
        repeater.repeats(until: t0 + Nanoseconds(1_200 * Self.ms)) { seen.append(($0, $1.nanoseconds)) }
        // 500 ms, then every third of a second: 833.333333 ms, 1,166.666666 ms.
        #expect(seen.map(\.0) == [38, 38, 38])
        #expect(seen.map(\.1) == [1_500_000_000, 1_833_333_333, 2_166_666_666])
        // A second key takes over; releasing the first changes nothing; releasing it stops.
        repeater.pressed(40, at: t0 + Nanoseconds(1_300 * Self.ms))
        repeater.released(38)
        #expect(repeater.nextRepeat == t0 + Nanoseconds(1_800 * Self.ms))
        repeater.released(40)
        #expect(repeater.nextRepeat == nil)
        repeater.pressed(40, at: t0)
        repeater.focusLost()
        #expect(repeater.nextRepeat == nil)
        // Rate 0: no repeat.
        var none = KeyRepeater(rate: 0, delay: .zero)
        none.pressed(1, at: t0)
        #expect(none.nextRepeat == nil)
    }

    @Test("key repeat, any rate and delay: repeat k is exactly press + delay + floor(k s / rate), delivered in order, none early")
    func repeatProperty() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...100), Gen.int64(in: 0...2_000_000_000), Gen.int64(in: 0...5_000_000_000)) {
            rate, delay, span in
            var repeater = KeyRepeater(rate: rate, delay: Nanoseconds(delay))
            let t0 = MonotonicInstant(nanoseconds: 7_000_000_000)
            repeater.pressed(9, at: t0)
            var times: [Int64] = []
            repeater.repeats(until: t0 + Nanoseconds(span)) { _, time in times.append(time.nanoseconds) }
            for (k, time) in times.enumerated() {
                #expect(time == t0.nanoseconds + delay + Int64(k) * 1_000_000_000 / Int64(rate))
                #expect(time <= t0.nanoseconds + span)
            }
            if let next = repeater.nextRepeat { #expect(next.nanoseconds > t0.nanoseconds + span) }
        }
    }
}
