import DisplayLinkCore
import Dispatch
import Glibc
internal import CWayland
internal import CWaylandClient

/// A connection to a Wayland compositor: the globals it offers, and the event loop that reads
/// its socket on the main dispatch queue.
///
/// The loop is the standard `prepare_read` / `read_events` / `dispatch_pending` sequence run by a
/// read source on the display's fd (no polling thread, no busy wait), with flushes that wait for
/// the socket to become writable on `EAGAIN`. When the compositor goes away or kills the
/// connection, ``error`` is set, ``onError`` runs, and every later request is dropped.
@MainActor
public final class WaylandConnection {
    public struct Options: Sendable {
        /// Bind `wp_presentation` when offered (turn off to test the frame-callback fallback).
        public var bindPresentationTime = true
        /// Bind `wp_commit_timing_manager_v1` when offered: each frame's commit then asks not to
        /// be presented before its target (turn off to compare, or on a compositor that
        /// mishandles it).
        public var bindCommitTiming = true
        /// Bind `wp_fifo_manager_v1` when offered: each refresh's commit sets a FIFO barrier and
        /// waits for the previous one.
        public var bindFifo = true
        /// How long connecting (and opening a window) waits for each reply of the compositor
        /// before failing with ``WaylandError/notResponding(socket:seconds:)``: a compositor that
        /// accepted the connection but is stopped or hung would otherwise block the caller for
        /// ever (and with it the main queue, where signal handlers run). Default 30 s.
        public var replyTimeout: Nanoseconds = WaylandConnection.defaultReplyTimeout
        public init(bindPresentationTime: Bool = true, bindCommitTiming: Bool = true, bindFifo: Bool = true,
                    replyTimeout: Nanoseconds = WaylandConnection.defaultReplyTimeout) {
            self.bindPresentationTime = bindPresentationTime
            self.bindCommitTiming = bindCommitTiming
            self.bindFifo = bindFifo
            self.replyTimeout = replyTimeout
        }
    }

    /// ``Options/replyTimeout``'s default: 30 s.
    public nonisolated static let defaultReplyTimeout = Nanoseconds(30_000_000_000)

    /// How a roundtrip with a time limit ended.
    enum RoundtripOutcome {
        case done, failed, timedOut
    }

    /// The socket name connected to (`WAYLAND_DISPLAY`, or `wayland-0`).
    public let socketName: String
    /// Every global the compositor advertised.
    public private(set) var globals: [WaylandGlobal] = []
    /// The clock of `wp_presentation` times, once the compositor said (nil without it).
    public private(set) var presentationClock: ClockDomain?
    /// Set once the connection failed; nothing works after that.
    public private(set) var error: WaylandError?
    /// Called once, on the main actor, when the connection fails.
    public var onError: ((WaylandError) -> Void)?
    /// How many times the socket woke the loop (for tests: a paused link must cost none).
    public private(set) var wakeupCount = 0
    /// The name of the compositor's process, from the socket's peer credentials (e.g. "weston").
    public private(set) var compositorName: String?

    let display: OpaquePointer
    private(set) var registry: OpaquePointer?
    private(set) var compositor: OpaquePointer?
    private(set) var wmBase: OpaquePointer?
    private(set) var presentation: OpaquePointer?
    private(set) var commitTimingManager: OpaquePointer?
    private(set) var fifoManager: OpaquePointer?
    /// The versions bound, by interface (for ``timingProtocols``).
    private var boundVersions: [(String, UInt32)] = []
    /// The compositor's outputs (`wl_output`), in the order it advertised them; outputs it
    /// removes leave the list (e.g. for ``WaylandWindow/setFullscreen(on:)``).
    public private(set) var outputs: [WaylandOutput] = []
    /// The first seat's keyboard, when the compositor has a seat.
    public private(set) var keyboard: WaylandKeyboard?
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    /// Run after every dispatch, so every frame: each closure in a struct, which holds it as it is
    /// (an array of bare closures holds them in a general form, and calling one then allocates a
    /// thunk in unoptimised builds).
    private struct AfterDispatchHandler {
        let id: Int
        let run: () -> Void
    }
    private var afterDispatchHandlers: [AfterDispatchHandler] = []
    private var nextAfterDispatchID = 0
    private var errorHandlers = HandlerList<(WaylandError) -> Void>()
    private let options: Options

