/// The delegate form of a display link target (the seeds' `DisplayUpdateReceiver`).
///
/// Implement either method, whichever the receiver needs:
///
/// ```swift
/// final class Mover: DisplayUpdateReceiver {          // only the delta, as in the seed
///     func displayWillUpdate(deltaTime: Double) { position += speed * deltaTime }
/// }
/// final class Painter: DisplayUpdateReceiver {        // the whole frame
///     func displayWillUpdate(_ frame: DisplayFrame) { draw(at: frame.targetTimestamp) }
/// }
/// let link = DisplayLink(source: source, receiver: mover)
/// ```
///
/// ``DisplayLink/init(source:receiver:)`` calls ``displayWillUpdate(_:)`` once per callback. Its
/// default implementation calls ``displayWillUpdate(deltaTime:)`` with the frame's `deltaTime`;
/// the default of ``displayWillUpdate(deltaTime:)`` does nothing. So the defaults never call each
/// other in a loop: a receiver that implements only the frame form gets every frame, one that
/// implements only the delta form gets every delta, one that implements both gets the frame form
/// only (call the other yourself if you want both), and one that implements neither is never
/// told anything.
@MainActor
public protocol DisplayUpdateReceiver: AnyObject {
    /// Called with the seconds since the previous callback: 0 on the first callback, after a
    /// resume and after a stall (see ``DisplayLink/deltaTime``).
    func displayWillUpdate(deltaTime: Double)
    /// Called with all of the callback's values (see ``DisplayLink/frame``).
    func displayWillUpdate(_ frame: DisplayFrame)
}

extension DisplayUpdateReceiver {
    /// Calls ``displayWillUpdate(deltaTime:)`` with `frame.deltaTime`.
    public func displayWillUpdate(_ frame: DisplayFrame) {
        displayWillUpdate(deltaTime: frame.deltaTime)
    }

    /// Does nothing: a receiver that implements only ``displayWillUpdate(_:)`` needs no delta
    /// form, and this default must not call the frame form back (that would loop).
    public func displayWillUpdate(deltaTime: Double) {}
}
