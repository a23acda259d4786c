import DisplaySurface
internal import CDisplayLinkABI

/// A failure of a C call: its `dl_result` and the message `dl_error_message()` returns.
struct CFailure: Error {
    let code: Int32
    let message: String

    static func invalidArgument(_ message: String) -> CFailure { CFailure(code: DL_ERROR_INVALID_ARGUMENT.rawValue, message: message) }
    static func invalidHandle(_ message: String) -> CFailure { CFailure(code: DL_ERROR_INVALID_HANDLE.rawValue, message: message) }
    static func display(_ message: String) -> CFailure { CFailure(code: DL_ERROR_DISPLAY.rawValue, message: message) }
    static func unsupported(_ message: String) -> CFailure { CFailure(code: DL_ERROR_UNSUPPORTED.rawValue, message: message) }
    static func invalidated(_ message: String) -> CFailure { CFailure(code: DL_ERROR_INVALIDATED.rawValue, message: message) }
    static func system(_ message: String) -> CFailure { CFailure(code: DL_ERROR_SYSTEM.rawValue, message: message) }
}

/// The last failure's message, as a C string owned here until the next failure replaces it.
/// Touched only on the main thread (every entry point checks it first).
enum LastError {
    nonisolated(unsafe) private static var storage: UnsafeMutablePointer<CChar>?

    static func set(_ message: String) {
        storage?.deallocate()
        let bytes = Array(message.utf8CString)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        copy.initialize(from: bytes, count: bytes.count)
        storage = copy
    }

    static func clear() {
        storage?.deallocate()
        storage = nil
    }

    static var pointer: UnsafePointer<CChar> { storage.map { UnsafePointer($0) } ?? CStrings.empty }
}

/// C strings that live as long as the process.
enum CStrings {
    nonisolated(unsafe) static let empty = literal("")
    nonisolated(unsafe) static let wrongThread = literal(
        """
        displaylink: called on a thread other than the main thread; every dl_ function must be called on the \
        thread that runs main() (callbacks run there too)
        """)

    static func literal(_ text: String) -> UnsafePointer<CChar> {
        let bytes = Array(text.utf8CString)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        copy.initialize(from: bytes, count: bytes.count)
        return UnsafePointer(copy)
    }
}

/// Runs one C entry point: on the main thread only, with its failure turned into a return code
/// and a message. `body` returns the call's non-negative result.
///
/// The main thread is checked here, so `body` runs on the main actor's thread: it is called as the
/// nonisolated function it is by construction, not through `MainActor.assumeIsolated`, which
/// allocates on every call (`DisplayLinkCore`'s `onMainActor` says why), and the per-frame calls
/// (`dl_dispatch`, `dl_source_will_commit`, `dl_source_will_submit`, `dl_source_presented`) allocate nothing.
func entry(_ body: @MainActor () throws(CFailure) -> Int32) -> Int32 {
    guard MainQueueDrain.isMainThread else { return DL_ERROR_WRONG_THREAD.rawValue }
    return withoutActuallyEscaping(body) { body in
        let run = unsafeBitCast(body, to: (() throws(CFailure) -> Int32).self)
        do throws(CFailure) {
            return try run()
        } catch {
            LastError.set(error.message)
            return error.code
        }
    }
}

@_cdecl("dl_error_message")
public func dl_error_message() -> UnsafePointer<CChar> {
    guard MainQueueDrain.isMainThread else { return CStrings.wrongThread }
    return LastError.pointer
}

nonisolated(unsafe) private let resultNames: [Int32: UnsafePointer<CChar>] = [
    DL_OK.rawValue: CStrings.literal("DL_OK"),
    DL_ERROR_INVALID_ARGUMENT.rawValue: CStrings.literal("DL_ERROR_INVALID_ARGUMENT"),
    DL_ERROR_INVALID_HANDLE.rawValue: CStrings.literal("DL_ERROR_INVALID_HANDLE"),
    DL_ERROR_WRONG_THREAD.rawValue: CStrings.literal("DL_ERROR_WRONG_THREAD"),
    DL_ERROR_DISPLAY.rawValue: CStrings.literal("DL_ERROR_DISPLAY"),
    DL_ERROR_UNSUPPORTED.rawValue: CStrings.literal("DL_ERROR_UNSUPPORTED"),
    DL_ERROR_INVALIDATED.rawValue: CStrings.literal("DL_ERROR_INVALIDATED"),
    DL_ERROR_SYSTEM.rawValue: CStrings.literal("DL_ERROR_SYSTEM")
]
nonisolated(unsafe) private let unknownName = CStrings.literal("unknown")

@_cdecl("dl_result_name")
public func dl_result_name(_ result: Int32) -> UnsafePointer<CChar> {
    resultNames[result] ?? unknownName
}
