import DisplayLinkCore

/// The last few frames' submissions, in a fixed ring (frames in flight are at most two, and a
/// held frame's predecessor: four is room enough).
struct SubmissionRing: Sendable {
    private var entries = [(refresh: UInt64, target: MonotonicInstant, submitted: MonotonicInstant)?](repeating: nil, count: 4)
    private var next = 0

    mutating func add(refresh: UInt64, target: MonotonicInstant, submitted: MonotonicInstant) {
        entries[next] = (refresh, target, submitted)
        next = (next + 1) % entries.count
    }

    /// The submission of `refresh`, forgotten once taken.
    mutating func take(refresh: UInt64) -> (target: MonotonicInstant, submitted: MonotonicInstant)? {
        for i in entries.indices {
            guard let entry = entries[i], entry.refresh == refresh else { continue }
            entries[i] = nil
            return (entry.target, entry.submitted)
        }
        return nil
    }
}
