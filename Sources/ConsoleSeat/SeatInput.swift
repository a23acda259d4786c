import Dispatch
import DisplayLinkCore
import Glibc
import Logging
import SurfaceInput
internal import CInput

/// Input from the console's keyboards, pointers and touchscreens through the seat, as compositors
/// read it: libinput (path backend) on the evdev devices, each opened through the ``SeatSession``
/// (seatd or logind open them for an ordinary user and revoke them while another VT is in front),
/// and an xkbcommon keymap (`SeatKeyboard`) that turns key codes into keysyms, modifiers and
/// text. For a program on a console with no controlling terminal (a systemd unit);
/// ``TerminalKeyboard`` (the terminal in raw mode) stays for interactive use.
///
/// - Events arrive as `InputEvent`s (``onInput``), each with libinput's time (the kernel's, on
///   `CLOCK_MONOTONIC`, `InputTime.Source.precise`), in the order libinput gives them: the
///   order they happened, except that libinput debounces buttons, so a button's release can
///   come after a later motion or scroll, with its own earlier time.
/// - Pointer positions are in the output's points (``setOutputSize(width:height:)``): relative
///   motion moves a pointer kept here (`SeatPointerTouch`), absolute devices and touchscreens
///   are scaled to the output.
/// - A key held repeats (`KeyboardEvent.Phase.repeated`) after ``repeatDelay``, ``repeatRate``
///   times a second (`KeyRepeater`), timed from the press.
/// - While the session is disabled, libinput is suspended (its devices closed): the pointer
///   leaves, touches are cancelled and keyboard focus is lost; when it is enabled again the
///   devices are opened again, focus comes back and the keyboard state starts afresh (keys held
///   while away were released elsewhere).
/// - Ctrl+Alt+F*n* (`XF86Switch_VT_n`) asks the seat to switch to VT *n*: under a seat manager the
///   VT's own keyboard handling is off, so the program does it, as compositors do. Those keys are
///   not delivered.
/// - libinput knows a device from udev's database: a device without an entry (no udev daemon
///   runs) is not handed to it, and ``devices`` says so (``InputDeviceReport``).
/// - Logs (label `displaylink.input`): at `.debug` each device and what it is, suspend and resume;
///   at `.notice` devices left out for want of a udev entry.
@MainActor
public final class SeatInput {
    static let log = Logger(label: "displaylink.input")

    /// Called with each event, in order.
    public var onInput: ((InputEvent) -> Void)?
    /// Called with the keysym (`xkb_keysym_t`) of each key pressed, and again at each repeat.
    public var onKey: ((UInt32) -> Void)?
    /// What was found for each evdev device, in order.
    public private(set) var devices: [InputDeviceReport] = []
    /// The keyboards in use (device paths).
    public var keyboards: [String] { paths(with: .keyboard) }
    /// The pointers in use (mice, touchpads; device paths).
    public var pointers: [String] { paths(with: .pointer) }
    /// The touchscreens in use (device paths).
    public var touchscreens: [String] { paths(with: .touch) }
    /// Repeats per second of a key held (0: keys do not repeat).
    public var repeatRate: Int { repeater.rate }
    /// From a key's press to its first repeat.
    public var repeatDelay: Nanoseconds { repeater.delay }
    public let session: SeatSession

    private var context: OpaquePointer?
    private var interface: UnsafeMutablePointer<libinput_interface>?
    private var keyboard: SeatKeyboard?
    var pointerTouch: SeatPointerTouch
    private var repeater: KeyRepeater
    private var repeatTimer: MainQueueTimer?
    private var source: DispatchSourceRead?
    private var opened: [Int32: SeatSession.Device] = [:]
    private var openFailure: String?
    private var observer: Int?
    /// The key whose press switched VTs: its release is not delivered either.
    private var switchKey: UInt32?
    /// Events made from one libinput event, delivered once it is read (a handler may change the
    /// pointer's output size meanwhile); kept, so reading allocates nothing once warm.
    var pending: [InputEvent] = []
    private(set) var closed = false

