/// Where a frame's `timestamp` came from: how much to trust it.
public enum TimestampProvenance: String, Sendable, Hashable, CaseIterable {
    /// The kernel's vblank time of a page flip (DRM/KMS): exact.
    case hardwareVBlank = "hardware-vblank"
    /// The compositor's presentation feedback (`wp_presentation`): what it says it presented.
    case presentationFeedback = "presentation-feedback"
    /// An estimate: inferred from when frame callbacks arrived on our clock (no presentation
    /// feedback), or a vblank predicted on the rhythm of earlier presentations (a refresh a
    /// program's own surface or a fed source brought no presentation for).
    case frameCallbackEstimate = "frame-callback-estimate"
    /// A low-rate timer while the display gives no callbacks (hidden surface, lost feedback).
    case timerFallback = "timer-fallback"
}
