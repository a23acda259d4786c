/// The C API's handles: `dl_source *` and `dl_link *` are numbers, not addresses, drawn from one
/// counter that never repeats, so that a null, destroyed or wrong-kind handle is always recognised
/// (never dereferenced) and named in the error.
@MainActor
struct HandleTable<Object: AnyObject> {
    /// What the objects are called in messages ("source", "link").
    let noun: String
    private var objects: [UInt: Object] = [:]

    init(noun: String) { self.noun = noun }

    /// Files `object` under a new handle.
    mutating func add(_ object: Object) -> OpaquePointer {
        let id = HandleCounter.next()
        objects[id] = object
        return OpaquePointer(bitPattern: id)!
    }

    /// The object of `handle`, or the error for a null, destroyed or wrong-kind one.
    func object(_ handle: OpaquePointer?) throws(CFailure) -> Object {
        guard let handle else { throw .invalidHandle("the \(noun) handle is NULL") }
        let id = UInt(bitPattern: handle)
        if let object = objects[id] { return object }
        if HandleCounter.isIssued(id) {
            throw .invalidHandle("the \(noun) handle \(id) is not a live \(noun) (destroyed, or a handle of another kind)")
        }
        throw .invalidHandle("\(id) is not a handle the library made")
    }

    mutating func remove(_ handle: OpaquePointer?) {
        guard let handle else { return }
        objects[UInt(bitPattern: handle)] = nil
    }

    var all: Dictionary<UInt, Object>.Values { objects.values }
}

/// The one counter handles are drawn from (both kinds: a link's number is never a source's).
@MainActor
enum HandleCounter {
    private static var last: UInt = 0

    static func next() -> UInt {
        last += 1
        return last
    }

    static func isIssued(_ id: UInt) -> Bool { id >= 1 && id <= last }
}
