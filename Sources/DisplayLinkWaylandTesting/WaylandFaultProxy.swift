import Dispatch
import Glibc
import Synchronization

/// A Wayland socket in front of a real compositor that forwards everything, both ways, file
/// descriptors included, except that it applies one ``WaylandFault`` to the events that time
/// frames, on a seeded ``WaylandFaultSchedule`` (the decisions: ``WaylandFaultInjector``). Point a
/// client at ``socketPath`` (or, for a child process, `XDG_RUNTIME_DIR` = ``runtimeDirectory`` and the
/// socket's name) to see what it does when its compositor misbehaves.
///
/// One thread serves every client connection, each with its own injector, and keeps the proxy
/// alive while it serves: call ``stop()`` (a `defer` right after creating it), which closes the
/// connections and removes the socket; the compositor behind it keeps running.
public final class WaylandFaultProxy: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case socket(operation: String, errno: Int32)

        public var description: String {
            switch self {
            case .socket(let operation, let e): "the fault proxy could not \(operation): \(String(cString: strerror(e)))"
            }
        }
    }

    /// What the proxy has done so far, over all its connections.
    public struct Tally: Sendable, Equatable {
        /// Events the fault could act on.
        public var candidates = 0
        /// Times the fault was applied.
        public var applied = 0
        /// Frame callbacks' `done` events the compositor sent (whatever the fault made of them).
        public var frameCallbacksFromCompositor = 0
        /// Client connections accepted.
        public var connections = 0
    }

    public let schedule: WaylandFaultSchedule
    /// The absolute path of the proxy's socket.
    public let socketPath: String
    /// The directory of the socket: `XDG_RUNTIME_DIR` for a client process.
    public let runtimeDirectory: String
    private let upstreamPath: String
    /// The compositor behind, when the proxy was made in front of a private one.
    let upstream: (any PrivateCompositor)?
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let state = Mutex(Tally())
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// Listens in a new runtime directory and forwards each client to the compositor at
    /// `upstreamSocket` (an absolute path).
    public convenience init(upstreamSocket: String, schedule: WaylandFaultSchedule) throws {
        try self.init(upstreamSocket: upstreamSocket, upstream: nil, schedule: schedule)
    }

    /// In front of one of this module's private compositors (its log and process are the proxy's).
    package convenience init(in front: any PrivateCompositor, schedule: WaylandFaultSchedule) throws {
        try self.init(upstreamSocket: front.socketPath, upstream: front, schedule: schedule)
    }

    private init(upstreamSocket: String, upstream: (any PrivateCompositor)?, schedule: WaylandFaultSchedule) throws {
        self.schedule = schedule
        self.upstreamPath = upstreamSocket
        self.upstream = upstream
        var template = Array("/tmp/displaylink-proxy-XXXXXX".utf8CString)
        guard let directory = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure.socket(operation: "create its runtime directory", errno: errno)
        }
        runtimeDirectory = String(cString: directory)
        socketPath = runtimeDirectory + "/wayland-proxy"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.socket(operation: "create a socket", errno: errno) }
        guard Self.withAddress(socketPath, { bind(fd, $0, $1) }) == 0, listen(fd, 8) == 0 else {
            let e = errno
            close(fd)
            throw Failure.socket(operation: "listen at \(socketPath)", errno: e)
        }
        listener = fd
        var pipeFds: [Int32] = [0, 0]
        guard pipe(&pipeFds) == 0 else {
            let e = errno
            close(fd)
            throw Failure.socket(operation: "create its wake pipe", errno: e)
        }
        wake = (pipeFds[0], pipeFds[1])
        _ = fcntl(pipeFds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeFds[1], F_SETFD, FD_CLOEXEC)
        let thread = DispatchQueue(label: "displaylink.fault-proxy")
        thread.async { [self] in
            serve()
            finished.signal()
        }
    }

    deinit { stop() }

    /// What the proxy has done so far.
    public var tally: Tally { state.withLock { $0 } }

    /// Closes every connection and the socket, and removes the runtime directory. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        close(wake.read)
        close(wake.write)
        close(listener)
        unlink(socketPath)
        rmdir(runtimeDirectory)
    }

    // MARK: The forwarding thread

    private final class Connection {
        let client: Int32
        let server: Int32
        var injector: WaylandFaultInjector
        var fromClient = WaylandWireReader()
        var fromServer = WaylandWireReader()
        /// Descriptors from the compositor not yet passed on (they go with the next bytes).
        var pendingFds: [Int32] = []
        var isOpen = true

        init(client: Int32, server: Int32, schedule: WaylandFaultSchedule) {
            self.client = client
            self.server = server
            injector = WaylandFaultInjector(schedule: schedule)
        }

        func close() {
            guard isOpen else { return }
            isOpen = false
            pendingFds.forEach { _ = Glibc.close($0) }
            pendingFds = []
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            _ = Glibc.close(client)
            _ = Glibc.close(server)
        }
    }

    private func serve() {
        var connections: [Connection] = []
        defer { connections.forEach { $0.close() } }
        while true {
            connections.removeAll { !$0.isOpen }
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for connection in connections {
                fds.append(pollfd(fd: connection.client, events: Int16(POLLIN), revents: 0))
                fds.append(pollfd(fd: connection.server, events: Int16(POLLIN), revents: 0))
            }
            let now = Self.now()
            let next = connections.compactMap(\.injector.nextRelease).min()
            let timeout = next.map { Int32(clamping: max(0, ($0 - now + 999_999) / 1_000_000)) } ?? -1
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0, errno != EINTR { return }
            if fds[0].revents != 0 { return }
            // The connections polled; one accepted now is polled from the next turn.
            let polled = connections
            if fds[1].revents & Int16(POLLIN) != 0 { accept(into: &connections) }
            for (index, connection) in polled.enumerated() {
                let clientEvents = fds[2 + 2 * index].revents
                let serverEvents = fds[3 + 2 * index].revents
                if clientEvents != 0 { forwardRequests(connection) }
                if connection.isOpen, serverEvents != 0 { forwardEvents(connection) }
                if connection.isOpen { send(connection.injector.due(at: Self.now()), on: connection) }
            }
            for connection in connections where connection.isOpen {
                send(connection.injector.due(at: Self.now()), on: connection)
            }
        }
    }

    private func accept(into connections: inout [Connection]) {
        let client = Glibc.accept(listener, nil, nil)
        guard client >= 0 else { return }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard server >= 0, Self.withAddress(upstreamPath, { connect(server, $0, $1) }) == 0 else {
            if server >= 0 { close(server) }
            close(client)
            return
        }
        connections.append(Connection(client: client, server: server, schedule: schedule))
        state.withLock { $0.connections += 1 }
    }

    private func forwardRequests(_ connection: Connection) {
        guard let (bytes, fds) = Self.receive(connection.client) else { return connection.close() }
        for message in connection.fromClient.append(bytes) { connection.injector.clientSent(message) }
        if !Self.send(connection.server, bytes, fds) { connection.close() }
        fds.forEach { _ = close($0) }
    }

    private func forwardEvents(_ connection: Connection) {
        guard let (bytes, fds) = Self.receive(connection.server) else { return connection.close() }
        connection.pendingFds += fds
        guard !connection.fromServer.isMalformed else {
            // Past a malformed header the stream cannot be followed: pass it on as it is.
            return send([.forward(bytes)], on: connection)
        }
        let now = Self.now()
        var outputs: [WaylandFaultInjector.Output] = []
        for message in connection.fromServer.append(bytes) {
            if message.opcode == 0, message.argumentCount == 1, connection.injector.isFrameCallback(message.sender) {
                state.withLock { $0.frameCallbacksFromCompositor += 1 }
            }
            outputs += connection.injector.serverSent(message, at: now)
        }
        send(outputs, on: connection)
    }

    private func send(_ outputs: [WaylandFaultInjector.Output], on connection: Connection) {
        guard connection.isOpen else { return }
        state.withLock {
            $0.candidates = max($0.candidates, connection.injector.candidateCount)
            $0.applied = max($0.applied, connection.injector.appliedCount)
        }
        var bytes: [UInt8] = []
        var cut = false
        for output in outputs {
            switch output {
            case .forward(let message): bytes += message
            case .cut(let part):
                bytes += part
                cut = true
            }
        }
        if !bytes.isEmpty {
            let fds = connection.pendingFds
            connection.pendingFds = []
            let sent = Self.send(connection.client, bytes, fds)
            fds.forEach { _ = close($0) }
            if !sent { return connection.close() }
        }
        if cut { connection.close() }
    }

    // MARK: Sockets

    private static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let utf8 = Array(path.utf8)
        guard utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: utf8)
            raw[utf8.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// The control message layout of SCM_RIGHTS on 64-bit Linux: a 16-byte header (length,
    /// level, type), then the descriptors.
    private static let controlHeader = 16
    private static let maxFds = 28

    /// Reads what is there, with any descriptors; nil at the end of the stream or on an error.
    private static func receive(_ fd: Int32) -> (bytes: [UInt8], fds: [Int32])? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var control = [UInt8](repeating: 0, count: controlHeader + 4 * maxFds)
        var count = 0
        var controlLength = 0
        buffer.withUnsafeMutableBytes { data in
            control.withUnsafeMutableBytes { controlBytes in
                var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
                withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var header = msghdr()
                    header.msg_iov = vectorPointer
                    header.msg_iovlen = 1
                    header.msg_control = controlBytes.baseAddress
                    header.msg_controllen = controlBytes.count
                    repeat { count = recvmsg(fd, &header, Int32(MSG_CMSG_CLOEXEC)) } while count < 0 && errno == EINTR
                    controlLength = header.msg_controllen
                }
            }
        }
        guard count > 0 else { return nil }
        var fds: [Int32] = []
        var offset = 0
        while offset + controlHeader <= controlLength {
            let (length, level, type) = control.withUnsafeBytes {
                (
                    Int($0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                    $0.loadUnaligned(fromByteOffset: offset + 8, as: Int32.self),
                    $0.loadUnaligned(fromByteOffset: offset + 12, as: Int32.self)
                )
            }
            guard length >= controlHeader, offset + length <= controlLength else { break }
            if level == SOL_SOCKET, type == Int32(SCM_RIGHTS) {
                for i in 0..<((length - controlHeader) / 4) {
                    fds.append(control.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + controlHeader + 4 * i, as: Int32.self) })
                }
            }
            offset += (length + 7) & ~7
        }
        return (Array(buffer.prefix(count)), fds)
    }

    /// Writes all of `bytes`, the descriptors with the first part; false on an error.
    private static func send(_ fd: Int32, _ bytes: [UInt8], _ fds: [Int32]) -> Bool {
        var offset = 0
        var fdsToSend = fds
        while offset < bytes.count {
            let chunk = fdsToSend.prefix(maxFds)
            var control = [UInt8](repeating: 0, count: chunk.isEmpty ? 0 : controlHeader + 4 * chunk.count)
            if !chunk.isEmpty {
                control.withUnsafeMutableBytes { raw in
                    raw.storeBytes(of: UInt64(controlHeader + 4 * chunk.count), toByteOffset: 0, as: UInt64.self)
                    raw.storeBytes(of: SOL_SOCKET, toByteOffset: 8, as: Int32.self)
                    raw.storeBytes(of: Int32(SCM_RIGHTS), toByteOffset: 12, as: Int32.self)
                    for (i, descriptor) in chunk.enumerated() {
                        raw.storeBytes(of: descriptor, toByteOffset: controlHeader + 4 * i, as: Int32.self)
                    }
                }
            }
            let written: Int = bytes.withUnsafeBytes { data in
                control.withUnsafeMutableBytes { controlBytes in
                    var vector = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: data.baseAddress! + offset), iov_len: data.count - offset)
                    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                        var header = msghdr()
                        header.msg_iov = vectorPointer
                        header.msg_iovlen = 1
                        header.msg_control = controlBytes.isEmpty ? nil : controlBytes.baseAddress
                        header.msg_controllen = controlBytes.count
                        var result: Int
                        repeat { result = sendmsg(fd, &header, Int32(MSG_NOSIGNAL)) } while result < 0 && errno == EINTR
                        return result
                    }
                }
            }
            guard written > 0 else { return false }
            fdsToSend.removeFirst(chunk.count)
            offset += written
        }
        return true
    }
}

extension WaylandFaultProxy: PrivateCompositor {
    /// The compositor's process group behind the proxy (0 without one).
    package var pid: pid_t { upstream?.pid ?? 0 }
    package var isRunning: Bool { upstream?.isRunning ?? true }
    /// The log of the compositor behind the proxy, with the proxy's schedule and tally.
    package func readLog() -> String {
        "fault proxy: \(schedule), \(tally)\n" + (upstream?.readLog() ?? "")
    }
}
