import Dispatch
import Glibc
import Logging
import Synchronization
import SystemPackage
import KernelCall
internal import CSeat

/// Access to the display and input devices of a seat: through a seat manager (libseat, talking
/// to seatd or systemd-logind) so an ordinary user can become DRM master and read keys, or
/// directly (`open(2)` and `drmSetMaster`, for root or a user the device belongs to).
///
/// - With a seat manager the session is *enabled* while its VT (or logind session) is in the
///   foreground and *disabled* while another one is: ``addObserver(disabled:enabled:)``
///   registers what to do then. On a disable every observer runs (stops flipping, suspends
///   input), and only then is the seat told it may go (`libseat_disable_seat`): the seat manager
///   drops DRM master and revokes input devices after that. On an enable the devices are usable
///   again (master is back) and the observers run in the order they were added.
/// - The seat's connection is served from a read source on the main queue: no thread, no timer,
///   no wakeups while nothing happens.
/// - Opening waits for the session to be enabled (see ``Options/activationTimeout``): a program
///   started on a VT in the background shows when its VT is selected, as compositors do.
/// - Choosing (``Options/Manager/automatic``): the seat manager when one is running (seatd's
///   socket exists, or systemd-logind's `/run/systemd/seats` on a systemd system with a system
///   bus) and answers, else direct access (an error if this user may not open the device then). libseat is not
///   asked when no manager is seen, so its in-process ("builtin") seatd runs only when asked for
///   with `LIBSEAT_BACKEND=builtin` (or as libseat's last resort after a seen manager failed).
/// - Logs (label `displaylink.seat`, `.debug`): the choice and why, enable and disable, and
///   libseat's own messages.
@MainActor
public final class SeatSession {
    nonisolated static let log = Logger(label: "displaylink.seat")

    public struct Options: Sendable, Hashable {
        public enum Manager: String, Sendable, Hashable, CaseIterable {
            /// A seat manager when one is running, else the device opened directly.
            case automatic
            /// Only through a seat manager (libseat): an error if none answers.
            case seat
            /// Never a seat manager: devices opened directly (root, or a user allowed to open the
            /// card and become master).
            case direct
        }
        public var manager: Manager
        /// How long opening waits for an inactive session to become active (its VT selected)
        /// before failing with ``SeatSessionError/notActive(seat:waited:)``; nil: as long as it takes.
        public var activationTimeout: Duration?
        public init(manager: Manager = .automatic, activationTimeout: Duration? = nil) {
            self.manager = manager
            self.activationTimeout = activationTimeout
        }
    }

