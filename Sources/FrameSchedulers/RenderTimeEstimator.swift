import DisplayLinkCore

/// The program's own render time, from the callback's start to the frame's submission, learned the
/// way mutter and KWin learn their compositing time: the estimate rises at once to a slower frame
/// and decays slowly after faster ones, so one slow frame is planned for at once and a run of
/// fast frames is believed only gradually. ``budget`` adds a margin for what the samples do not
/// show (scheduling jitter, a first-time shader compile).
///
/// Pure value type: no clock reads, no allocation.
public struct RenderTimeEstimator: Sendable, Equatable {
    /// Each faster frame takes the estimate this fraction of the way down to it (1/2^decayShift).
    public static let decayShift = 4
    /// Added to the estimate in ``budget``.
    public var margin: Nanoseconds
    /// The estimate without the margin (nil: no frame measured yet).
    public private(set) var estimate: Nanoseconds?

    public init(margin: Nanoseconds = Nanoseconds(1_000_000)) {
        self.margin = margin
    }

    /// A frame took `renderTime` from its callback's start to its submission (negative times,
    /// from clocks that disagree, count as zero).
    public mutating func record(_ renderTime: Nanoseconds) {
        let sample = max(0, renderTime.value)
        guard let current = estimate?.value, sample < current else {
            estimate = Nanoseconds(sample)
            return
        }
        // Down by a fraction of the difference, at least 1 ns, never below the sample.
        let step = max(1, (current - sample) >> RenderTimeEstimator.decayShift)
        estimate = Nanoseconds(max(sample, current - step))
    }

    /// The time to allow for the next frame: the estimate plus the margin (nil: nothing measured).
    public var budget: Nanoseconds? { estimate.map { Nanoseconds($0.value &+ margin.value) } }

    /// The estimate (0 before any sample) kept within `floor`…`ceiling`, for a lateness allowed for
    /// in planning: a lateness above the ceiling is a stall, and allowing for it in full would
    /// stop the planning whose samples let it decay. `floor` above `ceiling` gives `ceiling`.
    public func allowance(atLeast floor: Nanoseconds = .zero, atMost ceiling: Nanoseconds) -> Nanoseconds {
        Nanoseconds(min(max(estimate?.value ?? 0, floor.value), ceiling.value))
    }
}
