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
    /// The last positive period a source gave (what a period of zero or less is taken to be).
    private var lastGoodPeriod = Nanoseconds(1)
    /// The last target handed to links (never reset: targets never go back).
    private var lastTarget: MonotonicInstant?
    /// The last timestamp handed to links (never reset: timestamps never decrease).
    private var lastDispatchedTimestamp: MonotonicInstant?
    /// The source's sequence at the last dispatch (nil: counted), the offset that maps the
    /// source's sequence space onto the reported one, and the sequence reported for this refresh.
    private var lastGivenSequence: UInt64?
    private var sequenceOffset: UInt64 = 0
    private var resolvedSequence: UInt64 = 0
    /// Refreshes counted since the source started (links take their steps from it).
    private var refreshCount: UInt64 = 0
    private var dispatchDepth = 0
    private var needsCompaction = false
    /// The target of each recent refresh, at `index % count`, so that feedback can carry the
    /// target its frame was drawn for. Feedback comes a few refreshes after its frame (the
    /// frames in flight); 32 covers that with room, and a fixed ring keeps dispatch allocation-free.
    private var recentTargets = ContiguousArray(repeating: (index: UInt64.max, target: MonotonicInstant.zero), count: 32)

    public init() {
        entries.reserveCapacity(8)
    }

    /// Delivers one refresh to every active link. Returns the refresh's index.
    ///
    /// What a source says is checked here, the same for every backend, so that links can rely on
    /// it whatever a compositor or kernel reports: a timestamp earlier than the previous one is
    /// held at the previous one (timestamps never decrease), a period of zero or less is the last
    /// positive one (1 ns before any), a target not after the timestamp becomes one period after
    /// it (never past the clock's end), a target before the previous one is held at it (targets
    /// never go back; the deadline is then dropped), and a sequence that goes backwards, wraps, switches between
    /// counted and reported, or jumps further than the timestamps allow is rebased onto the
    /// timestamps (sequences never decrease, and no refreshes are invented as missed).
    @discardableResult
    public func dispatch(_ event: RefreshEvent) -> UInt64 {
        let index = nextRefreshIndex
        nextRefreshIndex &+= 1
        let timestamp = max(event.timestamp, lastDispatchedTimestamp ?? event.timestamp)
        let steps = resolveSteps(event, timestamp: timestamp)
        refreshCount &+= steps
        lastSequence = resolvedSequence
        lastTimestamp = timestamp
        lastDispatchedTimestamp = timestamp
        if event.refreshPeriod.value > 0 { lastGoodPeriod = event.refreshPeriod }
        let period = lastGoodPeriod
        let (sum, overflow) = timestamp.nanoseconds.addingReportingOverflow(period.value)
        var sourceTarget = event.targetTimestamp.flatMap { $0 > timestamp ? $0 : nil }
        var target = sourceTarget ?? MonotonicInstant(nanoseconds: overflow ? Int64.max : sum)
        if let last = lastTarget, target < last {
            // Frames are shown in the order they are submitted: one drawn now is never shown
            // before the previous one, whatever a prediction says (a compositor's rhythm learned
            // wrong while frames take longer than a period). Its deadline was for another time.
            target = last
            sourceTarget = nil
        }
        lastTarget = target
        let refresh = ResolvedRefresh(
            timestamp: timestamp,
            targetTimestamp: target,
            period: period,
            sequence: resolvedSequence,
            count: refreshCount,
            provenance: event.provenance,
            followsStall: event.followsStall,
            index: index,
            // Only for the source's own target: a deadline for another time says nothing.
            deadline: sourceTarget == nil ? nil : event.deadline,
            renderEstimate: event.renderEstimate
        )
        recentTargets[Int(index % UInt64(recentTargets.count))] = (index, target)
        dispatchDepth += 1
        let snapshot = entries  // a retain, not a copy, unless a callback changes the links
        for entry in snapshot {
            entry.link?.receive(refresh)
        }
        dispatchDepth -= 1
        updateDemand()
        return index
    }

    /// Forwards a presentation result to every live link, with the target of the refresh it names
    /// (``PresentationFeedback/targetTimestamp``) when the source gave none and the refresh is
    /// recent enough to be remembered.
    public func deliver(_ feedback: PresentationFeedback) {
        var feedback = feedback
        if feedback.targetTimestamp == nil {
            let recent = recentTargets[Int(feedback.refreshIndex % UInt64(recentTargets.count))]
            if recent.index == feedback.refreshIndex { feedback.targetTimestamp = recent.target }
        }
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

    /// Forgets the last timestamp and the source's sequence space, so refresh counting restarts
    /// (e.g. after the source restarted).
    public func resetCounting() {
        lastTimestamp = nil
        lastGivenSequence = nil
    }

    /// The refreshes per callback every live, unpaused link's interval at `refreshPeriod` is a
    /// multiple of: their greatest common divisor (1 with none). A source that wakes only every
    /// this many refreshes still brings each link its callback on time (links at 2 and 3 give 1,
    /// not 2: a wake-up every 2 refreshes would make the link at 3 fire every 4). No allocation.
    public func commonFrameInterval(refreshPeriod: Nanoseconds) -> Int {
        var common = 0
        for entry in entries {
            guard let link = entry.link, link.isValid, !link.isPaused else { continue }
            var a = common, b = max(1, link.interval(for: refreshPeriod))
            while b != 0 { (a, b) = (b, a % b) }
            common = a
        }
        return max(1, common)
    }

    /// The number of links that are alive and not invalidated.
    public var linkCount: Int {
        var n = 0
        for entry in entries where entry.link?.isValid == true { n += 1 }
        return n
    }

    /// How many refreshes passed since the previous dispatch (at least 1), and the sequence to
    /// report for this one (in ``resolvedSequence``).
    private func resolveSteps(_ event: RefreshEvent, timestamp: MonotonicInstant) -> UInt64 {
        let fromTimestamps = stepsFromTimestamps(timestamp, period: event.refreshPeriod)
        guard let given = event.sequence else {
            // Counted: the refreshes the timestamps span.
            lastGivenSequence = nil
            resolvedSequence = lastSequence &+ fromTimestamps
            return fromTimestamps
        }
        defer { lastGivenSequence = given }
        if event.followsStall, given > lastSequence, given < 1 << 62, lastGivenSequence.map({ given > $0 }) ?? true {
            // A restart (after a stall, a pause of the source, a mode set) is not counted as
            // missed refreshes anyway: the source's own counter is taken up again where it is.
            resolvedSequence = given
            sequenceOffset = 0
            return fromTimestamps
        }
        guard let previous = lastGivenSequence else {
            // The very first refresh takes the source's own counter. After counted refreshes or
            // a restart, the source's counter is mapped onto ours: the step comes from the
            // timestamps (a vblank counter that ran on while we counted invents no misses).
            resolvedSequence = nextRefreshIndex == 1 && given < 1 << 62 ? given : lastSequence &+ fromTimestamps
            sequenceOffset = resolvedSequence &- given
            return fromTimestamps  // 1 on the first refresh
        }
        let step = given &- previous
        // Forward, and no further than the time that passed allows (generous: a source's period
        // estimate may lag a rate change): one sequence space.
        if given > previous, step <= fromTimestamps &* 4 &+ 16 {
            resolvedSequence = given &+ sequenceOffset
            if resolvedSequence > lastSequence { return step }
        }
        // Backwards, repeated, wrapped or implausibly far: a new space, rebased on the timestamps.
        resolvedSequence = lastSequence &+ fromTimestamps
        sequenceOffset = resolvedSequence &- given
        return fromTimestamps
    }

    /// Refreshes between the previous timestamp and `timestamp` by the period (at least 1).
    private func stepsFromTimestamps(_ timestamp: MonotonicInstant, period: Nanoseconds) -> UInt64 {
        guard let last = lastTimestamp else { return 1 }
        let p = period.value
        let elapsed = timestamp.nanoseconds.subtractingReportingOverflow(last.nanoseconds)
        guard p > 0, !elapsed.overflow, elapsed.partialValue > p else { return 1 }
        let (steps, overflow) = elapsed.partialValue.addingReportingOverflow(p / 2)
        return overflow ? UInt64(elapsed.partialValue / p) : UInt64(max(1, steps / p))
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
    /// The dispatcher's own refresh count: always increases, by the refreshes since the last one.
    var count: UInt64
    var provenance: TimestampProvenance
    var followsStall: Bool
    var index: UInt64
    var deadline: FrameDeadline?
    var renderEstimate: Nanoseconds?
}
