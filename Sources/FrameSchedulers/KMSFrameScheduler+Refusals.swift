import DisplayLinkCore

extension KMSFrameScheduler {
    /// The kernel refused the flip just asked for as busy (`EBUSY`: a commit of the CRTC is still
    /// pending, none of this display's): the frame is dropped and never shown (its feedback, to
    /// deliver, says discarded), and no event is on its way for it. The callback it was drawn in
    /// ends as one that drew nothing (``callbackEnded(wantsRefreshes:)`` asks for a vblank event);
    /// a held frame refused at its flip leaves the shell to queue one (``idleVblankQueued()``).
    /// Its submission teaches nothing about the deadline.
    public mutating func flipRefused() -> PresentationFeedback? {
        guard let frame = flipping else { return nil }
        flipping = nil
        isWaitingForEvent = false
        wantsCurrentVblank = false
        submittedInCallback = false
        _ = submissions.take(refresh: frame.refresh)
        return PresentationFeedback(refreshIndex: frame.refresh, outcome: .discarded)
    }
}
