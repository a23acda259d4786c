import DisplayLinkCore

/// Presentation feedback: the slots requests are filed under, what each report teaches the
/// rhythm, and forgetting the rhythm when the output changes.
extension WaylandRefreshScheduler {
    /// A feedback request: the refresh whose frame it reports on, and what that refresh knew and
    /// asked for. The slots are allocated once, so filing and taking one allocates nothing.
    struct Slot: Sendable {
        var inUse = false
        var refreshIndex: UInt64 = 0
        var knownAtDraw: MonotonicInstant?
        var commitTarget: MonotonicInstant?
        var stride = 1
        var extraPeriods = 0
        /// The refresh's target, and when its frame was committed (nil: not yet, or never).
        var target: MonotonicInstant?
        /// The target as the rhythm predicted it, before it was moved past frames still waiting.
        var predicted: MonotonicInstant?
        var committed: MonotonicInstant?
        /// When the frame callback its commit asked for came (nil: not yet).
        var calledBack: MonotonicInstant?
        /// The output generation it was filed in (``WaylandRefreshScheduler/outputGeneration``).
        var generation: UInt64 = 0
        /// Whether its commit was the surface's first with content: it maps the window, and is
        /// shown when the compositor has mapped it (58 ms after the commit on weston 16, 116 ms on
        /// kwin 6.7 under Mesa's Vulkan WSI), not at the vblank of its latch.
        var mapsSurface = false
    }

    /// Feedback requests not answered yet.
    public var outstandingFeedbackCount: Int {
        var n = 0
        for slot in slots where slot.inUse { n += 1 }
        return n
    }

    /// The refresh index the feedback in `slot` reports on (nil when the slot is free).
    public func refreshIndex(ofSlot slot: Int) -> UInt64? {
        guard slots.indices.contains(slot), slots[slot].inUse else { return nil }
        return slots[slot].refreshIndex
    }

    // MARK: Presentation feedback

    /// The feedback filed under `slot` reported a presentation at `time` (already on
    /// `CLOCK_MONOTONIC`), received at `receivedAt`, with the protocol's `flags`. `sequence` 0
    /// means unknown; `advertisedRefresh` 0 means unknown or variable (the period then comes from
    /// measurement only). Returns what to deliver to the links (nil for an unknown slot).
    public mutating func presented(
        slot: Int, at time: MonotonicInstant, receivedAt: MonotonicInstant,
        sequence: UInt64, advertisedRefresh: Nanoseconds,
        flags: PresentationFlags = []
    ) -> PresentationFeedback? {
        guard let entry = takeSlot(slot) else { return nil }
        feedbackCount += 1
        if entry.refreshIndex == outstandingRequestIndex {
            outstandingCommitApplied = true
            outstandingCommitPresented = true
        }
        let vblank: UInt64? = sequence == 0 ? nil : sequence
        // Feedback for a frame made on the previous output says nothing of this one's VSYNC.
        if entry.generation == outputGeneration { commitTimingGate.presented(flags: flags) }
        rhythm.advertisedRefreshReported(advertisedRefresh)
        let plausible = isPlausible(time, receivedAt: receivedAt)
        if plausible {
            rhythm.recordPresentation(at: time, sequence: vblank, advertisedRefresh: advertisedRefresh)
            // A presentation off the rhythm (a stall) says nothing about the depth either.
            // Under low latency a frame that missed its target was started too late for the
            // compositor's latch, which the deadline learns; it says nothing about the depth.
            let missedUnderLowLatency = latency == .lowLatency && entry.target.map { (time - $0).value >= period.value / 2 } == true
            if rhythm.learnInterval(to: time, sequence: vblank, refreshIndex: entry.refreshIndex, stride: entry.stride),
                !missedUnderLowLatency
            {
                rhythm.learnDepth(knownAtDraw: entry.knownAtDraw, presentedAt: time, extraPeriods: entry.extraPeriods)
            }
            // The frame that mapped the surface and missed its target missed it for the mapping,
            // not the latch: counted, its lead stayed a lower bound for good (the bracket's floor)
            // above the leads frames started at their callbacks make, so low latency planned no
            // later start; and once a start was planned from that bracket, more than a period before
            // its target, a commit with the program's FIFO queue empty made the vblank before it.
            let mappingMiss = entry.mapsSurface && entry.target.map { (time - $0).value >= period.value / 2 } == true
            if let target = entry.target, let committed = entry.committed, !mappingMiss {
                deadlines.record(submitted: committed, target: target, presented: time, period: period)
            }
            // Called back before it was shown: the compositor had latched the repaint that showed
            // it (weston calls back when it latches, kwin after; a callback after the latch only
            // makes the lead shorter), so a commit at the callback was already too late for that
            // presentation. A callback within a millisecond of the commit says nothing of a latch.
            if let committed = entry.committed, let calledBack = entry.calledBack, calledBack < time,
                calledBack - committed >= WaylandRefreshScheduler.callbackAfterCommitMinimum
            {
                deadlines.recordTooLate(lead: time - calledBack)
            }
        }
        var feedback = PresentationFeedback(
            refreshIndex: entry.refreshIndex, outcome: .presented(at: time, sequence: vblank),
            flags: flags, commitTarget: entry.commitTarget)
        feedback.isTimePlausible = plausible
        return feedback
    }

