import DisplayLinkCore
import SystemPackage

/// A page flip's completion as the kernel reported it, before the display acts on it.
package struct FlipEventReport: Sendable, Equatable {
    /// The vblank counter at the flip (32 bits, as the event carries it).
    package var sequence: UInt32
    package var time: MonotonicInstant
    /// The CRTC the event names; nil when the driver's events name none (`page_flip_handler`).
    package var crtcID: UInt32?
}

/// Where the kernel's answers enter a ``DRMDisplay``, open to tests that make it misbehave (the
/// kernel cannot be made to send a bad flip event, and the display never makes the second commit
/// that would be refused as busy). Nil by default: the per-frame cost is one nil check each.
package struct KMSFaultHooks {
    /// Called with each page flip's completion before the display reads it; may rewrite it.
    package var flipEvent: (@MainActor (inout FlipEventReport) -> Void)?
    /// Called for each page flip instead of its commit, with the frame's framebuffer and the real
    /// commit (a framebuffer, and whether it asks for a completion event: the display's flips do,
    /// and the event carries the display). Returns what the commit returned, or a refusal made up
    /// without committing.
    package var flipCommit: (@MainActor (_ fb: UInt32, _ commit: (_ fb: UInt32, _ event: Bool) -> Errno?) -> Errno?)?

    package init() {}
}
