import DisplayLinkCore

/// Key repeat as a Wayland client or a console program does it itself: the newest key pressed
/// repeats after `delay`, then `rate` times a second, until it is released (or focus is lost).
/// Repeat k of a press at `t` is at `t + delay + ⌊k·1 s / rate⌋`, computed from the press each
/// time, so no error accumulates.
///
/// Pure value type: no clock reads, no allocation.
public struct KeyRepeater: Sendable {
    /// Repeats per second (0: keys do not repeat), as `wl_keyboard.repeat_info` says.
    public private(set) var rate: Int
    /// From the press to the first repeat.
    public private(set) var delay: Nanoseconds
    /// The key repeating (its code), when it was pressed, and the repeats delivered.
    public private(set) var held: (key: UInt32, pressedAt: MonotonicInstant, repeats: Int64)?

    /// xkbcommon's and most compositors' default: 25 a second after 600 ms.
    public init(rate: Int = 25, delay: Nanoseconds = Nanoseconds(600_000_000)) {
        self.rate = max(0, rate)
        self.delay = Nanoseconds(max(0, delay.value))
    }

    /// The compositor's repeat settings changed (a press held now goes on at the new ones).
    public mutating func setRepeat(rate: Int, delay: Nanoseconds) {
        self.rate = max(0, rate)
        self.delay = Nanoseconds(max(0, delay.value))
    }

    /// `key` went down at `time`: it is the one that repeats (a key held before stops).
    public mutating func pressed(_ key: UInt32, at time: MonotonicInstant) {
        held = (key, time, 0)
    }

    /// `key` went up: it stops repeating (another key held stays quiet, as on X and Wayland).
    public mutating func released(_ key: UInt32) {
        if held?.key == key { held = nil }
    }

    /// Focus left the surface: nothing repeats.
    public mutating func focusLost() { held = nil }

    /// When the next repeat is due (nil: none).
    public var nextRepeat: MonotonicInstant? {
        guard let held, rate > 0 else { return nil }
        return time(ofRepeat: held.repeats, pressedAt: held.pressedAt)
    }

    /// Calls `body` with the key and time of each repeat due by `now`, in order.
    public mutating func repeats(until now: MonotonicInstant, _ body: (UInt32, MonotonicInstant) -> Void) {
        while let due = nextRepeat, due <= now, let current = held {
            held = (current.key, current.pressedAt, current.repeats + 1)
            body(current.key, due)
        }
    }

    private func time(ofRepeat k: Int64, pressedAt: MonotonicInstant) -> MonotonicInstant {
        let (scaled, overflow) = k.multipliedReportingOverflow(by: 1_000_000_000)
        let offset = overflow ? Int64.max / 2 : scaled / Int64(rate)
        return MonotonicInstant(nanoseconds: pressedAt.nanoseconds &+ delay.value &+ offset)
    }
}
