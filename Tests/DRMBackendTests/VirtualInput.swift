import DRMBackend
import Foundation
import SystemPackage

/// An input device made with uinput (evdev node and all), with the udev database entry libinput
/// reads (no udev runs in the VM: written as udev's input_id would, `udev` its properties).
final class UInputDevice {
    /// An absolute axis: its evdev code and range.
    struct Axis {
        var code: Int32, minimum: Int32, maximum: Int32, resolution: Int32 = 0
    }

    let fd: Int32
    let devicePath: String
    let udevEntry: String

    static let evSyn: UInt16 = 0, evKey: UInt16 = 1, evRel: UInt16 = 2, evAbs: UInt16 = 3

    init(name: String, keys: [Int32], relative: [Int32] = [], absolute: [Axis] = [], properties: [Int32] = [], udev: [String]) throws {
        fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw DRMError.kernel(operation: "open(/dev/uinput)", errno: Errno(rawValue: errno)) }
        _ = ioctl(fd, 0x4004_5564 /* UI_SET_EVBIT */, Int32(UInputDevice.evKey))
        for key in keys { _ = ioctl(fd, 0x4004_5565 /* UI_SET_KEYBIT */, key) }
        if !relative.isEmpty { _ = ioctl(fd, 0x4004_5564 /* UI_SET_EVBIT */, Int32(UInputDevice.evRel)) }
        for code in relative { _ = ioctl(fd, 0x4004_5566 /* UI_SET_RELBIT */, code) }
        if !absolute.isEmpty { _ = ioctl(fd, 0x4004_5564 /* UI_SET_EVBIT */, Int32(UInputDevice.evAbs)) }
        for property in properties { _ = ioctl(fd, 0x4004_556E /* UI_SET_PROPBIT */, property) }
        for axis in absolute {
            _ = ioctl(fd, 0x4004_5567 /* UI_SET_ABSBIT */, axis.code)
            // struct uinput_abs_setup: code (u16, padded to 4), input_absinfo (value, minimum, maximum, fuzz, flat, resolution).
            var setup: [Int32] = [axis.code, 0, axis.minimum, axis.maximum, 0, 0, axis.resolution]
            guard ioctl(fd, 0x401C_5504 /* UI_ABS_SETUP */, &setup) == 0 else {
                let code = errno
                close(fd)
                throw DRMError.kernel(operation: "UI_ABS_SETUP", errno: Errno(rawValue: code))
            }
        }
        // struct uinput_setup: input_id (bustype, vendor, product, version), name[80], ff_effects_max.
        var setup = [UInt8](repeating: 0, count: 92)
        setup[0] = 0x06  // BUS_VIRTUAL
        setup[2] = 0x34
        setup[4] = 0x12
        for (i, byte) in name.utf8.prefix(79).enumerated() { setup[8 + i] = byte }
        guard ioctl(fd, 0x405C_5503 /* UI_DEV_SETUP */, &setup) == 0, ioctl(fd, 0x5501 /* UI_DEV_CREATE */) == 0 else {
            let code = errno
            close(fd)
            throw DRMError.kernel(operation: "uinput device setup", errno: Errno(rawValue: code))
        }
        var sysName = [UInt8](repeating: 0, count: 64)
        guard ioctl(fd, 0x8040_552C /* UI_GET_SYSNAME(64) */, &sysName) >= 0 else {
            close(fd)
            throw DRMError.kernel(operation: "UI_GET_SYSNAME", errno: Errno(rawValue: errno))
        }
        let sys = "/sys/devices/virtual/input/" + String(decoding: sysName.prefix { $0 != 0 }, as: UTF8.self)
        let event = (try? FileManager.default.contentsOfDirectory(atPath: sys))?.first { $0.hasPrefix("event") }
        guard let event,
            let number = (try? String(contentsOfFile: "\(sys)/\(event)/dev", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        else {
            close(fd)
            throw DRMError.noDevice(path: "\(sys)/event*")
        }
        devicePath = "/dev/input/" + event
        udevEntry = "/run/udev/data/c" + number
        try? FileManager.default.createDirectory(atPath: "/run/udev/data", withIntermediateDirectories: true)
        try (["I:1"] + udev.map { "E:\($0)=1" }).map { $0 + "\n" }.joined().write(toFile: udevEntry, atomically: false, encoding: .utf8)
    }

    deinit {
        _ = ioctl(fd, 0x5502 /* UI_DEV_DESTROY */)
        close(fd)
        unlink(udevEntry)
    }

    /// Writes one event (`struct input_event`: a timeval of 16 bytes, type, code, value); the
    /// kernel stamps it as it passes it on.
    func emit(_ type: UInt16, _ code: UInt16, _ value: Int32) {
        var event = [UInt8](repeating: 0, count: 24)
        withUnsafeBytes(of: type) { for i in 0..<2 { event[16 + i] = $0[i] } }
        withUnsafeBytes(of: code) { for i in 0..<2 { event[18 + i] = $0[i] } }
        withUnsafeBytes(of: value) { for i in 0..<4 { event[20 + i] = $0[i] } }
        _ = write(fd, event, event.count)
    }

    /// Ends a group of events (`SYN_REPORT`).
    func sync() { emit(UInputDevice.evSyn, 0, 0) }
}

/// A keyboard (the main block of keys).
final class VirtualKeyboard {
    let device: UInputDevice
    var devicePath: String { device.devicePath }

