import DisplayLinkCore
import DisplaySurface
import ForeignSources
import Glibc
internal import CDisplayLinkABI

/// `dl_get_fd` and `dl_dispatch`: the program's loop runs the library's work on the main thread.
///
/// One epoll descriptor holds the main queue's wake-up (libdispatch's eventfd: timers, the
/// library's own surfaces' Wayland and DRM events, starts) and the socket of every program display
/// a Wayland source is on. `dl_dispatch` dispatches what the program's own reading queued for the
/// library, prepares a read on each program display (so that no other reader, SDL 3's cursor
/// thread say, takes the library's events off the socket while it waits), waits, then reads or
/// gives the read up, and serves the main queue.
@MainActor
enum CEventLoop {
    private static var epoll: Int32 = -1
    private static var drain: MainQueueDrain?
    /// Program display sockets watched, with how many sources are on each.
    private static var watched: [Int32: Int] = [:]
    /// The display failures not yet returned by `dl_dispatch`.
    private static var failures: [String] = []
    private static var events = [epoll_event](repeating: epoll_event(), count: 16)
    /// One reader per program display, and those whose read is prepared: kept between calls, so
    /// that a call allocates nothing once they have grown. A reader outlives the sources closed
    /// during the wait's callbacks, so every prepared read is finished.
    private static var displays: [(reader: DisplayReader, fd: Int32)] = []
    private static var prepared: [(reader: DisplayReader, fd: Int32)] = []

    static func setUp() throws(CFailure) {
        guard epoll < 0 else { return }
        guard let drain = MainQueueDrain.resolve() else {
            throw .system("libdispatch gives no main queue descriptor: dl_dispatch cannot serve the main queue")
        }
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw .system("epoll_create1: \(String(cString: strerror(errno)))") }
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: drain.descriptor))
        guard epoll_ctl(fd, EPOLL_CTL_ADD, drain.descriptor, &event) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw .system("epoll_ctl (the main queue's descriptor): \(message)")
        }
        epoll = fd
        self.drain = drain
    }

    /// The loop reads `source`'s display from now on; returns the socket watched.
    static func watch(_ source: ForeignWaylandSurface) throws(CFailure) -> Int32 {
        try setUp()
        source.beginDirectReading()
        let fd = source.fileDescriptor
        guard fd >= 0 else { return -1 }
        if let users = watched[fd] {
            watched[fd] = users + 1
            return fd
        }
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(fd: fd))
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw .system("epoll_ctl (the display's socket): \(String(cString: strerror(errno)))")
        }
        watched[fd] = 1
        return fd
    }

    /// A source on the display of socket `fd` is going or failed: the socket leaves the set with
    /// its last source (a failed display's socket stays readable, hung up, and would wake every wait).
    static func unwatch(_ fd: Int32) {
        guard fd >= 0, let users = watched[fd] else { return }
        if users > 1 {
            watched[fd] = users - 1
        } else {
            watched[fd] = nil
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        }
    }

    static func failed(_ message: String) {
        failures.append(message)
    }

    static func warn(_ message: String) {
        let line = "displaylink: warning: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    static var descriptor: Int32 { epoll }

    /// One batch of work, waiting at most `timeout` ms (-1: until there is some).
    static func dispatch(timeout: Int32) throws(CFailure) -> Int32 {
        try setUp()
        let before = CLinks.callbacksRun
        // One source per program display: they share its connection and queue.
        displays.removeAll(keepingCapacity: true)
        prepared.removeAll(keepingCapacity: true)
        defer {
            displays.removeAll(keepingCapacity: true)
            prepared.removeAll(keepingCapacity: true)
        }
        for entry in CSources.table.all {
            guard case .wayland(let source) = entry.kind, entry.failure == nil, let reader = source.reader,
                !displays.contains(where: { $0.reader.identity == reader.identity })
            else { continue }
            displays.append((reader, reader.fileDescriptor))
        }
        for display in displays where display.reader.prepareToWait() { prepared.append(display) }
        // Callbacks that ran while dispatching what was queued: the wait would only delay them.
        let wait = CLinks.callbacksRun != before ? 0 : timeout
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), wait)
        }
        let interrupted = count < 0 && errno == EINTR
        let waitError = count < 0 && !interrupted ? String(cString: strerror(errno)) : nil
        let ready = max(0, Int(count))
        var mainQueue = false
        for index in 0..<ready where events[index].data.fd == drain?.descriptor { mainQueue = true }
        for display in prepared {
            var readable = false
            for index in 0..<ready where events[index].data.fd == display.fd { readable = true }
            display.reader.finishWait(readable: readable)
        }
        if mainQueue { drain?.run() }
        if let waitError { throw .system("epoll_wait: \(waitError)") }
        if !failures.isEmpty {
            let message = failures.joined(separator: "; ")
            failures.removeAll()
            throw .display(message)
        }
        return Int32(clamping: CLinks.callbacksRun - before)
    }
}

@_cdecl("dl_get_fd")
public func dl_get_fd() -> Int32 {
    entry { () throws(CFailure) in
        try CEventLoop.setUp()
        return CEventLoop.descriptor
    }
}

@_cdecl("dl_dispatch")
public func dl_dispatch(_ timeout: Int32) -> Int32 {
    entry { () throws(CFailure) in
        guard timeout >= -1 else {
            throw .invalidArgument("dl_dispatch: timeout_ms \(timeout) (-1: wait, 0: do not wait, > 0: at most that long)")
        }
        return try CEventLoop.dispatch(timeout: timeout)
    }
}
