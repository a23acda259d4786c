/// Handlers registered with an object, each removable by the number ``add(_:)`` returned.
struct HandlerList<Handler> {
    private(set) var entries: [(id: Int, handler: Handler)] = []
    private var nextID = 0

    mutating func add(_ handler: Handler) -> Int {
        nextID += 1
        entries.append((nextID, handler))
        return nextID
    }

    mutating func remove(_ id: Int) {
        entries.removeAll { $0.id == id }
    }
}
