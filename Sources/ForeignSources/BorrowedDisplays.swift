import DisplayLinkCore
internal import WaylandBackend

/// One borrowed connection per program display, shared by every source on its surfaces: one
/// event queue, so that a loop waiting on the display prepares one read and no event of the
/// library's waits in a second queue while it sleeps; one `wp_presentation` and one set of
/// outputs. Closed when its last source goes.
@MainActor
enum BorrowedDisplays {
    private struct Entry {
        let connection: WaylandConnection
        var users: Int
    }

    /// By display address, and whether `wp_presentation` is bound.
    private static var entries: [Key: Entry] = [:]

    private struct Key: Hashable {
        let display: UnsafeMutableRawPointer
        let presentation: Bool
    }

    /// The connection on `display`, made on first use.
    static func connection(
        on display: UnsafeMutableRawPointer, presentation: Bool, replyTimeout: Nanoseconds
    ) throws(WaylandError) -> WaylandConnection {
        let key = Key(display: display, presentation: presentation)
        if var entry = entries[key], entry.connection.error == nil {
            entry.users += 1
            entries[key] = entry
            return entry.connection
        }
        let connection = try WaylandConnection(
            borrowing: OpaquePointer(display),
            options: .init(bindPresentationTime: presentation, bindInputTimestamps: false, replyTimeout: replyTimeout))
        entries[key] = Entry(connection: connection, users: 1)
        return connection
    }

    /// A source on `connection` is gone: the connection closes with its last one.
    static func release(_ connection: WaylandConnection) {
        guard let key = entries.first(where: { $0.value.connection === connection })?.key, var entry = entries[key] else {
            connection.close()
            return
        }
        entry.users -= 1
        if entry.users > 0 {
            entries[key] = entry
        } else {
            entries[key] = nil
            connection.close()
        }
    }
}
