/// What setting up console input can fail with, worded so a person can act on it.
public enum SeatInputError: Error, CustomStringConvertible, Sendable, Equatable {
    case keymap(String)
    case libinput(String)
    /// No keyboard, pointer or touchscreen could be used: what was found for each device.
    case noDevice([InputDeviceReport])

    public var description: String {
        switch self {
        case .keymap(let message): "Keyboard map: \(message)."
        case .libinput(let message): "Console input: \(message)."
        case .noDevice(let found):
            found.isEmpty
                ? "No input device under /dev/input (is the evdev module loaded?)."
                : "No keyboard, pointer or touchscreen could be used: " + found.map(\.description).joined(separator: "; ")
                    + ". Through a seat the session must be active; without one the user needs read access (the 'input' group)."
        }
    }
}
