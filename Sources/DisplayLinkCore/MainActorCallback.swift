/// Runs `body` on the main actor from code the compiler cannot see is on it, where the library
/// guarantees the main thread by construction: C callbacks (Wayland listeners, libdrm's event
/// handlers) invoked from dispatch calls the library makes on the main actor, and blocks on the
/// main queue.
///
/// What `MainActor.assumeIsolated` does per call, and this does not, on every frame's path:
/// - it allocates (it wraps its closure to check that the closure did not escape);
/// - it asks the concurrency runtime whether this is the main actor's executor (thread-local
///   lookups and the main executor's metadata).
///
/// The isolation is checked in debug builds (`MainActor.preconditionIsolated`), where the tests
/// run. `body` takes its inputs as `arguments` and must capture nothing: a closure that captures
/// values is allocated, which is what this is for avoiding.
@inlinable @inline(__always)
package func onMainActor<Arguments, Result>(
    _ arguments: Arguments, _ body: @escaping @MainActor (Arguments) -> Result
) -> Result {
    #if DEBUG
        MainActor.preconditionIsolated()
    #endif
    return unsafeBitCast(body, to: ((Arguments) -> Result).self)(arguments)
}