    /// Opens every evdev device (`/dev/input/event*`, or `devicePaths`) that udev's database
    /// knows through `session` and keeps the keyboards, pointers and touchscreens. `width` and
    /// `height` are the output's size in points (positions stay within it). Keys repeat as
    /// `repeatRate` and `repeatDelay` say; `xkbLayout` names the keyboard layout (nil:
    /// `XKB_DEFAULT_LAYOUT`, else the system's default). Throws when libinput or the keymap cannot be set up,
    /// or when no device can be used (``SeatInputError/noDevice(_:)`` says what was found).
    public init(
        session: SeatSession, width: Double, height: Double, devicePaths: [String]? = nil,
        repeatRate: Int = 25, repeatDelay: Nanoseconds = Nanoseconds(600_000_000), xkbLayout: String? = nil
    ) throws(SeatInputError) {
        self.session = session
        pointerTouch = SeatPointerTouch(width: width, height: height)
        repeater = KeyRepeater(rate: repeatRate, delay: repeatDelay)
        pending.reserveCapacity(8)
        keyboard = try SeatKeyboard(layout: xkbLayout)

        let interface = UnsafeMutablePointer<libinput_interface>.allocate(capacity: 1)
        interface.initialize(
            to: libinput_interface(
                open_restricted: SeatInput.openRestricted,
                close_restricted: SeatInput.closeRestricted))
        self.interface = interface
        guard let context = libinput_path_create_context(interface, Unmanaged.passUnretained(self).toOpaque()) else {
            close()
            throw .libinput("libinput_path_create_context failed")
        }
        self.context = context
        for path in devicePaths ?? SeatInput.eventDevices() {
            devices.append(InputDeviceReport(path: path, finding: add(path, to: context)))
        }
        drain()
        for report in devices {
            if case .noUdevEntry = report.finding { SeatInput.log.notice("input device left out: \(report)") }
        }
        guard devices.contains(where: { if case .used = $0.finding { true } else { false } }) else {
            let found = devices
            close()
            throw .noDevice(found)
        }
        SeatInput.log.debug("input through the \(session.kind): \(devices.map(\.description).joined(separator: "; "))")
        let source = DispatchSource.makeReadSource(fileDescriptor: libinput_get_fd(context), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.readEvents(upTo: nil) }
        }
        self.source = source
        source.resume()
        repeatTimer = MainQueueTimer { [weak self] in self?.repeatTimerFired() }
        observer = session.addObserver(
            disabled: { [weak self] in self?.suspend() },
            enabled: { [weak self] in self?.resume() })
    }

    isolated deinit { close() }

    /// The output's size in points changed (a new mode): the pointer stays on it.
    public func setOutputSize(width: Double, height: Double) {
        pointerTouch.resize(width: width, height: height)
    }

    /// Hands `path` to libinput if udev's database knows it; what became of it.
    private func add(_ path: String, to context: OpaquePointer) -> InputDeviceReport.Finding {
        if let problem = UdevEntry.problem(devicePath: path) { return problem }
        openFailure = nil
        guard let device = path.withCString({ libinput_path_add_device(context, $0) }) else {
            return openFailure.map { .refused($0) } ?? .notTaken
        }
        var kinds: InputDeviceKinds = []
        if libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_KEYBOARD) != 0 { kinds.insert(.keyboard) }
        if libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_POINTER) != 0 { kinds.insert(.pointer) }
        if libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH) != 0 { kinds.insert(.touch) }
        guard !kinds.isEmpty else {
            libinput_path_remove_device(device)  // closes it
            return .otherKind
        }
        return .used(kinds)
    }

    private func paths(with kind: InputDeviceKinds) -> [String] {
        devices.compactMap { if case .used(let kinds) = $0.finding, kinds.contains(kind) { $0.path } else { nil } }
    }

    /// The evdev nodes, in order.
    nonisolated static func eventDevices() -> [String] {
        guard let dir = opendir("/dev/input") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("event") { names.append(name) }
        }
        return names.sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }.map { "/dev/input/" + $0 }
    }

    // MARK: Reading

    /// Reads what the kernel has, then delivers the repeats due by `now` (when given): every
    /// event stamped before `now` is read by then, so a repeat never comes after a later event.
    private func readEvents(upTo now: MonotonicInstant?) {
        guard let context, !closed else { return }
        if libinput_dispatch(context) == 0 { drain() }
        if let now { deliverRepeats(until: now) }
    }

    /// Handles the events libinput has queued.
    /// A handler may close this object (and free the libinput context) from inside the loop:
    /// the context is looked up afresh for every event.
    private func drain() {
        while !closed, let context, let event = libinput_get_event(context) {
            handle(event)
            libinput_event_destroy(event)
            deliverPending()
        }
    }

    /// Delivers the events made so far, in order (``onKey`` too, for keys pressed or repeated).
    func deliverPending() {
        var index = 0
        while index < pending.count, !closed {
            let event = pending[index]
            index += 1
            onInput?(event)
            if case .key(let key) = event.kind, key.phase != .released, key.symbol.rawValue != 0, !closed {
                onKey?(key.symbol.rawValue)
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Evdev key `code` went down or up at `microseconds`.
    func keyChanged(_ code: UInt32, isPressed: Bool, microseconds: UInt64) {
        guard let keyboard else { return }
        let time = SeatPointerTouch.time(microseconds: microseconds)
        deliverRepeats(until: time.time)
        let event = keyboard.key(code, isPressed: isPressed)
        if !isPressed, switchKey == code {
            switchKey = nil
            return
        }
        if isPressed, (SeatInput.switchVT1...SeatInput.switchVT12).contains(event.symbol.rawValue) {
            let vt = Int32(event.symbol.rawValue - SeatInput.switchVT1 + 1)
            SeatInput.log.debug("Ctrl+Alt+F\(vt): asking the seat to switch to VT \(vt)")
            switchKey = code
            session.switchSession(to: vt)
            return
        }
        if isPressed {
            if keyboard.repeats(code) { repeater.pressed(code, at: time.time) }
        } else {
            repeater.released(code)
        }
        scheduleRepeat()
        pending.append(InputEvent(time: time, kind: .key(event)))
    }

    static let switchVT1: UInt32 = 0x1008_FE01  // XKB_KEY_XF86Switch_VT_1
    static let switchVT12: UInt32 = 0x1008_FE0C  // XKB_KEY_XF86Switch_VT_12

    // MARK: Key repeat

    private func repeatTimerFired() {
        readEvents(upTo: MonotonicInstant.now())
        scheduleRepeat()
    }

    /// Delivers the repeats due by `now` (before an event stamped `now`, or when the timer fires).
    func deliverRepeats(until now: MonotonicInstant) {
        guard let keyboard, repeater.nextRepeat.map({ $0 <= now }) == true else { return }
        repeater.repeats(until: now) { code, due in
            let event = keyboard.repeated(code)
            pending.append(InputEvent(time: InputTime(time: due, source: .precise), kind: .key(event)))
        }
        deliverPending()
    }

    private func scheduleRepeat() {
        guard let repeatTimer else { return }
        if let due = repeater.nextRepeat { repeatTimer.schedule(at: due) } else { repeatTimer.cancel() }
    }

    // MARK: The session

    private func suspend() {
        guard let context else { return }
        libinput_suspend(context)
        drain()  // what libinput made of the devices going (keys and buttons released)
        repeater.focusLost()
        scheduleRepeat()
        let now = InputTime(time: MonotonicInstant.now(), source: .received)
        pointerTouch.sessionLeft(at: now) { pending.append($0) }
        pending.append(InputEvent(time: now, kind: .keyboardFocus(false)))
        deliverPending()
        SeatInput.log.debug("input suspended (session disabled)")
    }

    private func resume() {
        guard let context, !closed else { return }
        keyboard?.reset()  // nothing is held after the time away
        switchKey = nil
        if libinput_resume(context) != 0 {
            SeatInput.log.debug("libinput_resume failed: some devices may be gone")
        }
        drain()
        let now = InputTime(time: MonotonicInstant.now(), source: .received)
        pending.append(InputEvent(time: now, kind: .keyboardFocus(true)))
        pointerTouch.sessionReturned(at: now) { pending.append($0) }
        deliverPending()
        SeatInput.log.debug("input resumed (session enabled)")
    }

    /// Closes the devices and frees libinput and the keymap. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        source?.cancel()
        source = nil
        repeatTimer?.cancel()
        repeatTimer = nil
        if let observer { session.removeObserver(observer) }
        observer = nil
        onKey = nil
        onInput = nil
        if let context { libinput_unref(context) }  // closes the devices through close_restricted
        context = nil
        for device in opened.values { session.closeDevice(device) }
        opened.removeAll()
        if let interface {
            interface.deinitialize(count: 1)
            interface.deallocate()
        }
        interface = nil
        keyboard = nil
    }

    // MARK: libinput's device access (through the seat)

    fileprivate func open(path: String, flags: Int32) -> Int32 {
        do {
            let device = try session.openDevice(path, flags: flags)
            opened[device.fd] = device
            return device.fd
        } catch {
            SeatInput.log.debug("input device \(path) not opened: \(error)")
            openFailure = "\(error)"
            return -EACCES
        }
    }

    fileprivate func closeDevice(fd: Int32) {
        if let device = opened.removeValue(forKey: fd) { session.closeDevice(device) } else { Glibc.close(fd) }
    }

    private nonisolated static let openRestricted: @convention(c) (UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Int32 = {
        path, flags, data in
        guard let path, let data else { return -EINVAL }
        let input = Unmanaged<SeatInput>.fromOpaque(data).takeUnretainedValue()
        let name = String(cString: path)
        return MainActor.assumeIsolated { input.open(path: name, flags: flags) }
    }

    private nonisolated static let closeRestricted: @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void = { fd, data in
        guard let data else {
            Glibc.close(fd)
            return
        }
        let input = Unmanaged<SeatInput>.fromOpaque(data).takeUnretainedValue()
        MainActor.assumeIsolated { input.closeDevice(fd: fd) }
    }
}
