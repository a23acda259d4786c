import DisplayLinkCore

/// When a frame must be submitted (committed on Wayland, its flip or atomic commit queued on KMS)
/// to be presented at its target: learned from outcomes, which submit times made which
/// presentations. What is learned is the lead, how long before its target presentation a
/// submission still made it (on Wayland the compositor's latch before its presentation, such as
/// weston's repaint window; on KMS the driver's latch before the vblank).
///
/// - A submission `lead` before a target it made bounds the lead needed from above: the smallest
///   such lead among the recent ones is known to suffice.
/// - A submission that missed its target with `lead` bounds it from below: the needed lead is
///   larger than the largest such lead among the recent ones.
/// - The deadline is the target less the known-sufficient lead (`FrameDeadline.Provenance.sufficient`)
///   until a miss brackets it; then the middle of the bracket
///   (`FrameDeadline.Provenance.bracketed`). With no outcome that made its target, there is none:
///   nothing is invented.
///
/// The recent outcomes are the last ``window`` of each kind, so a compositor or driver that
/// changes its latch is followed. Pure value type: no clock reads, no allocation after init.
public struct SubmitDeadlineLearner: Sendable {
    /// How many recent outcomes of each kind (made, missed) bound the lead.
    public static let window = 64

    /// The lead the source assumes before anything says otherwise (nil: none; see
    /// `FrameDeadline.Provenance.prior`): planned with until a frame is shown with less, and
    /// given up for the bracket once a frame misses at it.
    public var prior: Nanoseconds?
    private var made: LeadRing
    private var missed: LeadRing

    public init() {
        made = LeadRing()
        missed = LeadRing()
    }

    /// A frame submitted at `submitted` for `target` was presented at `presented`; `period` is the
    /// display's. It made its target when presented less than half a period after it (a
    /// presentation a whole period or more later missed it).
    public mutating func record(
        submitted: MonotonicInstant, target: MonotonicInstant, presented: MonotonicInstant,
        period: Nanoseconds
    ) {
        let lead = (target - submitted).value
        let late = (presented - target).value
        if late < period.value / 2 {
            made.add(lead)
        } else {
            missed.add(lead)
        }
    }

    /// The shortest lead among the recent submissions that made their targets (nil: none).
    public var sufficientLead: Nanoseconds? { made.minimum.map(Nanoseconds.init) }
    /// The longest lead among the recent submissions that missed their targets (nil: none).
    public var insufficientLead: Nanoseconds? { missed.maximum.map(Nanoseconds.init) }

    /// The lead to plan with, and what it rests on (nil: nothing made its target yet).
    public var lead: (lead: Nanoseconds, provenance: FrameDeadline.Provenance)? {
        if let prior = prior?.value { return leadWith(prior: prior) }
        guard let sufficient = made.minimum else { return nil }
        guard let insufficient = missed.maximum, insufficient < sufficient else { return (Nanoseconds(sufficient), .sufficient) }
        // Rounded up: the middle of the bracket, never below a lead that missed.
        return (Nanoseconds(insufficient + (sufficient - insufficient + 1) / 2), .bracketed)
    }

    private func leadWith(prior: Int64) -> (lead: Nanoseconds, provenance: FrameDeadline.Provenance) {
        let sufficient = made.minimum
        let planned = min(prior, sufficient ?? prior)
        if let insufficient = missed.maximum, insufficient >= planned {
            // A frame missed at what would be planned: between that miss and what made it, or
            // further out than the miss by the prior when nothing made it.
            guard let sufficient, insufficient < sufficient else { return (Nanoseconds(insufficient &+ prior), .prior) }
            return (Nanoseconds(insufficient + (sufficient - insufficient + 1) / 2), .bracketed)
        }
        if let sufficient, sufficient <= prior { return (Nanoseconds(sufficient), .sufficient) }
        return (Nanoseconds(prior), .prior)
    }

    /// The deadline for a frame to be presented at `target` (nil: nothing learned yet).
    public func deadline(forTarget target: MonotonicInstant) -> FrameDeadline? {
        guard let (lead, provenance) = lead else { return nil }
        return FrameDeadline(time: MonotonicInstant(nanoseconds: target.nanoseconds &- lead.value), lead: lead, provenance: provenance)
    }
}

/// The last ``SubmitDeadlineLearner/window`` leads of one kind, in a fixed ring.
struct LeadRing: Sendable {
    private var values = [Int64](repeating: 0, count: SubmitDeadlineLearner.window)
    private var count = 0

    mutating func add(_ value: Int64) {
        values[count % values.count] = value
        count &+= 1
    }

    private var filled: ArraySlice<Int64> { values[0..<min(count, values.count)] }
    var minimum: Int64? { filled.min() }
    var maximum: Int64? { filled.max() }
}
