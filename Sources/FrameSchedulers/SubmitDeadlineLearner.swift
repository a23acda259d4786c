import DisplayLinkCore

/// When a frame must be submitted (committed on Wayland, its flip or atomic commit queued on KMS)
/// to be presented at its target: learned from outcomes, which submit times made which
/// presentations. What is learned is the lead, how long before its target presentation a
/// submission still made it (on Wayland the compositor's latch before its presentation, such as
/// weston's repaint window; on KMS the driver's latch before the vblank).
///
/// - A submission `lead` before a target it made bounds the lead needed from above: the smallest
///   such lead among the recent ones is known to suffice. A frame shown a vblank or more before
///   its target made that vblank: its lead is counted before its presentation.
/// - A submission that missed its target with `lead` bounds it from below: the needed lead is
///   larger than the largest such lead among the recent ones. A miss with a lead at least as long
///   as one that made it contradicts the latch (a compositor or driver that stalled once, a
///   loaded machine): it says nothing about the latch and is not counted.
/// - A lead seen to be too short without a miss (``recordTooLate(lead:)``) raises the prior: on
///   Wayland, a compositor that calls back when it latches its repaint (weston, kwin) says that a
///   commit after the callback was too late for that repaint's presentation. The prior planned
///   with is the longer of ``prior`` and the median of the recent such leads (a median: one
///   callback that came early for once does not move it for good, as a bound would).
/// - The deadline is the target less the known-sufficient lead (`FrameDeadline.Provenance.sufficient`)
///   until a lower bound brackets it; then the middle of the bracket
///   (`FrameDeadline.Provenance.bracketed`), or its top once the bracket is ``resolution`` or
///   narrower (probing closer would risk a miss to gain less than that). With no outcome that made
///   its target, there is none: nothing is invented.
///
/// The recent outcomes are those of the last ``window`` frames, so a compositor or driver whose
/// latch moves earlier is followed. The longest lead that missed stays a lower bound after its
/// outcome leaves the window, until a frame makes its target with a lead at or below it or the
/// display changes (``forgetOutcomes()``): a planned lead never goes back under a lead that missed
/// just because the miss is old, so a latch that moves later is followed only down to it. Without
/// it, a prior shorter than the latch was tried again each time the miss left the window, and
/// missed again (weston 10, whose repaint latches about 19 ms ahead: two misses every 64 frames).
/// Pure value type: no clock reads, no allocation after init.
public struct SubmitDeadlineLearner: Sendable {
    /// How many recent frames' outcomes bound the lead.
    public static let window = 64
    /// A bracket this narrow is not probed further: the lead planned is its top, which made it.
    public static let resolution = Nanoseconds(1_000_000)

    /// The lead the source assumes before anything says otherwise (nil: none; see
    /// `FrameDeadline.Provenance.prior`): planned with until a frame is shown with less, and
    /// given up for the bracket once a frame misses at it.
    public var prior: Nanoseconds?
    private var outcomes: OutcomeRing
    /// The longest lead known to miss, kept after it leaves the window (nil: none, or a frame made
    /// its target with a lead at or below it since).
    private var floor: Int64?
    /// The leads seen too late without a miss, and the outcomes recorded since the last: after a
    /// window of outcomes without one (a compositor that stopped calling back before it shows),
    /// they are forgotten.
    private var tooLate = RecentMedian()
    private var outcomesSinceTooLate = 0

    public init() {
        outcomes = OutcomeRing()
    }

    /// A frame submitted at `submitted` for `target` was presented at `presented`; `period` is the
    /// display's. It made its target when presented less than half a period after it (a
    /// presentation a whole period or more later missed it). A presentation later than that but
    /// less than seven eighths of a period late was delayed by the compositor, not by its latch,
    /// which costs whole refreshes (mutter once showed a frame 13.8 ms late): it teaches nothing.
    /// Anything later is a miss, whatever its phase (a compositor that went idle restarts its
    /// repaints from the next commit, off the old grid). A submission after its target counts as
    /// one at it: vkms, its vblank handler late under load, still shows a flip queued just after
    /// the vblank's timestamp, but a deadline is never after its target.
    ///
    /// A presentation half a period or more before the target was an earlier vblank's, which the
    /// submission made: the lead that made it is the one before that presentation, not before the
    /// target (a target a period too far, with nothing holding the frame back until it: a
    /// program's own FIFO queue empty, no commit time). Counted at the target's lead, it taught
    /// nothing, and a lead learned too long stayed so while every frame was shown early. One
    /// whose presentation is not after its submission says nothing (a clock that disagrees).
    public mutating func record(
        submitted: MonotonicInstant, target: MonotonicInstant, presented: MonotonicInstant,
        period: Nanoseconds
    ) {
        let late = (presented - target).value
        let early = late <= -(period.value / 2)
        if early, presented <= submitted { return }
        let lead = max(0, ((early ? presented : target) - submitted).value)
        let made = late < period.value / 2
        if !made, late < period.value - period.value / 8 { return }
        outcomes.add(lead: lead, made: made)
        outcomesSinceTooLate += 1
        if outcomesSinceTooLate > SubmitDeadlineLearner.window, tooLate.count > 0 { tooLate = RecentMedian() }
        if made, let floor, lead <= floor { self.floor = nil }
        if let missed = outcomes.longestMissed(below: outcomes.shortestMade) { floor = max(floor ?? missed, missed) }
    }