    /// The feedback filed under `slot` reported its frame discarded.
    public mutating func discarded(slot: Int) -> PresentationFeedback? {
        guard let entry = takeSlot(slot) else { return nil }
        feedbackCount += 1
        if entry.refreshIndex == outstandingRequestIndex { outstandingCommitApplied = true }
        return PresentationFeedback(refreshIndex: entry.refreshIndex, outcome: .discarded, commitTarget: entry.commitTarget)
    }

    // MARK: Outputs

    /// The surface moved to `output` (an identifier the shell chooses; nil: unknown), or its
    /// output's mode changed: everything learned about the rhythm and the latch is forgotten, and
    /// period, phase and deadline are learned again from the next presentations
    /// (`advertisedPeriod` 0: unknown). Commits are timed there again only once its feedback
    /// carries `VSYNC` (``CommitTimingGate``).
    public mutating func outputChanged(to output: UInt64?, advertisedPeriod: Nanoseconds) {
        commitTimingGate.outputChanged(to: output)
        outputGeneration &+= 1
        rhythm = RhythmEstimator(advertisedPeriod: advertisedPeriod)
        deadlines.forgetOutcomes()
        lastCallbackArrival = nil
        lastDeliveredPresentation = nil
        lastCompositorSequence = nil
        for index in slots.indices { slots[index].knownAtDraw = nil }
    }

    // MARK: Slots

    /// Files a feedback request for the frame of refresh `refreshIndex`, made at `now`, and returns its slot. When
    /// every slot is taken (the compositor loses feedback), the oldest request is given up: the
    /// shell destroys its proxy and reuses the slot.
    mutating func fileFeedback(
        refreshIndex: UInt64, target: MonotonicInstant, predicted: MonotonicInstant, commitTarget: MonotonicInstant?,
        stride: Int, now: MonotonicInstant
    ) -> Int {
        let slot = slots.firstIndex(where: { !$0.inUse }) ?? oldestSlot()
        slots[slot] = Slot(
            inUse: true, refreshIndex: refreshIndex, knownAtDraw: rhythm.latestVblank(at: now),
            commitTarget: commitTarget, stride: stride,
            extraPeriods: extraPeriods(forStride: stride), target: target, predicted: predicted,
            generation: outputGeneration)
        return slot
    }

    /// The frame of the latest refresh was committed at `time` (read by the shell as it commits):
    /// its feedback then teaches the deadline, and the time since its callback started the render
    /// time. The surface has content from now on.
    public mutating func frameCommitted(at time: MonotonicInstant) {
        let mapsSurface = !hasCommittedContent
        contentCommitted()
        if let began = callbackBegan {
            let drawn = time - began
            renderTime.record(drawn)
            recentRenderTimes.append(max(0, drawn.value))
            callbackBegan = nil
        }
        let latest = nextRefreshIndex &- 1
        for index in slots.indices where slots[index].inUse && slots[index].refreshIndex == latest && slots[index].committed == nil {
            slots[index].committed = time
            slots[index].mapsSurface = mapsSurface
        }
    }

    private func oldestSlot() -> Int {
        var oldest = 0
        for index in slots.indices where slots[index].refreshIndex < slots[oldest].refreshIndex { oldest = index }
        return oldest
    }

    private mutating func takeSlot(_ slot: Int) -> Slot? {
        guard slots.indices.contains(slot), slots[slot].inUse else { return nil }
        let entry = slots[slot]
        slots[slot] = Slot()
        return entry
    }

    private func isPlausible(_ time: MonotonicInstant, receivedAt: MonotonicInstant) -> Bool {
        let (ahead, overflow) = time.nanoseconds.subtractingReportingOverflow(receivedAt.nanoseconds)
        return !overflow && ahead <= WaylandRefreshScheduler.futureTolerance.value
            && ahead >= -WaylandRefreshScheduler.pastTolerance.value
    }
}