    /// How devices are reached.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// Through libseat on this seat.
        case seat(name: String)
        /// Opened directly.
        case direct
        public var description: String {
            switch self {
            case .seat(let name): "seat \(name) (libseat)"
            case .direct: "direct (no seat manager)"
            }
        }
    }

    /// A device opened in the session.
    public struct Device: Sendable, Hashable {
        public let path: String
        public let fd: Int32
        /// libseat's device id (nil when opened directly).
        let id: Int32?
    }

    public private(set) var kind: Kind
    /// Whether the session may use its devices now (false while another VT is in the foreground).
    public private(set) var isActive: Bool
    /// How often the session was disabled and enabled again (for tests and diagnostics).
    public private(set) var disableCount = 0
    public private(set) var enableCount = 0

    private var seat: OpaquePointer?
    private var source: DispatchSourceRead?
    private var observers: [(id: Int, disabled: @MainActor () -> Void, enabled: @MainActor () -> Void)] = []
    private var nextObserver = 0
    private var listener: UnsafeMutablePointer<libseat_seat_listener>?
    private var box: Unmanaged<SeatSession>?
    private var closed = false
    /// Direct access because no seat manager runs (not because it was asked for).
    private var noManager = false

    /// A session reaching devices directly.
    public init() {
        kind = .direct
        isActive = true
    }

    /// Opens a session as `options` say.
    public static func open(options: Options = Options()) throws(SeatSessionError) -> SeatSession {
        switch options.manager {
        case .direct:
            SeatSession.log.debug("session: direct device access (options.manager = .direct)")
            return SeatSession()
        case .seat:
            guard SeatSession.runningManager() != nil else {
                throw .noSeatManager(detail: "no seatd socket at \(SeatSession.seatdSocket), no systemd-logind, LIBSEAT_BACKEND not set")
            }
            return try SeatSession(seatOptions: options)
        case .automatic:
            if let manager = SeatSession.runningManager() {
                SeatSession.log.debug("session: through the seat manager (\(manager))")
                do {
                    return try SeatSession(seatOptions: options)
                } catch .noSeatManager(let detail) {
                    // Signs of one, but none answered: direct access if this process may.
                    SeatSession.log.debug("session: the seat manager did not answer (libseat: \(detail)); devices opened directly")
                    let session = SeatSession()
                    session.noManager = true
                    return session
                }
            }
            SeatSession.log.debug(
                """
                session: no seat manager running (no seatd socket at \(SeatSession.seatdSocket), no /run/systemd/seats); devices opened \
                directly
                """
            )
            let session = SeatSession()
            session.noManager = true
            return session
        }
    }

    /// Which seat manager is running, if any (what libseat would reach), or what
    /// `LIBSEAT_BACKEND` asks for.
    nonisolated static func runningManager() -> String? {
        if let asked = getenv("LIBSEAT_BACKEND").map({ String(cString: $0) }), !asked.isEmpty {
            return "LIBSEAT_BACKEND=\(asked)"
        }
        var info = stat()
        if stat(seatdSocket, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK { return "seatd at \(seatdSocket)" }
        // logind: its seats directory on a system booted with systemd and a system bus (a
        // container's root may carry a stale /run/systemd/seats).
        if access("/run/systemd/seats", F_OK) == 0 && access("/run/systemd/system", F_OK) == 0
            && access("/run/dbus/system_bus_socket", F_OK) == 0
        {
            return "systemd-logind"
        }
        return nil
    }

    nonisolated static var seatdSocket: String {
        if let path = getenv("SEATD_SOCK").map({ String(cString: $0) }), !path.isEmpty { return path }
        return "/run/seatd.sock"
    }

    private init(seatOptions options: Options) throws(SeatSessionError) {
        SeatSession.installLogHandler()
        isActive = false
        let listener = UnsafeMutablePointer<libseat_seat_listener>.allocate(capacity: 1)
        listener.initialize(
            to: libseat_seat_listener(
                enable_seat: SeatSession.enableCallback,
                disable_seat: SeatSession.disableCallback))
        kind = .direct  // replaced below once the seat is open
        self.listener = listener
        let box = Unmanaged.passUnretained(self)
        SeatSession.lastMessage.withLock { $0 = nil }
        guard let seat = libseat_open_seat(listener, box.toOpaque()) else {
            let code = errno
            listener.deinitialize(count: 1)
            listener.deallocate()
            self.listener = nil
            throw .noSeatManager(detail: SeatSession.lastMessage.withLock { $0 } ?? String(cString: strerror(code)))
        }
        self.seat = seat
        let name = libseat_seat_name(seat).map { String(cString: $0) } ?? "seat0"
        kind = .seat(name: name)
        // Wait until the seat enables the session (seatd does at once when its VT is in front).
        let clock = ContinuousClock(), deadline = options.activationTimeout.map { clock.now + $0 }
        var logged = false
        while !isActive {
            var wait: Int32 = -1
            if !logged {
                wait = 0  // first what is there already (seatd sends the enable at once)
            } else if let deadline {
                let left = clock.now.duration(to: deadline)
                if left <= .zero { break }
                wait = Int32(clamping: max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            }
            if libseat_dispatch(seat, wait) < 0 {
                let code = errno
                libseat_close_seat(seat)
                self.seat = nil
                throw .seatFailed(
                    operation: "libseat_dispatch", detail: SeatSession.lastMessage.withLock { $0 } ?? String(cString: strerror(code)))
            }
            if !isActive && !logged {
                logged = true
                SeatSession.log.debug(
                    "seat \(name): the session is not active (its VT is in the background); waiting for it to be selected")
            }
        }
        guard isActive else {
            libseat_close_seat(seat)
            self.seat = nil
            throw .notActive(seat: name, waited: options.activationTimeout ?? .zero)
        }
        // Only now the C callbacks may find this object from its pointer for good.
        self.box = box
        let fd = libseat_get_fd(seat)
        if fd >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .main)
            source.setEventHandler { [weak self] in
                MainActor.assumeIsolated { self?.dispatch() }
            }
            self.source = source
            source.resume()
        }
        SeatSession.log.debug("seat \(name): session active")
    }

    isolated deinit { close() }

    // MARK: Devices

    /// Opens a device (a DRM card, an evdev node): through the seat (which also makes a DRM
    /// device's descriptor master), or directly. Errors say what to do.
    public func openDevice(_ path: String, flags: Int32 = O_RDWR | O_CLOEXEC) throws(SeatSessionError) -> Device {
        guard !closed else { throw .seatFailed(operation: "open \(path)", detail: "the session is closed") }
        if let seat {
            var fd: Int32 = -1
            SeatSession.lastMessage.withLock { $0 = nil }
            let id = path.withCString { libseat_open_device(seat, $0, &fd) }
            guard id >= 0, fd >= 0 else {
                let code = errno
                if code == ENOENT || code == ENODEV || code == ENXIO { throw .noDevice(path: path, errno: Errno(rawValue: code)) }
                throw .deviceRefused(
                    path: path, seat: kind.description, detail: SeatSession.lastMessage.withLock { $0 } ?? String(cString: strerror(code)))
            }
            return Device(path: path, fd: fd, id: id)
        }
        let fd: Int32
        do { fd = try KernelCall.value { Glibc.open(path, flags) } } catch {
            if noManager && (error == .permissionDenied || error == .notPermitted) { throw .noSeatManagerAndNoAccess(path: path) }
            throw .openFailed(path: path, errno: error)
        }
        return Device(path: path, fd: fd, id: nil)
    }

    /// Closes a device opened with ``openDevice(_:flags:)`` (the descriptor too).
    public func closeDevice(_ device: Device) {
        if let seat, let id = device.id { libseat_close_device(seat, id) }
        Glibc.close(device.fd)
    }

    // MARK: Enable and disable

    /// Registers what to run when the session is disabled (stop using the devices) and enabled
    /// again. Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(disabled: @escaping @MainActor () -> Void, enabled: @escaping @MainActor () -> Void) -> Int {
        nextObserver += 1
        observers.append((nextObserver, disabled, enabled))
        return nextObserver
    }

    public func removeObserver(_ token: Int) {
        observers.removeAll { $0.id == token }
    }

    /// Asks the seat manager to switch to another session (VT `number`). Nothing with direct access.
    public func switchSession(to number: Int32) {
        guard let seat else { return }
        libseat_switch_session(seat, number)
    }

    private func dispatch() {
        guard let seat, !closed else { return }
        if libseat_dispatch(seat, 0) < 0 {
            SeatSession.log.debug("seat: libseat_dispatch failed (errno \(errno)): \(SeatSession.lastMessage.withLock { $0 } ?? "")")
            source?.cancel()  // the seat manager went away: nothing more comes
            source = nil
        }
    }

    fileprivate func seatEnabled() {
        guard !isActive else { return }
        isActive = true
        guard box != nil else { return }  // still opening
        enableCount += 1
        SeatSession.log.debug("seat: session enabled (VT in front again): devices usable, observers resume")
        for observer in observers { observer.enabled() }
    }

    fileprivate func seatDisabled() {
        guard isActive else { return }
        isActive = false
        disableCount += 1
        SeatSession.log.debug("seat: session disabled (another VT in front): observers pause, then the seat is released")
        for observer in observers.reversed() { observer.disabled() }
        if let seat { libseat_disable_seat(seat) }
    }

    /// Closes the seat (devices should be closed first). Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        source?.cancel()
        source = nil
        observers.removeAll()
        if let seat { libseat_close_seat(seat) }
        seat = nil
        box = nil
        if let listener {
            listener.deinitialize(count: 1)
            listener.deallocate()
        }
        listener = nil
    }

    // MARK: C callbacks

    private nonisolated static let enableCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
        guard let data else { return }
        let session = Unmanaged<SeatSession>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { session.seatEnabled() }
    }

    private nonisolated static let disableCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
        guard let data else { return }
        let session = Unmanaged<SeatSession>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { session.seatDisabled() }
    }

    /// libseat's last error message (for the errors), kept by the log handler.
    nonisolated static let lastMessage = Mutex<String?>(nil)
    nonisolated static let logHandlerInstalled = Mutex(false)

    private nonisolated static func installLogHandler() {
        let first = logHandlerInstalled.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        cseat_set_log_sink(SeatSession.logSink, LIBSEAT_LOG_LEVEL_INFO)
    }

    private nonisolated static let logSink: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void = { level, text in
        guard let text else { return }
        let message = String(cString: text)
        if level == Int32(LIBSEAT_LOG_LEVEL_ERROR.rawValue) { lastMessage.withLock { $0 = message } }
        SeatSession.log.debug("libseat: \(message)")
    }
}

