import Dispatch
import Glibc
import Logging
internal import CInput
internal import CXKBCommon

/// Keys from the console's keyboards through the seat, as compositors read them: libinput (path
/// backend) on the evdev devices, each opened through the ``SeatSession`` (seatd or logind open
/// them for an ordinary user and revoke them while another VT is in front), and an xkbcommon
/// keymap (`XKB_DEFAULT_LAYOUT` and friends, else the system's default, usually `us`) that turns
/// key codes into keysyms. For a program on a console with no controlling terminal (a systemd
/// unit); ``TerminalKeyboard`` (the terminal in raw mode) stays for interactive use.
///
/// - While the session is disabled, libinput is suspended (its devices closed); when it is enabled
///   again the devices are opened again and the keyboard state starts afresh (keys held while away
///   were released elsewhere).
/// - Ctrl+Alt+F*n* (`XF86Switch_VT_n`) asks the seat to switch to VT *n*: under a seat manager the
///   VT's own keyboard handling is off, so the program does it, as compositors do.
/// - libinput reads device properties from udev's database (`ID_INPUT_KEYBOARD`): the devices must
///   have been seen by udev (systemd-udevd or eudev), as on every normal system.
/// - Logs (label `displaylink.input`, `.debug`): the keyboards found, suspend and resume.
@MainActor
public final class SeatInput {
    static let log = Logger(label: "displaylink.input")

    /// Called with the keysym (`xkb_keysym_t`) of each key pressed.
    public var onKey: ((UInt32) -> Void)?
    /// The keyboards in use (device paths).
    public private(set) var keyboards: [String] = []
    public let session: SeatSession

    private var context: OpaquePointer?
    private var interface: UnsafeMutablePointer<libinput_interface>?
    private var xkbContext: OpaquePointer?
    private var keymap: OpaquePointer?
    private var state: OpaquePointer?
    private var source: DispatchSourceRead?
    private var opened: [Int32: SeatSession.Device] = [:]
    private var observer: Int?
    private var closed = false

