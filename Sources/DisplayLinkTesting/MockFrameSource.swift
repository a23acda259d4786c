import DisplayLinkCore

/// A deterministic frame source on a virtual clock, for testing display-link code without a
/// display: the analogue of swift-nio's `EmbeddedEventLoop` with `advanceTime`.
///
/// The clock starts at 0 and moves only when the test says so: ``vsync()`` moves it to the next
/// vblank and delivers that refresh; ``advance(by:)`` moves it by a span and delivers every vblank
/// on the way. Vblanks are `refreshPeriod` apart, plus whatever the script adds:
/// jitter (``scriptJitter(_:)``, ``setRandomJitter(amplitude:seed:)``), dropped vblanks
/// (``dropVBlanks(_:)``: the sequence jumps), discarded presentations
/// (``discardPresentations(_:)``), occlusion (``occlude()`` / ``reveal()``), and refresh-rate
/// changes (``refreshPeriod``).
///
/// Presentation feedback follows the Wayland order: the frame drawn in the callback for refresh N
/// is reported presented at vblank N+1, just before that vblank's callback.
///
/// The same script gives the same callbacks, bit for bit. Not thread-safe: use it from the main
/// actor only (it is `@MainActor`).
@MainActor
public final class MockFrameSource: FrameSource {
    public let dispatcher = RefreshDispatcher()

    /// The virtual clock, on the same scale as `CLOCK_MONOTONIC` (nanoseconds from 0).
    public private(set) var now: MonotonicInstant = .zero
    /// The vblank period from the next vblank on. Changing it is a refresh-rate change.
    public var refreshPeriod: Nanoseconds
    /// What the refreshes say about their timestamps.
    public var provenance: TimestampProvenance = .hardwareVBlank
    /// Whether refreshes carry the vblank sequence (DRM, mutter) or not (weston): without it the
    /// core counts refreshes from the timestamps.
    public var reportsSequence = true
    /// The vblank counter: the sequence of the last vblank that happened (delivered or not).
    public private(set) var sequence: UInt64 = 0
    /// Whether a link currently wants refreshes (the source's "request" is outstanding).
    public private(set) var isRequestingRefreshes = false
    /// Refresh requests the source has made: one per refresh it delivered while wanted, plus one
    /// each time the demand starts. A stopped source's count stays still.
    public private(set) var requestCount = 0
    /// Refreshes delivered to the dispatcher.
    public private(set) var deliveredCount = 0
    /// Whether the surface is hidden: vblanks go on, callbacks do not.
    public private(set) var isOccluded = false

    private var nominalVBlank: Int64 = 0
    private var jitterScript: [Int64] = []
    private var jitterCursor = 0
    private var random: SplitMix64?
    private var randomAmplitude: Int64 = 0
    private var vblanksToDrop = 0
    private var presentationsToDiscard = 0
    private var pendingPresentation: UInt64?
    private var stalled = false

    public init(refreshPeriod: Nanoseconds = Nanoseconds(periodOfHertz: 60)) {
        self.refreshPeriod = refreshPeriod
        jitterScript.reserveCapacity(64)
        dispatcher.onDemandChange = { [weak self] wanted in
            guard let self else { return }
            self.isRequestingRefreshes = wanted
            if wanted { self.requestCount += 1 }
        }
    }

    public convenience init(refreshRate hz: Double) {
        self.init(refreshPeriod: Nanoseconds(periodOfHertz: hz))
    }

    /// The time of the next vblank (jitter included).
    public var nextVBlank: MonotonicInstant {
        MonotonicInstant(nanoseconds: nominalVBlank &+ refreshPeriod.value &+ peekJitter())
    }

    // MARK: Driving the clock

    /// Moves the clock to the next vblank and delivers it.
    public func vsync() {
        let next = nextVBlank
        fireVBlank(at: next)
    }

    /// `count` vsyncs in a row.
    public func vsync(_ count: Int) {
        for _ in 0..<max(0, count) { vsync() }
    }

    /// Moves the clock by `span`, delivering every vblank that falls within it, in order.
    public func advance(by span: Nanoseconds) {
        let end = now + span
        while nextVBlank <= end {
            vsync()
        }
        now = max(now, end)
    }

    // MARK: Scripting

    /// Offsets (ns) added to the coming vblanks' times, one per vblank, in order; 0 afterwards.
    public func scriptJitter(_ offsets: [Int64]) {
        jitterScript.removeAll(keepingCapacity: true)
        jitterScript.append(contentsOf: offsets)
        jitterCursor = 0
    }

    /// Pseudo-random jitter in ±`amplitude`, reproducible from `seed` (used after any script).
    public func setRandomJitter(amplitude: Nanoseconds, seed: UInt64) {
        random = SplitMix64(seed: seed)
        randomAmplitude = amplitude.value
        randomPeek = nil
    }

    /// The next `count` vblanks happen without a callback: the next delivered sequence jumps.
    public func dropVBlanks(_ count: Int) {
        vblanksToDrop += max(0, count)
    }

    /// The frames drawn in the next `count` callbacks are reported discarded, not presented.
    public func discardPresentations(_ count: Int) {
        presentationsToDiscard += max(0, count)
    }

    /// Hides the surface: vblanks go on, callbacks stop (as Wayland compositors do).
    public func occlude() {
        isOccluded = true
    }

    /// Shows the surface again; the next callback is marked as following a stall.
    public func reveal() {
        guard isOccluded else { return }
        isOccluded = false
        stalled = true
    }

    // MARK: Internals

    private var randomPeek: Int64?

    private func peekJitter() -> Int64 {
        if jitterCursor < jitterScript.count { return jitterScript[jitterCursor] }
        guard var rng = random, randomAmplitude > 0 else { return 0 }
        if let value = randomPeek { return value }
        let span = UInt64(randomAmplitude) * 2 + 1
        let value = Int64(rng.next() % span) - randomAmplitude
        random = rng
        randomPeek = value
        return value
    }

    private func consumeJitter() {
        if jitterCursor < jitterScript.count {
            jitterCursor += 1
        } else {
            randomPeek = nil
        }
    }

    private func fireVBlank(at time: MonotonicInstant) {
        nominalVBlank &+= refreshPeriod.value
        consumeJitter()
        now = max(now, time)
        sequence &+= 1
        if vblanksToDrop > 0 {
            vblanksToDrop -= 1
            return
        }
        guard !isOccluded else {
            if let frame = pendingPresentation {
                pendingPresentation = nil
                dispatcher.deliver(PresentationFeedback(refreshIndex: frame, outcome: .discarded))
            }
            return
        }
        if let frame = pendingPresentation {
            pendingPresentation = nil
            let outcome: PresentationFeedback.Outcome
            if presentationsToDiscard > 0 {
                presentationsToDiscard -= 1
                outcome = .discarded
            } else {
                outcome = .presented(at: time, sequence: sequence)
            }
            dispatcher.deliver(PresentationFeedback(refreshIndex: frame, outcome: outcome))
        }
        guard isRequestingRefreshes else { return }
        let event = RefreshEvent(
            timestamp: time,
            sequence: reportsSequence ? sequence : nil,
            refreshPeriod: refreshPeriod,
            targetTimestamp: time + refreshPeriod,
            provenance: provenance,
            followsStall: stalled
        )
        stalled = false
        let index = dispatcher.dispatch(event)
        deliveredCount += 1
        pendingPresentation = index
        if isRequestingRefreshes { requestCount += 1 }
    }
}

/// A small, fast, reproducible generator (SplitMix64): the same seed gives the same numbers on
/// every platform, so jitter scripts and fault schedules are deterministic.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
