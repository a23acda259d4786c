/// The fan-out point of one frame source: the source reports each refresh here, and every
/// ``DisplayLink`` on that source gets its callback from here.
///
/// It owns what is the same for every backend: the refresh index, refresh counting when the source
/// has no vblank sequence, and the demand signal (does any live, unpaused link want refreshes?).
/// Links are held weakly; a link's owner decides its lifetime. Adding, pausing or invalidating links
/// from inside a callback is safe: a dispatch walks a snapshot of the links, and links added during
/// a dispatch get their first callback on the next refresh.
@MainActor
public final class RefreshDispatcher {
    /// Called with `true` when the first active link appears and `false` when the last one pauses,
    /// is invalidated or goes away. The source starts or stops asking the display for refreshes.
    public var onDemandChange: ((Bool) -> Void)?
    /// Whether any live, unpaused link wants refreshes: the source requests them only then.
    public private(set) var wantsRefreshes = false
    /// The index the next dispatched refresh will get.
    public private(set) var nextRefreshIndex: UInt64 = 0
    /// The refresh sequence of the last dispatch (given by the source, or counted).
    public private(set) var lastSequence: UInt64 = 0

    private struct Entry {
        weak var link: DisplayLink?
    }
    private var entries: ContiguousArray<Entry> = []
    private var lastTimestamp: MonotonicInstant?
    private var dispatchDepth = 0
    private var needsCompaction = false

    public init() {
        entries.reserveCapacity(8)
    }

    /// Delivers one refresh to every active link. Returns the refresh's index.
    @discardableResult
    public func dispatch(_ event: RefreshEvent) -> UInt64 {
        let index = nextRefreshIndex
        nextRefreshIndex &+= 1
        let sequence = resolveSequence(event)
        lastSequence = sequence
        lastTimestamp = event.timestamp
        let refresh = ResolvedRefresh(
            timestamp: event.timestamp,
            targetTimestamp: event.targetTimestamp ?? (event.timestamp + event.refreshPeriod),
            period: event.refreshPeriod,
            sequence: sequence,
            provenance: event.provenance,
            followsStall: event.followsStall,
            index: index
        )
        dispatchDepth += 1
        let snapshot = entries  // a retain, not a copy, unless a callback changes the links
        for entry in snapshot {
            entry.link?.receive(refresh)
        }
        dispatchDepth -= 1
        updateDemand()
        return index
    }

    /// Forwards a presentation result to every live link.
    public func deliver(_ feedback: PresentationFeedback) {
        dispatchDepth += 1
        let snapshot = entries
        for entry in snapshot {
            entry.link?.receive(feedback)
        }
        dispatchDepth -= 1
    }

    /// Invalidates every link: the source can never deliver again (its display went away).
    public func invalidateAll() {
        let snapshot = entries
        for entry in snapshot { entry.link?.invalidate() }
    }

    /// Forgets the last timestamp, so refresh counting restarts (e.g. after the source restarted).
    public func resetCounting() {
        lastTimestamp = nil
    }

    /// The number of links that are alive and not invalidated.
    public var linkCount: Int {
        var n = 0
        for entry in entries where entry.link?.isValid == true { n += 1 }
        return n
    }

    private func resolveSequence(_ event: RefreshEvent) -> UInt64 {
        if let given = event.sequence { return given }
        guard let last = lastTimestamp else { return lastSequence &+ 1 }
        let period = event.refreshPeriod.value
        let elapsed = (event.timestamp - last).value
        guard period > 0, elapsed > period else { return lastSequence &+ 1 }
        let steps = (elapsed + period / 2) / period
        return lastSequence &+ UInt64(max(1, steps))
    }

    // MARK: Link bookkeeping (called by DisplayLink)

    func register(_ link: DisplayLink) {
        entries.append(Entry(link: link))
        updateDemand()
    }

    func linkStateChanged() {
        needsCompaction = true
        updateDemand()
    }

    private func updateDemand() {
        if needsCompaction && dispatchDepth == 0 {
            entries.removeAll { $0.link.map { !$0.isValid } ?? true }
            needsCompaction = false
        }
        var wanted = false
        for entry in entries {
            if let link = entry.link, link.isValid, !link.isPaused {
                wanted = true
                break
            }
        }
        if wanted != wantsRefreshes {
            wantsRefreshes = wanted
            onDemandChange?(wanted)
        }
    }
}

/// A refresh after the dispatcher resolved its sequence and target.
struct ResolvedRefresh {
    var timestamp: MonotonicInstant
    var targetTimestamp: MonotonicInstant
    var period: Nanoseconds
    var sequence: UInt64
    var provenance: TimestampProvenance
    var followsStall: Bool
    var index: UInt64
}
