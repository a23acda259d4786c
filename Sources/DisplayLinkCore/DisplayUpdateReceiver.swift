/// The delegate form of a display link target (the seeds' `DisplayUpdateReceiver`).
///
/// Implement `displayWillUpdate(deltaTime:)`; implement `displayWillUpdate(_:)` instead when you
/// need the full ``DisplayFrame`` (its default calls the `deltaTime` form).
@MainActor
public protocol DisplayUpdateReceiver: AnyObject {
    func displayWillUpdate(deltaTime: Double)
    func displayWillUpdate(_ frame: DisplayFrame)
}

extension DisplayUpdateReceiver {
    public func displayWillUpdate(_ frame: DisplayFrame) {
        displayWillUpdate(deltaTime: frame.deltaTime)
    }
}
