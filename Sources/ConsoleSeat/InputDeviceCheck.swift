import Glibc

/// What ``SeatInput`` found for one evdev device.
public struct InputDeviceReport: Sendable, Hashable, CustomStringConvertible {
    public enum Finding: Sendable, Hashable {
        /// In use, as these kinds of device (libinput's capabilities).
        case used(InputDeviceKinds)
        /// Opened, but neither a keyboard, a pointer nor a touchscreen (a lid switch, a tablet
        /// pad): closed again.
        case otherKind
        /// udev has no database entry for the device (the file named), which libinput needs to
        /// know what the device is: no udev daemon runs, or it has not seen the device yet.
        case noUdevEntry(String)
        /// udev's entry (the file named) does not tag the device as input (`ID_INPUT=1`).
        case notTaggedAsInput(String)
        /// The device could not be opened (through the seat, or with the user's permissions).
        case refused(String)
        /// libinput did not take the device (its own log line says why).
        case notTaken
        /// Not a character device, or not there.
        case notADevice(String)
    }

    public var path: String
    public var finding: Finding

    public init(path: String, finding: Finding) {
        self.path = path
        self.finding = finding
    }

    public var description: String {
        switch finding {
        case .used(let kinds): "\(path): \(kinds)"
        case .otherKind: "\(path): not a keyboard, pointer or touchscreen"
        case .noUdevEntry(let entry):
            "\(path): no udev database entry \(entry) (is systemd-udevd or eudev running? libinput needs it to know the device)"
        case .notTaggedAsInput(let entry): "\(path): udev's entry \(entry) does not tag it as input (no ID_INPUT=1)"
        case .refused(let reason): "\(path): not opened (\(reason))"
        case .notTaken: "\(path): libinput did not take it"
        case .notADevice(let reason): "\(path): \(reason)"
        }
    }
}

/// The kinds of input a device gives (libinput's capabilities).
public struct InputDeviceKinds: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let keyboard = InputDeviceKinds(rawValue: 1 << 0)
    public static let pointer = InputDeviceKinds(rawValue: 1 << 1)
    public static let touch = InputDeviceKinds(rawValue: 1 << 2)

    public var description: String {
        let names = [(Self.keyboard, "keyboard"), (.pointer, "pointer"), (.touch, "touchscreen")].filter { contains($0.0) }
        return names.isEmpty ? "nothing" : names.map(\.1).joined(separator: ", ")
    }
}

/// The udev database entry of a device node, as libudev reads it (`/run/udev/data/c<major>:<minor>`,
/// lines `E:KEY=VALUE`): libinput reads the device's kind from it (`ID_INPUT_KEYBOARD`,
/// `ID_INPUT_MOUSE`, `ID_INPUT_TOUCHSCREEN`, …) and takes no device without one.
///
/// Pure value type apart from ``problem(devicePath:)``.
struct UdevEntry: Sendable, Hashable {
    /// Where udev keeps its database (systemd-udevd and eudev alike).
    static let directory = "/run/udev/data"

    /// The `ID_INPUT*` properties set to 1, in the order found.
    let inputTags: [String]

    init(contents: String) {
        var tags: [String] = []
        for line in contents.split(separator: "\n") where line.hasPrefix("E:ID_INPUT") && line.hasSuffix("=1") {
            tags.append(String(line.dropFirst(2).dropLast(2)))
        }
        inputTags = tags
    }

    /// Whether udev tags the device as input (libinput ignores it otherwise).
    var isInput: Bool { inputTags.contains("ID_INPUT") }

    /// The entry's path for a character device number (glibc's `dev_t` encoding).
    static func path(device: UInt64) -> String {
        let major = UInt32(truncatingIfNeeded: device >> 8) & 0xfff | UInt32(truncatingIfNeeded: device >> 32) & ~0xfff
        let minor = UInt32(truncatingIfNeeded: device) & 0xff | UInt32(truncatingIfNeeded: device >> 12) & ~0xff
        return "\(directory)/c\(major):\(minor)"
    }

    /// What is wrong with `devicePath`'s entry (``InputDeviceReport/Finding``); nil: nothing, it
    /// tags the device as input.
    static func problem(devicePath: String) -> InputDeviceReport.Finding? {
        var info = stat()
        guard stat(devicePath, &info) == 0 else { return .notADevice(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFCHR else { return .notADevice("not a character device") }
        let entry = path(device: UInt64(info.st_rdev))
        guard let contents = readSmallFile(entry) else { return .noUdevEntry(entry) }
        return UdevEntry(contents: contents).isInput ? nil : .notTaggedAsInput(entry)
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = Glibc.read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
