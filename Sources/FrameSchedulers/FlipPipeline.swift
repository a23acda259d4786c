import DisplayLinkCore

/// How many frames a DRM display keeps in flight, decided frame by frame (no DRM calls here).
///
/// Legacy page flips allow one flip pending per CRTC. With one frame in flight the callback runs
/// at the flip event, and its frame must be drawn, swapped and flipped before the next vblank, or
/// it lands a whole refresh late. A renderer that needs nearly a whole period (software
/// rasterisation, a slow GPU) then halves the frame rate.
///
/// With two frames in flight, a frame submitted while a flip is still pending is held and flipped
/// the moment that flip completes, and the next callback runs right after: drawing gets the whole
/// period, at the price of one more refresh of latency (the link's `targetTimestamp` says so:
/// two periods after `timestamp`). This is GNOME's "dynamic triple buffering", in small:
/// - one frame in flight to start with;
/// - two from the first frame that was submitted after the vblank it was meant for had passed;
/// - back to one after ``fastFramesToReturn`` frames in a row were drawn within three quarters of a
///   period: with one frame in flight such a frame leaves a quarter for the flip event's delay and
///   the driver's latch. Half a period is rarely met 120 times in a row where frame times scatter,
///   as llvmpipe's do under emulation (5 ms typical, a few in a hundred over 8 ms): one miss would
///   keep two frames in flight, a period more latency, for good.
public struct FlipPipeline: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Flip now.
        case flip
        /// A flip is pending: keep the frame and flip it when that flip completes.
        case hold
        /// Flip now, and start drawing the next frame at once (the vblank it was meant for has
        /// passed; from now on two frames are in flight).
        case flipAndStartNext
    }

    /// Frames allowed in flight: 1 or 2.
    public private(set) var depth = 1
    private var fastFrames = 0
    private var draining = false
    public static let fastFramesToReturn = 120

    public init() {}

    /// A frame was submitted `renderTime` after its callback began.
    /// - Parameters:
    ///   - renderTime: from the callback's start to the frame's submission.
    ///   - period: the display's refresh period.
    ///   - flipPending: an earlier frame's flip has not completed yet.
    ///   - missedItsVblank: the vblank after the callback's has already passed.
    public mutating func frameSubmitted(
        renderTime: Nanoseconds, period: Nanoseconds, flipPending: Bool,
        missedItsVblank: Bool
    ) -> Decision {
        if depth == 2 {
            // Within three quarters of a period (without overflow on any input).
            fastFrames = renderTime.value <= period.value &- period.value / 4 ? fastFrames + 1 : 0
            if fastFrames >= FlipPipeline.fastFramesToReturn {
                depth = 1
                fastFrames = 0
                draining = flipPending
            }
        }
        if flipPending { return .hold }
        if missedItsVblank {
            depth = 2
            fastFrames = 0
            draining = false
            return .flipAndStartNext
        }
        return .flip
    }

    /// A flip completed; `hasHeldFrame`: a frame is waiting for it. Returns whether the next
    /// callback runs now (not while a return to one frame in flight drains the held frame).
    public mutating func flipCompleted(hasHeldFrame: Bool) -> Bool {
        if hasHeldFrame && draining {
            draining = false
            return false
        }
        return true
    }
}