/// What opening devices through a seat can fail with, worded so a person can act on it.
public enum SeatSessionError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No device at this path (through the seat: the seat manager found none).
    case noDevice(path: String, errno: Errno)
    /// Opening the device directly failed (`errno` says why: no device, no permission, …).
    case openFailed(path: String, errno: Errno)
    /// A seat manager was asked for (or its socket exists) but none answered.
    case noSeatManager(detail: String)
    /// No seat manager runs, and this user may not open the device itself.
    case noSeatManagerAndNoAccess(path: String)
    /// The session did not become active within ``SeatSession/Options/activationTimeout``.
    case notActive(seat: String, waited: Duration)
    /// The seat manager refused the device.
    case deviceRefused(path: String, seat: String, detail: String)
    /// Talking to the seat manager failed.
    case seatFailed(operation: String, detail: String)

    public var description: String {
        switch self {
        case .noDevice(let path, let code), .openFailed(let path, let code):
            "Cannot open \(path): \(code)."
        case .noSeatManager(let detail):
            "No seat manager answered (libseat: \(detail)). Start seatd as root (`seatd -g video`, or enable its service) "
                + "and add this user to that group (then log in again), or run from a systemd-logind session (log in on the console); "
                + "or open the device directly (DisplaySurface.Options.seatAccess = .direct, or SeatSession.Options(manager: .direct) "
                + "in DRMDisplay.Options.session) as root or as a member of the device's group."
        case .noSeatManagerAndNoAccess(let path):
            "Cannot open \(path): no seat manager is running and this user may not open it. Start seatd as root "
                + "(`seatd -g video`, or enable its service) and add this user to that group, or run from a systemd-logind session "
                + "(log in on the console, or a systemd unit with PAMName= and TTYPath=); or run as root."
        case .notActive(let seat, let waited):
            "The session on \(seat) did not become active within \(waited): its VT is in the background. Switch to it "
                + "(Ctrl+Alt+F<n> or `chvt <n>`), or leave SeatSession.Options.activationTimeout nil to wait until it is selected."
        case .deviceRefused(let path, let seat, let detail):
            "The seat manager (\(seat)) refused \(path): \(detail). The session must be active (its VT in front) and "
                + "the device must belong to the seat."
        case .seatFailed(let operation, let detail):
            "\(operation) failed: \(detail). Is the seat manager (seatd or systemd-logind) still running?"
        }
    }
}
