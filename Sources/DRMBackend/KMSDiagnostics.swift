import DisplayLinkCore

/// What the kernel reported and what was submitted, kept for tests and diagnostics: counters and
/// fixed rings filled without allocating.
struct KMSDiagnostics {
    static let capacity = 4096

    private(set) var flipsSubmitted = 0
    var flipsCompleted = 0
    /// Flips refused as busy since the last completed one, and how many had completed then.
    var busyStreak = 0
    var busyStreakFlips = 0
    /// Vblank events queued because nothing was drawn.
    var idleTicks = 0
    /// Page flips the kernel refused as busy (`EBUSY`), their frames dropped.
    var flipsRefusedAsBusy = 0
    private var vblankRing = [DRMDisplay.KernelVblank](
        repeating: .init(sequence: 0, time: .zero, kind: .vblank),
        count: KMSDiagnostics.capacity)
    private var vblankCount = 0
    private var flipSubmissionRing = [MonotonicInstant](repeating: .zero, count: KMSDiagnostics.capacity)

    mutating func record(_ vblank: DRMDisplay.KernelVblank) {
        vblankRing[vblankCount % KMSDiagnostics.capacity] = vblank
        vblankCount &+= 1
    }

    mutating func flipSubmitted(at time: MonotonicInstant) {
        flipSubmissionRing[flipsSubmitted % KMSDiagnostics.capacity] = time
        flipsSubmitted += 1
    }

    var recentKernelVblanks: [DRMDisplay.KernelVblank] {
        let n = min(vblankCount, KMSDiagnostics.capacity)
        return (vblankCount - n..<vblankCount).map { vblankRing[$0 % KMSDiagnostics.capacity] }
    }

    var recentFlipSubmissions: [MonotonicInstant] {
        let n = min(flipsSubmitted, KMSDiagnostics.capacity)
        return (flipsSubmitted - n..<flipsSubmitted).map { flipSubmissionRing[$0 % KMSDiagnostics.capacity] }
    }
}

extension DRMDisplay {
    /// A vblank the kernel reported: by a flip event, a queued vblank event, or a read of the
    /// current vblank (after a late frame).
    public struct KernelVblank: Sendable, Hashable {
        public enum Kind: Sendable, Hashable { case flip, vblank, current }
        /// The 64-bit sequence (flip events' 32-bit counter extended).
        public var sequence: UInt64
        public var time: MonotonicInstant
        public var kind: Kind
    }

    /// The last (up to 4096) vblanks the kernel reported, oldest first.
    public var recentKernelVblanks: [KernelVblank] { diagnostics.recentKernelVblanks }

    /// When the last (up to 4096) page flips were submitted, oldest first (the mode set is not one).
    public var recentFlipSubmissions: [MonotonicInstant] { diagnostics.recentFlipSubmissions }

    /// Page flips submitted and completed.
    public var flipsSubmitted: Int { diagnostics.flipsSubmitted }
    public var flipsCompleted: Int { diagnostics.flipsCompleted }
    /// Vblank events queued because nothing was drawn.
    public var idleTicks: Int { diagnostics.idleTicks }
    /// Page flips the kernel refused as busy (`EBUSY`): each frame dropped, the display going on.
    public var flipsRefusedAsBusy: Int { diagnostics.flipsRefusedAsBusy }

    /// Counts a flip refused as busy; logs the first and every 100th at debug level, and warns
    /// once when ``busyStreakWarning`` refusals come with no flip completed between them (a CRTC
    /// held by another commit shows nothing, while callbacks go on).
    func flipRefusedAsBusy() {
        diagnostics.flipsRefusedAsBusy += 1
        let count = diagnostics.flipsRefusedAsBusy
        if diagnostics.busyStreakFlips != diagnostics.flipsCompleted {
            diagnostics.busyStreakFlips = diagnostics.flipsCompleted
            diagnostics.busyStreak = 0
        }
        diagnostics.busyStreak += 1
        if diagnostics.busyStreak == DRMDisplay.busyStreakWarning {
            DRMDisplay.log.warning(
                """
                \(crtc.flipOperation) refused as busy (EBUSY) \(DRMDisplay.busyStreakWarning) times with no flip completed: \
                another commit holds the CRTC, so nothing new is shown while callbacks go on (another DRM master, or a \
                driver that never completes a flip; DisplaySurface.Options.kmsAPI = .legacy tries the other API)
                """)
        }
        guard count == 1 || count % 100 == 0 else { return }
        DRMDisplay.log.debug("\(crtc.flipOperation) refused as busy (EBUSY, \(count) so far): the frame is dropped, callbacks go on")
    }

    /// Refusals in a row (no flip completed) after which a warning says nothing new is shown.
    static let busyStreakWarning = 60
}
