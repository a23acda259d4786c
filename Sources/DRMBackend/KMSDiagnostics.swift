import DisplayLinkCore

/// What the kernel reported and what was submitted, kept for tests and diagnostics: counters and
/// fixed rings filled without allocating.
struct KMSDiagnostics {
    static let capacity = 4096

    private(set) var flipsSubmitted = 0
    var flipsCompleted = 0
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

    /// Counts a flip refused as busy; logs the first and every 100th (a driver that stays busy
    /// shows no frame, while callbacks go on).
    func flipRefusedAsBusy() {
        diagnostics.flipsRefusedAsBusy += 1
        let count = diagnostics.flipsRefusedAsBusy
        guard count == 1 || count % 100 == 0 else { return }
        DRMDisplay.log.debug("\(crtc.flipOperation) refused as busy (EBUSY, \(count) so far): the frame is dropped, callbacks go on")
    }
}