    /// Opens every evdev device (`/dev/input/event*`, or `devicePaths`) through `session` and
    /// keeps the keyboards. Throws when libinput or the keymap cannot be set up, or when no
    /// keyboard is there (``SeatInputError``).
    public init(session: SeatSession, devicePaths: [String]? = nil) throws(SeatInputError) {
        self.session = session
        guard let xkbContext = xkb_context_new(XKB_CONTEXT_NO_FLAGS) else { throw .keymap("xkb_context_new failed") }
        self.xkbContext = xkbContext
        guard let keymap = xkb_keymap_new_from_names(xkbContext, nil, XKB_KEYMAP_COMPILE_NO_FLAGS) else {
            close()
            throw .keymap(
                "no keymap could be compiled from the default rules (is xkb-data installed, /usr/share/X11/xkb? "
                    + "are XKB_DEFAULT_LAYOUT and friends valid?)")
        }
        self.keymap = keymap
        state = xkb_state_new(keymap)

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
        var refused: [String] = []
        for path in devicePaths ?? SeatInput.eventDevices() {
            guard let device = path.withCString({ libinput_path_add_device(context, $0) }) else {
                refused.append(path)
                continue
            }
            if libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_KEYBOARD) != 0 {
                keyboards.append(path)
            } else {
                libinput_path_remove_device(device)  // closes it
            }
        }
        drain()
        guard !keyboards.isEmpty else {
            close()
            throw .noKeyboard(refused: refused)
        }
        SeatInput.log.debug("keyboards through the \(session.kind): \(keyboards.joined(separator: ", "))")
        let source = DispatchSource.makeReadSource(fileDescriptor: libinput_get_fd(context), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.readEvents() }
        }
        self.source = source
        source.resume()
        observer = session.addObserver(
            disabled: { [weak self] in self?.suspend() },
            enabled: { [weak self] in self?.resume() })
    }

    isolated deinit { close() }

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

    private func readEvents() {
        guard let context, !closed else { return }
        if libinput_dispatch(context) != 0 { return }
        drain()
    }

    /// Handles the events libinput has queued.
    /// A key handler may close this object (and free the libinput context) from inside the loop:
    /// the context is looked up afresh for every event.
    private func drain() {
        while !closed, let context, let event = libinput_get_event(context) {
            if libinput_event_get_type(event) == LIBINPUT_EVENT_KEYBOARD_KEY, let key = libinput_event_get_keyboard_event(event) {
                let evdev = libinput_event_keyboard_get_key(key)
                let pressed = libinput_event_keyboard_get_key_state(key) == LIBINPUT_KEY_STATE_PRESSED
                libinput_event_destroy(event)
                guard evdev <= UInt32.max - 8 else { continue }
                keyChanged(evdev + 8, pressed: pressed)  // evdev code → XKB keycode
                continue
            }
            libinput_event_destroy(event)
        }
    }

    private func keyChanged(_ code: UInt32, pressed: Bool) {
        guard let state else { return }
        // The symbol before the update: the modifiers as they were when the key went down.
        let symbol = xkb_state_key_get_one_sym(state, code)
        xkb_state_update_key(state, code, pressed ? XKB_KEY_DOWN : XKB_KEY_UP)
        guard pressed, symbol != 0 else { return }
        if (SeatInput.switchVT1...SeatInput.switchVT12).contains(symbol) {
            let vt = Int32(symbol - SeatInput.switchVT1 + 1)
            SeatInput.log.debug("Ctrl+Alt+F\(vt): asking the seat to switch to VT \(vt)")
            session.switchSession(to: vt)
            return
        }
        onKey?(symbol)
    }

    static let switchVT1: UInt32 = 0x1008_FE01  // XKB_KEY_XF86Switch_VT_1
    static let switchVT12: UInt32 = 0x1008_FE0C  // XKB_KEY_XF86Switch_VT_12

    private func suspend() {
        guard let context else { return }
        libinput_suspend(context)
        SeatInput.log.debug("input suspended (session disabled)")
    }

    private func resume() {
        guard let context, let keymap else { return }
        if let state { xkb_state_unref(state) }
        state = xkb_state_new(keymap)  // nothing is held after the time away
        if libinput_resume(context) != 0 {
            SeatInput.log.debug("libinput_resume failed: some keyboards may be gone")
        }
        drain()
        SeatInput.log.debug("input resumed (session enabled)")
    }

    /// Closes the devices and frees libinput and the keymap. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        source?.cancel()
        source = nil
        if let observer { session.removeObserver(observer) }
        observer = nil
        onKey = nil
        if let context { libinput_unref(context) }  // closes the devices through close_restricted
        context = nil
        for device in opened.values { session.closeDevice(device) }
        opened.removeAll()
        if let interface {
            interface.deinitialize(count: 1)
            interface.deallocate()
        }
        interface = nil
        if let state { xkb_state_unref(state) }
        state = nil
        if let keymap { xkb_keymap_unref(keymap) }
        keymap = nil
        if let xkbContext { xkb_context_unref(xkbContext) }
        xkbContext = nil
    }

    // MARK: libinput's device access (through the seat)

    fileprivate func open(path: String, flags: Int32) -> Int32 {
        do {
            let device = try session.openDevice(path, flags: flags)
            opened[device.fd] = device
            return device.fd
        } catch {
            SeatInput.log.debug("input device \(path) not opened: \(error)")
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

/// What setting up console input can fail with, worded so a person can act on it.
public enum SeatInputError: Error, CustomStringConvertible, Sendable, Equatable {
    case keymap(String)
    case libinput(String)
    /// No keyboard among the input devices (`refused`: the ones that could not be opened).
    case noKeyboard(refused: [String])

    public var description: String {
        switch self {
        case .keymap(let message): "Keyboard map: \(message)."
        case .libinput(let message): "Console input: \(message)."
        case .noKeyboard(let refused):
            refused.isEmpty
                ? "No keyboard under /dev/input (libinput found none tagged as a keyboard by udev: is udev running?)."
                : "No keyboard could be opened: \(refused.joined(separator: ", ")) were refused. Through a seat the session must be "
                    + "active; without one the user needs read access (the 'input' group), and udev must have tagged the devices."
        }
    }
}