    static let keySpace: UInt16 = 57, keyQ: UInt16 = 16, keyA: UInt16 = 30, keyB: UInt16 = 48, keyLeftShift: UInt16 = 42
    static let keySemicolon: UInt16 = 39, keyEscape: UInt16 = 1, keyBackspace: UInt16 = 14

    init() throws {
        device = try UInputDevice(
            name: "displaylink test keyboard", keys: Array(1...88), udev: ["ID_INPUT", "ID_INPUT_KEY", "ID_INPUT_KEYBOARD"])
    }

    /// Presses and releases `key` (an evdev code).
    func tap(_ key: UInt16) {
        press(key)
        release(key)
    }

    func press(_ key: UInt16) {
        device.emit(UInputDevice.evKey, key, 1)
        device.sync()
    }

    func release(_ key: UInt16) {
        device.emit(UInputDevice.evKey, key, 0)
        device.sync()
    }
}

/// A mouse: relative motion, a wheel, three buttons.
final class VirtualMouse {
    let device: UInputDevice
    static let buttonLeft: UInt16 = 0x110

    init() throws {
        device = try UInputDevice(
            name: "displaylink test mouse", keys: [0x110, 0x111, 0x112], relative: [0 /* REL_X */, 1 /* REL_Y */, 8 /* REL_WHEEL */],
            udev: ["ID_INPUT", "ID_INPUT_MOUSE"])
    }

    func move(dx: Int32, dy: Int32) {
        if dx != 0 { device.emit(UInputDevice.evRel, 0, dx) }
        if dy != 0 { device.emit(UInputDevice.evRel, 1, dy) }
        device.sync()
    }

    func button(_ code: UInt16, pressed: Bool) {
        device.emit(UInputDevice.evKey, code, pressed ? 1 : 0)
        device.sync()
    }

    /// Turns the wheel by `clicks` (positive: away from the user, scrolling up).
    func wheel(_ clicks: Int32) {
        device.emit(UInputDevice.evRel, 8, clicks)
        device.sync()
    }
}

/// A multitouch touchscreen (type B slots, `INPUT_PROP_DIRECT`), 0...1023 on both axes.
final class VirtualTouchscreen {
    let device: UInputDevice
    static let range: Int32 = 1024
    private var down = 0

    init() throws {
        let axis = { (code: Int32) in UInputDevice.Axis(code: code, minimum: 0, maximum: VirtualTouchscreen.range - 1, resolution: 10) }
        device = try UInputDevice(
            name: "displaylink test touchscreen", keys: [0x14a /* BTN_TOUCH */],
            absolute: [
                axis(0 /* ABS_X */), axis(1 /* ABS_Y */), UInputDevice.Axis(code: 0x2f /* ABS_MT_SLOT */, minimum: 0, maximum: 9),
                axis(0x35 /* ABS_MT_POSITION_X */), axis(0x36 /* ABS_MT_POSITION_Y */),
                UInputDevice.Axis(code: 0x39 /* ABS_MT_TRACKING_ID */, minimum: 0, maximum: 65535)
            ],
            properties: [1 /* INPUT_PROP_DIRECT */], udev: ["ID_INPUT", "ID_INPUT_TOUCHSCREEN"])
    }

    /// Finger `slot` touches (with tracking id `id`) or moves to (`x`, `y`) in device units.
    func touch(slot: Int32, id: Int32? = nil, x: Int32, y: Int32) {
        device.emit(UInputDevice.evAbs, 0x2f, slot)
        if let id {
            device.emit(UInputDevice.evAbs, 0x39, id)
            down += 1
            if down == 1 { device.emit(UInputDevice.evKey, 0x14a, 1) }
        }
        device.emit(UInputDevice.evAbs, 0x35, x)
        device.emit(UInputDevice.evAbs, 0x36, y)
        device.emit(UInputDevice.evAbs, 0, x)
        device.emit(UInputDevice.evAbs, 1, y)
        device.sync()
    }

    /// Finger `slot` lifts.
    func lift(slot: Int32) {
        device.emit(UInputDevice.evAbs, 0x2f, slot)
        device.emit(UInputDevice.evAbs, 0x39, -1)
        down -= 1
        if down == 0 { device.emit(UInputDevice.evKey, 0x14a, 0) }
        device.sync()
    }
}
