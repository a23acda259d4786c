import SystemPackage
import Glibc
internal import CWayland
internal import CWaylandClient

/// Failure: what the compositor or the socket reported, and telling the error handlers once.
extension WaylandConnection {
    /// Returns the number that removes it (``removeErrorHandler(_:)``).
    @discardableResult
    public func addErrorHandler(_ handler: @escaping (WaylandError) -> Void) -> Int {
        errorHandlers.add(handler)
    }

    public func removeErrorHandler(_ id: Int) {
        errorHandlers.remove(id)
    }

    func readFailure() -> WaylandError {
        let code = wl_display_get_error(display)
        if code == EPROTO {
            var interface: UnsafePointer<CChar>?
            var objectID: UInt32 = 0
            let protocolCode = cwl_protocol_error(display, &interface, &objectID)
            return .protocolError(
                interface: interface.map { String(cString: $0) } ?? "unknown",
                objectID: objectID, code: protocolCode)
        }
        let lost = code != 0 ? code : errno
        return .connectionLost(errno: lost != 0 ? Errno(rawValue: lost) : nil)
    }

    func fail() {
        guard error == nil else { return }
        let failure = readFailure()
        error = failure
        if isPreparedToRead {
            isPreparedToRead = false
            wl_display_cancel_read(display)
        }
        endDirectReading()
        readSource?.cancel()
        writeSource?.cancel()
        writeSource = nil
        for entry in errorHandlers.entries { entry.handler(failure) }
        onError?(failure)
    }

    /// Reports a failure found outside the loop (e.g. a request made on a dead connection).
    func checkForFailure() {
        if error == nil && wl_display_get_error(display) != 0 { fail() }
    }
}
