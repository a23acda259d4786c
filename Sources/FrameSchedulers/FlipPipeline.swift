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
/// - back to one after ``fastFramesToReturn`` frames in a row were submitted within three quarters
///   of a period of their vblank (the flip event's delay included): with one frame in flight such
///   a frame leaves a quarter for the driver's latch. A stricter bound is rarely met that many
///   times in a row where frame times scatter, and one miss would then keep a period more latency
///   for good (see "Measured" below).
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

    /// A frame was submitted `sinceVblank` after the vblank its callback was for.
    /// - Parameters:
    ///   - sinceVblank: from that vblank to the frame's submission: the flip event's delay and the
    ///     drawing, what one frame in flight must fit in a period.
    ///   - period: the display's refresh period.
    ///   - flipPending: an earlier frame's flip has not completed yet.
    ///   - missedItsVblank: the vblank after the callback's has already passed.
    public mutating func frameSubmitted(
        sinceVblank: Nanoseconds, period: Nanoseconds, flipPending: Bool,
        missedItsVblank: Bool
    ) -> Decision {
        if depth == 2 {
            // Within three quarters of a period (without overflow on any input).
            fastFrames = sinceVblank.value <= period.value &- period.value / 4 ? fastFrames + 1 : 0
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

// Measured: llvmpipe draws the bounce scene (640x480) in the vkms VM (qemu TCG) in 5 ms typically,
// a few frames in a hundred over 8 ms; with the return counted within half a period, one miss kept
// two frames in flight (latency 32.7 ms instead of 16.3) for the rest of a 600-frame run
// (2026-11-27).
