import Dispatch

/// A one-shot wake-up on the main queue, made once and set again for each use: the backends'
/// timers (a low-latency callback's planned start, a held-commit check, a key repeat), which the
/// per-frame path re-arms without allocating.
@MainActor
package final class MainQueueTimer {
    private let source: DispatchSourceTimer

    /// `fired` runs on the main actor at each wake-up set with ``schedule(at:now:leeway:)``; it
    /// captures its owner weakly (the owner holds the timer).
    package init(_ fired: @escaping @MainActor () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .main)
        source.setEventHandler { onMainActor(fired) { $0() } }
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    isolated deinit { source.cancel() }

    /// One wake-up at `time` (at once when it has passed), replacing any set before.
    package func schedule(at time: MonotonicInstant, now: MonotonicInstant = .now(), leeway: Nanoseconds = .zero) {
        let wait = max(0, (time - now).value)
        source.schedule(deadline: .now() + .nanoseconds(Int(clamping: wait)), leeway: .nanoseconds(Int(clamping: leeway.value)))
    }

    /// No wake-up until the next ``schedule(at:now:leeway:)``.
    package func cancel() { source.schedule(deadline: .distantFuture) }
}
