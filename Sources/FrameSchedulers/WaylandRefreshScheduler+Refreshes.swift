import DisplayLinkCore

/// Making refreshes: frame callbacks in, each refresh's timestamp, sequence, target and requests
/// out (see <doc:WaylandScheduling>).
extension WaylandRefreshScheduler {
    // MARK: Frame callbacks

    /// A frame callback arrived at `arrival`. The refresh waits for ``eventsDispatched()``, so
    /// presentation feedback read in the same batch counts.
    public mutating func frameCallbackDone(at arrival: MonotonicInstant) {
        hasOutstandingFrameCallback = false
        hasBeenCalledBack = true
        if outstandingStride > 1, let target = outstandingCommitTarget, arrival < target {
            // The compositor called back before the timed content was due: striding saves nothing.
            isStridingUseless = true
        }
        outstandingCommitTarget = nil
        outstandingStride = 1
        releasesSinceCallback = 0
        if outstandingAfterRelease { releaseTarget = nil }
        outstandingAfterRelease = false
        if let request = outstandingRequestIndex {
            if let index = slots.firstIndex(where: { $0.inUse && $0.refreshIndex == request }) {
                slots[index].calledBack = arrival
            }
        }
        guard !isSuspended else { return }
        callbackArrival = arrival
        if let previous = lastCallbackArrival {
            let (elapsed, overflow) = arrival.nanoseconds.subtractingReportingOverflow(previous.nanoseconds)
            if !overflow { rhythm.callbackIntervalObserved(elapsed) }
        }
        lastCallbackArrival = arrival
    }

    /// A batch of events was dispatched: the refresh for a callback in it, if a link wants one.
    public mutating func eventsDispatched() -> Refresh? {
        guard let arrival = callbackArrival else { return nil }
        callbackArrival = nil
        guard isActive, !isFailed, !isSuspended else { return nil }
        return refresh(at: arrival, firstAfterStart: false)
    }

    // MARK: The refresh

    /// The refresh for a callback that arrived at `arrival` (or for the start, `firstAfterStart`).
    public mutating func refresh(at arrival: MonotonicInstant, firstAfterStart: Bool) -> Refresh {
        lastActivity = arrival
        let followsStall = (returningFromStall || isStalled) && !firstAfterStart || resumingFromSuspension
        isStalled = false
        returningFromStall = false
        resumingFromSuspension = false
        let pending = outstandingFeedbackCount

        var timestamp: MonotonicInstant
        var provenance = TimestampProvenance.frameCallbackEstimate
        var compositorSequence: UInt64?
        var isHalfStep = false
        if configuration.usesPresentation {
            let latest = timeline.latest
            let isNew = latest != nil && latest != lastDeliveredPresentation
            lastDeliveredPresentation = latest
            // On a start, the newest presentation may be from long ago (before a pause): the
            // rhythm's latest vblank then says better where the display is.
            let onRhythm = firstAfterStart ? rhythm.extrapolatedPresentation(at: arrival) : nil
            if isNew, let latest, isAfterLastTimestamp(latest), onRhythm.map({ $0 <= latest }) ?? true {
                timestamp = latest
                provenance = .presentationFeedback
                compositorSequence = timeline.latestSequence
            } else if !isNew || firstAfterStart, let estimate = rhythm.extrapolatedPresentation(at: arrival),
                isAfterLastTimestamp(estimate)
            {
                // No news since the last refresh (feedback late or lost): the rhythm's latest vblank.
                timestamp = estimate
            } else if latest != nil, let lastTimestamp {
                // A presentation came in, but not after the timestamp already given (an earlier
                // extrapolation overshot it), or the rhythm has no newer vblank: half a period on,
                // so the next reported presentation is later again.
                timestamp = notBeforeLast(min(arrival, lastTimestamp + Nanoseconds(period.value / 2)))
                isHalfStep = true
            } else {
                timestamp = notBeforeLast(arrival)
            }
        } else {
            if !firstAfterStart {
                rhythm.recordPresentation(at: arrival, sequence: nil, advertisedRefresh: .zero)
                rhythm.learnInterval(to: arrival, sequence: nil, refreshIndex: nil)
            }
            timestamp = notBeforeLast(arrival)
        }

        var steps = stepsByTime(to: timestamp, requireMeasuredPeriod: true)
        let stride = firstAfterStart ? 1 : self.stride
        let predicted =
            rhythm.predictTarget(now: arrival, timestamp: timestamp, pendingFrames: pending)
            + Nanoseconds(period.value &* Int64(extraPeriods(forStride: stride)))
        var target = predicted
        if latency == .lowLatency && stride == 1 && !firstAfterStart {
            target = reachableTarget(from: target, now: arrival, timestamp: timestamp)
        } else if isPeriodMeasured && !firstAfterStart {
            // A frame that missed its target and still waits moves the next past its vblank.
            target = pastWaitingFrames(target)
        }
        if let given = compositorSequence, let previous = lastCompositorSequence {
            // The compositor's count wins when it agrees with the time to within one refresh.
            let step = given &- previous
            let byTime = stepsByTime(to: timestamp, requireMeasuredPeriod: false)
            if step >= 1 && step <= byTime &+ 1 && step &+ 1 >= byTime { steps = step }
        }
        lastCompositorSequence = compositorSequence
        // A half step is off the rhythm: refreshes after it are counted from the one before it.
        let keepAnchor = isHalfStep
        defer { if !keepAnchor { countingAnchor = (lastTimestamp ?? timestamp, lastSequence) } }
        return makeRefresh(
            timestamp: timestamp, steps: steps, target: target,
            provenance: provenance, followsStall: followsStall, stride: stride, now: arrival, predicted: min(predicted, target))
    }

