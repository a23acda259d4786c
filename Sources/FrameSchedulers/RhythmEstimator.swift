import DisplayLinkCore

/// A display's rhythm as a Wayland compositor shows it, learned from presentations: the period,
/// the phase (the newest presentation), the presentation depth, and the target a frame drawn now
/// is predicted for. One estimator, used by ``WaylandRefreshScheduler``; its rules are described
/// there (start-up convergence, accepted intervals, measuring afresh, depth).
///
/// Pure value type: no clock reads, no allocation after init.
public struct RhythmEstimator: Sendable {
    /// Periods below this (measured from bogus presentation times) are not believed.
    public static let minimumPeriod = Nanoseconds(500_000)
    /// Gaps between presented refreshes longer than this are not counted (a stall, not skips).
    static let maximumCountedGap: UInt64 = 16

    /// The newest presentation, its sequence and the advertised period.
    public private(set) var timeline: PresentationTimeline
    /// Whether the advertised period is no reference (a feedback reported `refresh` 0).
    public private(set) var isAdvertisedPeriodUnreliable = false
    private var intervals = RecentMedian()
    private var depths = RecentMedian()
    private var rejectedIntervals = 0
    /// The newest presentation learned from, its `seq`, and the refresh whose frame it showed
    /// (nil for a callback arrival standing in for a presentation), for intervals.
    private var previousPresentation: (time: MonotonicInstant, sequence: UInt64?, refreshIndex: UInt64?)?
    /// The interval between the last two frame callbacks, when it can be a period.
    private var callbackInterval: Int64?

    /// Starts with nothing learned; `advertisedPeriod` 0: unknown.
    public init(advertisedPeriod: Nanoseconds = .zero) {
        timeline = PresentationTimeline(advertisedPeriod: advertisedPeriod.value > 0 ? advertisedPeriod : .zero)
    }

    /// The period: the median of the measured presentation intervals, else the last frame-callback
    /// interval, else the advertised period, else 60 Hz.
    public var period: Nanoseconds {
        let minimum = RhythmEstimator.minimumPeriod.value
        if intervals.count > 0 && intervals.median >= minimum { return Nanoseconds(intervals.median) }
        if let callbackInterval, callbackInterval >= minimum { return Nanoseconds(callbackInterval) }
        if timeline.advertisedPeriod.value >= minimum { return timeline.advertisedPeriod }
        return Nanoseconds(16_666_667)
    }

    /// Whether ``period`` rests on at least three measured presentation intervals.
    public var isPeriodMeasured: Bool { intervals.count >= 3 }
    /// Presentation intervals accepted as periods.
    public var measuredIntervalCount: Int { intervals.count }
    /// The presentation depth learned from presented frames (nil: none presented yet).
    public var learnedDepth: Int? { depths.count > 0 ? Int(depths.median) : nil }

    /// A presentation at `time` (already believed plausible), with the compositor's `seq` (nil:
    /// unknown) and advertised refresh (0: unknown or variable, which makes the advertised period
    /// no reference from now on).
    mutating func recordPresentation(at time: MonotonicInstant, sequence: UInt64?, advertisedRefresh: Nanoseconds) {
        timeline.recordPresentation(
            at: time, sequence: sequence,
            advertisedRefresh: advertisedRefresh.value > 0 ? advertisedRefresh : .zero)
    }

    /// A feedback reported this advertised refresh (0: variable refresh).
    mutating func advertisedRefreshReported(_ refresh: Nanoseconds) {
        if refresh.value <= 0 { isAdvertisedPeriodUnreliable = true }
    }

    /// The interval between two frame callbacks, a stand-in for the period until presentation
    /// intervals are measured (when it passes the early bounds).
    mutating func callbackIntervalObserved(_ elapsed: Int64) {
        if isAcceptableEarlyInterval(elapsed) { callbackInterval = elapsed }
    }

    /// Whether an interval can be a period while fewer than three are known: within 0.75 to 2.25
    /// advertised periods (no upper bound when the feedback said `refresh` 0: variable refresh).
    func isAcceptableEarlyInterval(_ elapsed: Int64) -> Bool {
        guard elapsed >= RhythmEstimator.minimumPeriod.value else { return false }
        let advertised = timeline.advertisedPeriod.value
        guard advertised >= RhythmEstimator.minimumPeriod.value else { return true }
        // With variable refresh the advertised period is the fastest rate's: still a lower bound.
        guard elapsed >= advertised - advertised / 4 else { return false }
        return isAdvertisedPeriodUnreliable || elapsed <= advertised * 2 + advertised / 4
    }