    /// A submission `lead` before a presentation was too late for it, seen without a frame missing
    /// (the compositor had latched the repaint that showed it). A lead at least as long as one that
    /// made its target contradicts that (a callback for another output's repaint, a compositor that
    /// calls back before it latches) and is not counted; and the prior planned with is never
    /// longer than a lead that made it (see ``lead``).
    public mutating func recordTooLate(lead: Nanoseconds) {
        guard lead.value > 0, outcomes.shortestMade.map({ lead.value < $0 }) ?? true else { return }
        tooLate.append(lead.value)
        outcomesSinceTooLate = 0
    }

    /// Whether anything was recorded since the start or the last ``forgetOutcomes()``.
    public var hasOutcomes: Bool { !outcomes.isEmpty || tooLate.count > 0 }

    /// The prior planned with: ``prior``, or the median lead seen too late when that is longer
    /// (nil without a prior).
    public var effectivePrior: Nanoseconds? {
        prior.map { Nanoseconds(max($0.value, tooLate.median)) }
    }

    /// The display changed (another output, another mode): what was learned of the old latch,
    /// the lead that missed included, is forgotten; the prior stays.
    public mutating func forgetOutcomes() {
        outcomes = OutcomeRing()
        floor = nil
        tooLate = RecentMedian()
    }

    /// The shortest lead among the recent submissions that made their targets (nil: none).
    public var sufficientLead: Nanoseconds? { outcomes.shortestMade.map(Nanoseconds.init) }
    /// The longest lead among the recent submissions that missed their targets and are shorter
    /// than ``sufficientLead``, else the longest that missed before them and was not made up for
    /// since (nil: none).
    public var insufficientLead: Nanoseconds? { lowerBound(below: outcomes.shortestMade).map(Nanoseconds.init) }

    /// The longer of the recent miss and the kept one, each only when shorter than `sufficient`.
    private func lowerBound(below sufficient: Int64?) -> Int64? {
        let missed = outcomes.longestMissed(below: sufficient)
        guard let floor, floor < (sufficient ?? .max) else { return missed }
        return max(missed ?? floor, floor)
    }

    /// The longest lead known to be too short: the longer of ``insufficientLead`` and the median
    /// lead seen too late (nil: neither). A submission later than a target less this lead misses it.
    public var tooShortLead: Nanoseconds? {
        let missed = insufficientLead?.value
        guard tooLate.count > 0 else { return missed.map(Nanoseconds.init) }
        return Nanoseconds(max(missed ?? 0, tooLate.median))
    }

    /// The lead to plan with, and what it rests on (nil: nothing made its target yet).
    public var lead: (lead: Nanoseconds, provenance: FrameDeadline.Provenance)? {
        let sufficient = outcomes.shortestMade
        let insufficient = lowerBound(below: sufficient)
        if let prior = effectivePrior?.value { return leadWith(prior: prior, sufficient: sufficient, insufficient: insufficient) }
        guard let sufficient else { return nil }
        guard let insufficient else { return (Nanoseconds(sufficient), .sufficient) }
        return (Nanoseconds(middle(insufficient, sufficient)), .bracketed)
    }

    private func leadWith(prior: Int64, sufficient: Int64?, insufficient: Int64?) -> (
        lead: Nanoseconds, provenance: FrameDeadline.Provenance
    ) {
        let planned = min(prior, sufficient ?? prior)
        if let insufficient, insufficient >= planned {
            // A frame missed at what would be planned: between that miss and what made it, or
            // further out than the miss by the prior when nothing made it.
            guard let sufficient else { return (Nanoseconds(insufficient &+ prior), .prior) }
            return (Nanoseconds(middle(insufficient, sufficient)), .bracketed)
        }
        if let sufficient, sufficient <= prior { return (Nanoseconds(sufficient), .sufficient) }
        return (Nanoseconds(prior), .prior)
    }

    /// The middle of a bracket, rounded up: never at a lead that missed; its top once it is
    /// ``resolution`` or narrower.
    private func middle(_ insufficient: Int64, _ sufficient: Int64) -> Int64 {
        guard sufficient - insufficient > SubmitDeadlineLearner.resolution.value else { return sufficient }
        return insufficient + (sufficient - insufficient + 1) / 2
    }

    /// The deadline for a frame to be presented at `target` (nil: nothing learned yet).
    public func deadline(forTarget target: MonotonicInstant) -> FrameDeadline? {
        guard let (lead, provenance) = lead else { return nil }
        return FrameDeadline(time: MonotonicInstant(nanoseconds: target.nanoseconds &- lead.value), lead: lead, provenance: provenance)
    }
}

/// The last ``SubmitDeadlineLearner/window`` frames' leads and whether each made its target, in a
/// fixed ring.
struct OutcomeRing: Sendable {
    private var leads = [Int64](repeating: 0, count: SubmitDeadlineLearner.window)
    private var made = [Bool](repeating: false, count: SubmitDeadlineLearner.window)
    private var count = 0

    mutating func add(lead: Int64, made: Bool) {
        leads[count % leads.count] = lead
        self.made[count % leads.count] = made
        count &+= 1
    }

    private var filled: Range<Int> { 0..<min(count, leads.count) }
    var isEmpty: Bool { count == 0 }

    var shortestMade: Int64? {
        var shortest: Int64?
        for i in filled where made[i] { shortest = min(shortest ?? leads[i], leads[i]) }
        return shortest
    }

    /// The longest lead that missed, among those shorter than `bound` (any, when nil).
    func longestMissed(below bound: Int64?) -> Int64? {
        var longest: Int64?
        for i in filled where !made[i] && leads[i] < (bound ?? .max) { longest = max(longest ?? leads[i], leads[i]) }
        return longest
    }
}