    /// Connects to the compositor named by `socket` (default: `WAYLAND_SOCKET`/`WAYLAND_DISPLAY`),
    /// binds its globals and starts reading events on the main queue.
    public init(socket: String? = nil, options: Options = Options()) throws(WaylandError) {
        self.options = options
        let name = socket ?? getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
        socketName = name
        errno = 0
        guard let display = wl_display_connect(socket) else {
            throw .cannotConnect(socket: name, errno: errno)
        }
        self.display = display
        compositorName = WaylandConnection.peerProcessName(fd: wl_display_get_fd(display))

        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, WaylandListeners.registry, Unmanaged.passUnretained(self).toOpaque())
        switch roundtrip() {
        case .done: break
        case .failed:
            let failure = readFailure()
            teardown()
            throw failure
        case .timedOut:
            teardown()
            throw notResponding
        }
        let missing = WaylandGlobals.missing(from: globals)
        guard missing.isEmpty else {
            teardown()
            throw .missingGlobals(missing)
        }
        bindGlobals()
        // A second roundtrip delivers the events of the objects just bound (clock id, outputs).
        switch roundtrip() {
        case .done: break
        case .failed:
            let failure = readFailure()
            teardown()
            throw failure
        case .timedOut:
            teardown()
            throw notResponding
        }
        startEventLoop()
    }

    isolated deinit {
        teardown()
    }

    /// Whether `wp_presentation` is bound.
    public var hasPresentationTime: Bool { presentation != nil }
    /// Whether `wp_commit_timing_manager_v1` is bound.
    public var hasCommitTiming: Bool { commitTimingManager != nil }
    /// Whether `wp_fifo_manager_v1` is bound.
    public var hasFifo: Bool { fifoManager != nil }
    /// The version of `xdg_wm_base` bound (6 and above: the `suspended` state).
    public private(set) var wmBaseVersion: UInt32 = 0

    /// The timing protocols in use, with the versions bound, e.g. `["wp_presentation 2",
    /// "wp_commit_timing_v1 1", "wp_fifo_v1 1", "xdg_wm_base 6"]` (`xdg_wm_base` listed from
    /// version 6, which has the `suspended` state).
    public var timingProtocols: [String] {
        var names: [String] = []
        for (interface, version) in boundVersions {
            switch interface {
            case "wp_presentation": names.append("wp_presentation \(version)")
            case "wp_commit_timing_manager_v1": names.append("wp_commit_timing_v1 \(version)")
            case "wp_fifo_manager_v1": names.append("wp_fifo_v1 \(version)")
            case "xdg_wm_base" where version >= 6: names.append("xdg_wm_base \(version)")
            default: break
            }
        }
        return names
    }

    // MARK: Globals

    fileprivate func globalAdded(name: UInt32, interface: String, version: UInt32) {
        globals.append(WaylandGlobal(name: name, interface: interface, version: version))
        // Outputs can come and go at any time; bind them as they appear once we are running.
        if interface == "wl_output", registry != nil, compositor != nil {
            bindOutput(name: name, version: version)
        }
    }

    fileprivate func globalRemoved(name: UInt32) {
        globals.removeAll { $0.name == name }
        if let index = outputs.firstIndex(where: { $0.globalName == name }) {
            outputs[index].destroy()
            outputs.remove(at: index)
        }
    }

    private func bindGlobals() {
        guard let registry else { return }
        for global in globals {
            switch global.interface {
            case "wl_compositor":
                compositor = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_compositor_interface(),
                    WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.compositorVersion)))
            case "xdg_wm_base":
                wmBaseVersion = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.wmBaseVersion)
                wmBase = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_xdg_wm_base_interface(), wmBaseVersion))
                xdg_wm_base_add_listener(wmBase, WaylandListeners.wmBase, nil)
                boundVersions.append((global.interface, wmBaseVersion))
            case "wl_seat" where keyboard == nil:
                let seat = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_seat_interface(),
                    WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.seatVersion)))
                keyboard = WaylandKeyboard(seat: seat!)
            case "wp_presentation" where options.bindPresentationTime:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.presentationVersion)
                presentation = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_wp_presentation_interface(), version))
                wp_presentation_add_listener(presentation, WaylandListeners.presentation,
                                             Unmanaged.passUnretained(self).toOpaque())
                boundVersions.append((global.interface, version))
            case "wp_commit_timing_manager_v1" where options.bindCommitTiming && commitTimingManager == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.commitTimingVersion)
                commitTimingManager = OpaquePointer(cwl_registry_bind(
                    registry, global.name, cwl_wp_commit_timing_manager_v1_interface(), version))
                boundVersions.append((global.interface, version))
            case "wp_fifo_manager_v1" where options.bindFifo && fifoManager == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.fifoVersion)
                fifoManager = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_wp_fifo_manager_v1_interface(), version))
                boundVersions.append((global.interface, version))
            default:
                break
            }
        }
        for global in globals where global.interface == "wl_output" {
            bindOutput(name: global.name, version: global.version)
        }
    }

    private func bindOutput(name: UInt32, version: UInt32) {
        guard let registry else { return }
        let proxy = OpaquePointer(cwl_registry_bind(registry, name, cwl_output_interface(),
            WaylandGlobals.negotiated(version, ours: WaylandGlobals.outputVersion)))
        outputs.append(WaylandOutput(proxy: proxy!, globalName: name))
    }

    fileprivate func presentationClockChanged(_ id: UInt32) {
        presentationClock = ClockDomain(clockID: id)
    }

    /// The output with this `wl_output` name (e.g. `HDMI-A-1`), or
    /// ``WaylandError/unknownOutput(_:available:)`` naming the outputs there are. Names come with
    /// `wl_output` version 4: a compositor with an older one (weston 10) has no named outputs
    /// (pass one of ``outputs`` to ``WaylandWindow`` instead).
    public func output(named name: String) throws(WaylandError) -> WaylandOutput {
        guard let output = outputs.first(where: { $0.name == name }) else { throw unknownOutput("'\(name)'") }
        return output
    }

    func unknownOutput(_ what: String) -> WaylandError {
        .unknownOutput(what, available: outputs.map { $0.name ?? "wl_output global \($0.globalName) (unnamed: wl_output before version 4)" })
    }

    func output(for proxy: OpaquePointer?) -> WaylandOutput? {
        outputs.first { $0.proxy == proxy }
    }

    /// Asks the compositor for a round trip (`wl_display.sync`); `done` runs on the main actor when
    /// its answer is dispatched. By then the compositor has handled every request sent before, and
    /// every event those requests caused has been dispatched (tests use it to wait for quiet
    /// without sleeping). Never runs if the connection fails first.
    /// The error for a compositor that let ``Options/replyTimeout`` pass without a reply.
    var notResponding: WaylandError {
        .notResponding(socket: socketName, seconds: Double(options.replyTimeout.value) / 1e9)
    }

    /// `wl_display_roundtrip` with ``Options/replyTimeout`` as its limit, before the event loop
    /// reads the socket (connecting, opening a window): sends a `wl_display.sync` and reads and
    /// dispatches events until its `done`, the connection fails or the time is up.
    func roundtrip() -> RoundtripOutcome {
        let deadline = MonotonicInstant.now() + options.replyTimeout
        let replied = RoundtripFlag()
        let box = Unmanaged.passRetained(SyncRequest { replied.value = true }).toOpaque()
        guard let callback = wl_display_sync(display) else {
            Unmanaged<SyncRequest>.fromOpaque(box).release()
            return .failed
        }
        wl_callback_add_listener(callback, WaylandListeners.sync, box)
        let outcome = awaitReply(replied, until: deadline)
        if outcome != .done {
            // No `done` will be dispatched for it any more: the request is freed here.
            wl_callback_destroy(callback)
            Unmanaged<SyncRequest>.fromOpaque(box).release()
        }
        return outcome
    }

    private func awaitReply(_ replied: RoundtripFlag, until deadline: MonotonicInstant) -> RoundtripOutcome {
        while !replied.value {
            if wl_display_prepare_read(display) != 0 {
                guard wl_display_dispatch_pending(display) >= 0 else { return .failed }
                continue
            }
            _ = wl_display_flush(display)
            let remaining = (deadline - MonotonicInstant.now()).value
            guard remaining > 0 else {
                wl_display_cancel_read(display)
                return .timedOut
            }
            var descriptor = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: (remaining + 999_999) / 1_000_000)
            let ready = poll(&descriptor, 1, milliseconds)
            guard ready > 0 else {
                wl_display_cancel_read(display)
                if ready == 0 || errno == EINTR { continue }  // the deadline is checked above
                return .failed
            }
            guard wl_display_read_events(display) >= 0 else { return .failed }
            guard wl_display_dispatch_pending(display) >= 0 else { return .failed }
        }
        return .done
    }

    public func sync(_ done: @escaping @MainActor () -> Void) {
        guard error == nil else { return }
        let box = Unmanaged.passRetained(SyncRequest(done)).toOpaque()
        let callback = wl_display_sync(display)
        wl_callback_add_listener(callback, WaylandListeners.sync, box)
        flush()
    }

    // MARK: Event loop

    /// Runs `handler` after each batch of events is dispatched (frame sources deliver refreshes
    /// there, once the batch's presentation feedback has been read too).
    /// Returns the number that removes it (``removeAfterDispatchHandler(_:)``).
    @discardableResult
    func addAfterDispatchHandler(_ handler: @escaping () -> Void) -> Int {
        nextAfterDispatchID += 1
        afterDispatchHandlers.append(AfterDispatchHandler(id: nextAfterDispatchID, run: handler))
        return nextAfterDispatchID
    }

    /// How many handlers are registered (after-dispatch, error): for tests.
    var handlerCounts: (afterDispatch: Int, error: Int) { (afterDispatchHandlers.count, errorHandlers.entries.count) }

    func removeAfterDispatchHandler(_ id: Int) {
        afterDispatchHandlers.removeAll { $0.id == id }
    }

    /// Returns the number that removes it (``removeErrorHandler(_:)``).
    @discardableResult
    func addErrorHandler(_ handler: @escaping (WaylandError) -> Void) -> Int {
        errorHandlers.add(handler)
    }

    func removeErrorHandler(_ id: Int) {
        errorHandlers.remove(id)
    }

    private func startEventLoop() {
        let source = DispatchSource.makeReadSource(fileDescriptor: wl_display_get_fd(display), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.socketReadable() }
        }
        readSource = source
        source.resume()
    }

    /// Whether the dispatch read source is suspended because a run loop on this thread reads the
    /// socket itself (``beginDirectReading()``).
    private var readSourceSuspended = false

    /// The connection's socket, for a run loop that polls it (``beginDirectReading()``).
    public var fileDescriptor: Int32 { wl_display_get_fd(display) }

    /// From now on the caller's loop polls ``fileDescriptor`` on this thread and calls
    /// ``readEvents()`` when it is readable (or hung up); the dispatch read source is suspended.
    public func beginDirectReading() {
        guard let readSource, !readSourceSuspended, error == nil else { return }
        readSource.suspend()
        readSourceSuspended = true
    }

    /// Gives the socket back to the dispatch read source.
    public func endDirectReading() {
        guard let readSource, readSourceSuspended else { return }
        readSourceSuspended = false
        readSource.resume()
    }

    /// Reads and dispatches what the socket holds (a loop's poll found it readable).
    public func readEvents() {
        socketReadable()
    }

    private func socketReadable() {
        guard error == nil else { return }
        wakeupCount += 1
        // The read source reports edges: data and the compositor's EOF can arrive as one edge,
        // and libwayland reads one chunk per call. Keep reading while the socket is still
        // readable, or an EOF behind the last data would go unnoticed until the next event.
        // A loop reading directly polls level-triggered: what is left makes its next poll return
        // at once, so it reads one chunk a call and asks the socket nothing more (one system
        // call less on every wake-up, three a frame on Wayland).
        repeat {
            while wl_display_prepare_read(display) != 0 {
                guard wl_display_dispatch_pending(display) >= 0 else { return fail() }
            }
            // Flush what we queued before reading, as the protocol asks.
            _ = wl_display_flush(display)
            guard wl_display_read_events(display) >= 0 else { return fail() }
            dispatchPending()
        } while error == nil && !readSourceSuspended && socketStillReadable()
    }

    private func socketStillReadable() -> Bool {
        var descriptor = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents != 0
    }

    /// Dispatches events already read (also those EGL read while swapping), runs the
    /// after-dispatch handlers, and flushes.
    ///
    /// Not re-entered: a handler that calls it (a frame source after its swap, where EGL may have
    /// read the next frame callback) has the events dispatched and the handlers run again after
    /// it returns, not inside it, so one refresh never starts inside another (and a compositor
    /// that answers at once cannot grow the stack frame by frame).
    func dispatchPending() {
        guard error == nil else { return }
        guard wl_display_dispatch_pending(display) >= 0 else { return fail() }
        if runningAfterDispatchHandlers {
            afterDispatchHandlersAgain = true
            flush()
            return
        }
        runningAfterDispatchHandlers = true
        defer { runningAfterDispatchHandlers = false }
        repeat {
            afterDispatchHandlersAgain = false
            for handler in afterDispatchHandlers { handler.run() }
        } while afterDispatchHandlersAgain && error == nil
        flush()
    }

    private var runningAfterDispatchHandlers = false
    private var afterDispatchHandlersAgain = false

    /// Sends queued requests; on `EAGAIN` waits for the socket to drain.
    func flush() {
        guard error == nil else { return }
        if wl_display_flush(display) < 0 {
            if errno == EAGAIN {
                armWriteSource()
            } else {
                fail()
            }
        }
    }

    private func armWriteSource() {
        guard writeSource == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: wl_display_get_fd(display), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.writeSource?.cancel()
                self.writeSource = nil
                self.flush()
            }
        }
        writeSource = source
        source.resume()
    }

    private func readFailure() -> WaylandError {
        let code = wl_display_get_error(display)
        if code == EPROTO {
            var interface: UnsafePointer<CChar>?
            var objectID: UInt32 = 0
            let protocolCode = cwl_protocol_error(display, &interface, &objectID)
            return .protocolError(interface: interface.map { String(cString: $0) } ?? "unknown",
                                  objectID: objectID, code: protocolCode)
        }
        return .connectionLost(errno: code != 0 ? code : errno)
    }

    private func fail() {
        guard error == nil else { return }
        let failure = readFailure()
        error = failure
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

    // MARK: Teardown

    /// Whether ``teardown()`` ran: once only. A connection that fails after `display` is set is
    /// torn down where it fails and then released by the throw, which runs deinit.
    private var tornDown = false

    private func teardown() {
        guard !tornDown else { return }
        tornDown = true
        keyboard?.destroy()
        keyboard = nil
        for output in outputs { output.destroy() }
        outputs.removeAll()
        if let presentation { wp_presentation_destroy(presentation) }
        if let commitTimingManager { wp_commit_timing_manager_v1_destroy(commitTimingManager) }
        if let fifoManager { wp_fifo_manager_v1_destroy(fifoManager) }
        commitTimingManager = nil; fifoManager = nil
        if let wmBase { xdg_wm_base_destroy(wmBase) }
        if let compositor { wl_compositor_destroy(compositor) }
        if let registry { wl_registry_destroy(registry) }
        presentation = nil; wmBase = nil; compositor = nil; registry = nil
        writeSource?.cancel()
        writeSource = nil
        let display = self.display
        endDirectReading()  // a suspended source never runs its cancel handler
        if let readSource {
            // The fd belongs to the display: close it only once the read source has let go.
            nonisolated(unsafe) let display = display
            readSource.setCancelHandler { wl_display_disconnect(display) }
            readSource.cancel()
            self.readSource = nil
        } else {
            wl_display_disconnect(display)
        }
    }

    private static func peerProcessName(fd: Int32) -> String? {
        let pid = cwl_socket_peer_pid(fd)
        guard pid > 0, let file = fopen("/proc/\(pid)/comm", "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        while bytes.count < 64 {
            let c = fgetc(file)
            if c == EOF || c == 10 { break }
            bytes.append(UInt8(truncatingIfNeeded: c))
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Listener trampolines

    nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandConnection {
        Unmanaged<WaylandConnection>.fromOpaque(data!).takeUnretainedValue()
    }
}

/// Listener tables: one static, never-freed table per interface, so every proxy's listener
/// outlives it. Every slot is filled, for every event of the versions bound.
enum WaylandListeners {
    nonisolated(unsafe) static let registry: UnsafeMutablePointer<wl_registry_listener> = make(wl_registry_listener(
        global: { data, _, name, interface, version in
            let interfaceName = interface.map { String(cString: $0) } ?? ""
            let object = WaylandConnection.from(data)
                MainActor.assumeIsolated {
                object.globalAdded(name: name, interface: interfaceName, version: version)
            }
        },
        global_remove: { data, _, name in
            let object = WaylandConnection.from(data)
            MainActor.assumeIsolated { object.globalRemoved(name: name) }
        }
    ))

    nonisolated(unsafe) static let wmBase: UnsafeMutablePointer<xdg_wm_base_listener> = make(xdg_wm_base_listener(
        ping: { _, base, serial in xdg_wm_base_pong(base, serial) }
    ))

    nonisolated(unsafe) static let presentation: UnsafeMutablePointer<wp_presentation_listener> = make(wp_presentation_listener(
        clock_id: { data, _, clockID in
            let object = WaylandConnection.from(data)
            MainActor.assumeIsolated { object.presentationClockChanged(clockID) }
        }
    ))

    nonisolated(unsafe) static let sync: UnsafeMutablePointer<wl_callback_listener> = make(wl_callback_listener(
        done: { data, callback, _ in
            nonisolated(unsafe) let callback = callback
            nonisolated(unsafe) let data = data
            MainActor.assumeIsolated {
                wl_callback_destroy(callback)
                let request = Unmanaged<SyncRequest>.fromOpaque(data!).takeRetainedValue()
                request.done()
            }
        }
    ))

    static func make<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }
}

/// The closure of one ``WaylandConnection/sync(_:)``, retained until its answer arrives.
@MainActor
/// Whether a roundtrip's `done` came.
final class RoundtripFlag {
    var value = false
}

final class SyncRequest {
    let done: @MainActor () -> Void
    init(_ done: @escaping @MainActor () -> Void) { self.done = done }
}
