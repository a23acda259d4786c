import DisplayLinkCore

/// A scroll to a target offset over a duration with an easing curve, driven by a display link
/// (the seed's scroll animation).
///
/// The first frame after ``scroll(to:duration:curve:)`` records the start offset and that frame's
/// `timestamp`; each frame then computes `fraction = (targetTimestamp − start) / duration` (the
/// time the frame being prepared will be seen, not "now") and the offset
/// `start + (end − start)·curve(fraction)`. At `fraction ≥ 1` it snaps to exactly the end offset
/// and finishes; a fraction that goes backwards by more than half a refresh period (a clock step)
/// finishes it too. A smaller step back (a target predicted a little earlier than the last one,
/// e.g. when the frames in flight change on a jittery vblank clock) holds the previous offset.
public struct EasedScroll: Sendable {
    public private(set) var offset: Double
    public private(set) var isAnimating = false
    /// The fraction of the last frame (nil when idle).
    public private(set) var fraction: Double?
    public private(set) var target: Double
    public private(set) var duration: Double = 0
    public private(set) var curve: EasingCurve = .easeInOut
    /// The `timestamp` of the animation's first frame.
    public private(set) var startTime: MonotonicInstant?
    /// How many frames the last (or current) animation took.
    public private(set) var frameCount = 0

    private var startOffset: Double
    private var previousFraction = -Double.infinity

    public init(offset: Double = 0) {
        self.offset = offset
        self.target = offset
        self.startOffset = offset
    }

    /// Starts an animation from the current offset. A zero or negative duration jumps.
    public mutating func scroll(to end: Double, duration: Double, curve: EasingCurve = .easeInOut) {
        target = end
        self.duration = duration
        self.curve = curve
        startOffset = offset
        startTime = nil
        previousFraction = -.infinity
        frameCount = 0
        fraction = nil
        if duration <= 0 {
            offset = end
            isAnimating = false
        } else {
            isAnimating = true
        }
    }

    /// Jumps to an offset, ending any animation.
    public mutating func set(offset: Double) {
        self.offset = offset
        target = offset
        isAnimating = false
        fraction = nil
    }

    /// Advances to this frame; returns the offset to draw.
    @discardableResult
    public mutating func update(_ frame: DisplayFrame) -> Double {
        guard isAnimating else {
            fraction = nil
            return offset
        }
        if startTime == nil { startTime = frame.timestamp }
        frameCount += 1
        let f = (frame.targetTimestamp - startTime!).seconds / duration
        fraction = f
        let tolerance = frame.duration.seconds / 2 / duration
        if f >= 1 || f < previousFraction - tolerance {
            offset = target
            isAnimating = false
            return offset
        }
        if f < previousFraction {
            // Prediction jitter, not a clock step: hold the offset (never scroll backwards).
            fraction = previousFraction
            return offset
        }
        previousFraction = f
        offset = startOffset + (target - startOffset) * curve(f)
        return offset
    }
}
