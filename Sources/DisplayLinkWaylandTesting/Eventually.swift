/// Waits until `condition` holds: the one wait of the tests. It checks the condition every
/// `interval` and suspends in between, so the caller's actor runs meanwhile (on the main actor, the
/// main queue dispatches the compositor's events and the display link's callbacks). `limit` is a
/// hang guard, never a timing assertion: it only turns a hang into a failure, so pick it so that a
/// host several times slower than this one still passes. Returns whether the condition held.
package func eventually(
    within limit: Duration = .seconds(60),
    pollingEvery interval: Duration = .milliseconds(2),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while !condition() {
        guard clock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// ``eventually(within:pollingEvery:isolation:_:)`` for a condition that must itself suspend (it
/// asks another process, as a compositor's IPC does); a condition that throws counts as not yet.
package func eventually(
    within limit: Duration = .seconds(60),
    pollingEvery interval: Duration = .milliseconds(20),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while !((try? await condition()) ?? false) {
        guard clock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}