    /// Learns the interval from the previous presentation; returns false when it was rejected
    /// (off the rhythm), true otherwise (also for the first presentation, or a reordered one).
    ///
    /// The span between two presentations is divided by the refreshes it covers: each refresh
    /// between the two presented ones (a link at a lower rate skipped it, and its empty commit's
    /// feedback was discarded) came from one frame callback, so one vblank, and the presented
    /// refresh counts its stride. mutter presents a 30 Hz link's frames 2 vblanks apart on a
    /// 60 Hz output; taking that span for a period made the period swing between 1 and 2 vblanks.
    /// The compositor's `seq` step is used instead when it counts at least as many vblanks as
    /// that (a vertical retrace counter); a smaller step (mutter 48 headless counts its own
    /// frames, not vblanks) says the `seq` is no such counter, and it is ignored. Either way the
    /// interval per refresh must pass the same bounds as one measured by time.
    @discardableResult
    mutating func learnInterval(
        to time: MonotonicInstant, sequence: UInt64?, refreshIndex: UInt64?,
        stride: Int = 1
    ) -> Bool {
        defer {
            if previousPresentation.map({ time > $0.time }) ?? true {
                previousPresentation = (time, sequence, refreshIndex)
            }
        }
        guard let previous = previousPresentation, time > previous.time else { return true }
        let (span, overflow) = time.nanoseconds.subtractingReportingOverflow(previous.time.nanoseconds)
        guard !overflow else { return false }
        // Refreshes covered: the skipped ones between (one vblank each) and this one's stride.
        var refreshes = Int64(max(1, stride))
        if let refreshIndex, let before = previous.refreshIndex, refreshIndex > before,
            refreshIndex &- before <= RhythmEstimator.maximumCountedGap
        {
            refreshes += Int64(refreshIndex &- before) - 1
        }
        var elapsed = span / refreshes
        if let sequence, let before = previous.sequence, sequence > before, sequence &- before <= 16,
            Int64(sequence &- before) >= refreshes
        {
            // The compositor counted the vblanks: the interval per vblank.
            elapsed = span / Int64(sequence &- before)
        }
        let accepted: Bool
        if intervals.count < 3 {
            accepted = isAcceptableEarlyInterval(elapsed)
        } else {
            let median = intervals.median
            accepted = elapsed >= median - median / 4 && elapsed < median + median / 2
        }
        if accepted {
            intervals.append(elapsed)
            rejectedIntervals = 0
        } else if !isWholeMultipleOfReliablePeriod(elapsed) {
            rejectedIntervals += 1
            if rejectedIntervals >= 8 && elapsed >= RhythmEstimator.minimumPeriod.value {
                // The display's rhythm really changed: measure afresh from here.
                intervals = RecentMedian()
                depths = RecentMedian()
                intervals.append(elapsed)
                rejectedIntervals = 0
            }
        }
        return accepted
    }

    /// Whether `elapsed` is 2 or more whole periods (within an eighth of one) of an advertised
    /// period that the measurement agrees with: missed refreshes (a client slower than the
    /// display), not a new rhythm, so they do not count towards measuring afresh.
    private func isWholeMultipleOfReliablePeriod(_ elapsed: Int64) -> Bool {
        let advertised = timeline.advertisedPeriod.value
        guard !isAdvertisedPeriodUnreliable, advertised >= RhythmEstimator.minimumPeriod.value,
            intervals.count == 0 || abs(intervals.median - advertised) <= advertised / 8
        else { return false }
        let periods = (elapsed + advertised / 2) / advertised
        return periods >= 2 && abs(elapsed - periods * advertised) <= advertised / 8
    }

    mutating func learnDepth(knownAtDraw: MonotonicInstant?, presentedAt: MonotonicInstant, extraPeriods: Int = 0) {
        guard let knownAtDraw, presentedAt > knownAtDraw else { return }
        let p = period.value
        let (span, overflow) = presentedAt.nanoseconds.subtractingReportingOverflow(knownAtDraw.nanoseconds)
        guard p > 0, !overflow else { return }
        // A strided frame was timed `extraPeriods` later than the depth puts it.
        let elapsed = span - p * Int64(extraPeriods)
        guard elapsed > 0 else { return }
        let periods = elapsed / p + (elapsed % p >= p - p / 2 ? 1 : 0)
        depths.append(min(max(periods, 1), 8))
    }

    /// The latest presentation at or before `now` on the learned rhythm.
    func extrapolatedPresentation(at now: MonotonicInstant) -> MonotonicInstant? {
        guard let latest = timeline.latest else { return nil }
        let p = period.value
        let (elapsed, overflow) = now.nanoseconds.subtractingReportingOverflow(latest.nanoseconds)
        guard !overflow, elapsed > 0 else { return latest }
        return MonotonicInstant(nanoseconds: latest.nanoseconds &+ (elapsed / p) * p)
    }

    /// The newest vblank known to have happened at `now`: the latest presentation, or, when that
    /// is reported ahead of `now`, the last vblank on its rhythm at or before `now`. Depths count
    /// from it (``WaylandRefreshScheduler`` files it with each feedback request). kwin reports a frame's
    /// presentation up to a millisecond before its vblank, with the next frame callback (its first
    /// frame's always); counted from the reported vblank, that next frame's depth is one less than
    /// that of frames called back, as usual, just before their predecessor's vblank.
    func latestVblank(at now: MonotonicInstant) -> MonotonicInstant? {
        guard let latest = timeline.latest else { return nil }
        let p = period.value
        let (ahead, overflow) = latest.nanoseconds.subtractingReportingOverflow(now.nanoseconds)
        guard !overflow, ahead > 0 else { return latest }
        let back = (ahead - 1) / p + 1
        return MonotonicInstant(nanoseconds: latest.nanoseconds &- back &* p)
    }

    /// ``latestVblank(at:)`` + depth·period, moved by whole periods past `now` and `timestamp`;
    /// the depth is the learned one, else `pendingFrames + 1` (at most 3). Without any
    /// presentation: the floor plus the same number of periods.
    func predictTarget(now: MonotonicInstant, timestamp: MonotonicInstant, pendingFrames: Int) -> MonotonicInstant {
        let p = period
        let floor = max(now, timestamp)
        let depth = Int64(learnedDepth ?? min(pendingFrames + 1, 3))
        let ahead = Nanoseconds(p.value.multipliedReportingOverflow(by: depth).partialValue)
        guard let latest = latestVblank(at: now) else { return floor + ahead }
        var target = latest + ahead
        if target <= floor {
            let (gap, overflow) = floor.nanoseconds.subtractingReportingOverflow(target.nanoseconds)
            if !overflow {
                let behind = gap / p.value + 1
                let (advance, tooFar) = behind.multipliedReportingOverflow(by: p.value)
                target = tooFar ? floor + p : target + Nanoseconds(advance)
            } else {
                target = floor + p
            }
        }
        if target <= timestamp { target = timestamp + p }
        return target
    }

}