    /// The refresh made at `now`; `predicted`: its target as the rhythm predicts it, before it
    /// was moved past frames still waiting (nil: `target`).
    mutating func makeRefresh(
        timestamp: MonotonicInstant, steps: UInt64, target: MonotonicInstant,
        provenance: TimestampProvenance, followsStall: Bool, stride: Int, now: MonotonicInstant,
        predicted: MonotonicInstant? = nil
    ) -> Refresh {
        lastTimestamp = timestamp
        lastTarget = target
        lastSequence &+= max(1, steps)
        let index = nextRefreshIndex
        nextRefreshIndex &+= 1
        var requestsCallback = false
        var feedbackSlot: Int?
        // Timer fallback ticks (stalled: hidden, or the compositor not repainting) carry no target,
        // as they set no FIFO barrier: a compositor that applies no content update of a hidden
        // surface (weston 16) would hold each timed one with its buffer until the client has none
        // left (Mesa 22.3's wl_shm swap then crashes), where an untimed one replaces the last.
        let commitTarget = provenance == .timerFallback ? nil : commitTarget(for: target, now: now)
        if !hasOutstandingFrameCallback {
            requestsCallback = true
            hasOutstandingFrameCallback = true
            frameRequestCount += 1
            outstandingCommitTarget = commitTarget
            outstandingAfterRelease = releaseTarget != nil
            outstandingRequestIndex = index
            outstandingCommitApplied = false
            outstandingCommitPresented = false
            outstandingStride = stride
            if configuration.usesPresentation {
                feedbackSlot = fileFeedback(
                    refreshIndex: index, target: target, predicted: predicted ?? target, commitTarget: commitTarget,
                    stride: stride, now: now)
            }
        }
        let event = RefreshEvent(
            timestamp: timestamp, sequence: lastSequence, refreshPeriod: period,
            targetTimestamp: target, provenance: provenance, followsStall: followsStall,
            deadline: provenance == .timerFallback ? nil : deadlines.deadline(forTarget: target),
            renderEstimate: renderTime.estimate)
        // FIFO: compositor-paced refreshes once mapped; never a timer tick (see <doc:WaylandScheduling>).
        let fifo = timeline.latest != nil && provenance != .timerFallback
        return Refresh(
            event: event, index: index, requestsFrameCallback: requestsCallback, feedbackSlot: feedbackSlot,
            commitTarget: commitTarget, setsFifoBarrier: fifo, stride: stride)
    }

    // MARK: Counting and time arithmetic

    private func isAfterLastTimestamp(_ time: MonotonicInstant) -> Bool {
        guard let lastTimestamp else { return true }
        return time > lastTimestamp
    }

    /// `time`, or 1 ns after the last timestamp if that is later (saturating).
    func notBeforeLast(_ time: MonotonicInstant) -> MonotonicInstant {
        guard let lastTimestamp, time <= lastTimestamp else { return time }
        return lastTimestamp + Nanoseconds(1)
    }

    /// Refreshes between the last refresh and `timestamp`: whole periods (rounded) since the
    /// counting anchor, minus those already counted since it; at least 1 (always 1 while the period
    /// is not measured, if `requireMeasuredPeriod`).
    func stepsByTime(to timestamp: MonotonicInstant, requireMeasuredPeriod: Bool) -> UInt64 {
        guard let anchor = countingAnchor, !requireMeasuredPeriod || isPeriodMeasured else { return 1 }
        let p = period.value
        let (elapsed, overflow) = timestamp.nanoseconds.subtractingReportingOverflow(anchor.time.nanoseconds)
        guard !overflow, elapsed > p else { return 1 }
        let periods = UInt64(elapsed / p + (elapsed % p >= p - p / 2 ? 1 : 0))
        let counted = lastSequence &- anchor.sequence
        return periods > counted ? max(1, periods &- counted) : 1
    }

}
