/// One event of input on a surface, the same type on every backend: a pointer, a touch point, a
/// key, or keyboard focus, with the instant it happened on the link's clock (``InputTime``).
///
/// Positions are surface-local, in points (logical pixels: a pixel at scale 1, two at scale 2),
/// with the origin at the top left and y growing down, the way `wl_pointer` and `wl_touch` give
/// them.
public struct InputEvent: Sendable, Hashable {
    public var time: InputTime
    public var kind: Kind

    public init(time: InputTime, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    public enum Kind: Sendable, Hashable {
        case pointer(PointerEvent)
        case touch(TouchEvent)
        case key(KeyboardEvent)
        /// The surface gained (true) or lost (false) keyboard focus. Keys held when focus is lost
        /// get no release: forget them (a repeat stops too).
        case keyboardFocus(Bool)
    }
}

/// A point on the surface, in points.
public struct SurfacePoint: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}

/// What a pointer (mouse, touchpad) did. The events between two ``frame`` events belong together
/// (a diagonal scroll is two ``scrolled(axis:points:steps:)`` events and one frame).
public enum PointerEvent: Sendable, Hashable {
    /// The pointer came onto the surface, at this point.
    case entered(SurfacePoint)
    /// The pointer left the surface; buttons held are forgotten (no release follows).
    case left
    case moved(SurfacePoint)
    /// A button (Linux input event code: ``PointerButton``) went down or up.
    case button(PointerButton, isPressed: Bool)
    /// Scrolled by `points` along `axis` (positive: down or right); `steps` counts wheel clicks
    /// when the device has them (nil for touchpads and smooth scrolling).
    case scrolled(axis: ScrollAxis, points: Double, steps: Int?)
    /// The end of a group of pointer events that belong together.
    case frame
}

public enum ScrollAxis: Sendable, Hashable {
    case vertical
    case horizontal
}

/// A pointer button: its Linux input event code (`BTN_LEFT` is 0x110).
public struct PointerButton: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let left = PointerButton(rawValue: 0x110)
    public static let right = PointerButton(rawValue: 0x111)
    public static let middle = PointerButton(rawValue: 0x112)

    public var description: String {
        switch self {
        case .left: "left"
        case .right: "right"
        case .middle: "middle"
        default: "button 0x" + String(rawValue, radix: 16)
        }
    }
}

/// What a touch point did. `id` names one finger from its down to its up (ids are reused after).
/// The events between two ``frame`` events happened together.
public enum TouchEvent: Sendable, Hashable {
    case down(id: Int32, at: SurfacePoint)
    case moved(id: Int32, to: SurfacePoint)
    case up(id: Int32)
    /// The compositor or the system took the touch sequence over: every point is gone, and what
    /// they did should be undone.
    case cancelled
    case frame
}

/// A key that went down, came up, or repeats while held.
public struct KeyboardEvent: Sendable, Hashable {
    public enum Phase: Sendable, Hashable {
        case pressed
        case released
        /// Held past the repeat delay: a press again, made by the library (``KeyRepeater``) from
        /// the compositor's repeat settings on Wayland, the seat's defaults on DRM/KMS.
        case repeated
    }

    public var phase: Phase
    /// The keysym the key produces with the modifiers in effect (XKB's value).
    public var symbol: KeySymbol
    /// The key's Linux input event code (`KEY_A` is 30), whatever the layout.
    public var code: UInt32
    /// The modifiers in effect when the key went down (or repeats).
    public var modifiers: KeyModifiers
    /// What typing the key enters (UTF-8, from xkbcommon); empty for keys that enter no text
    /// and for releases.
    public var text: String

    public init(phase: Phase, symbol: KeySymbol, code: UInt32, modifiers: KeyModifiers = [], text: String = "") {
        self.phase = phase
        self.symbol = symbol
        self.code = code
        self.modifiers = modifiers
        self.text = text
    }
}

/// The modifiers in effect (the effective XKB modifiers, locks included).
public struct KeyModifiers: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let shift = KeyModifiers(rawValue: 1 << 0)
    public static let control = KeyModifiers(rawValue: 1 << 1)
    public static let alt = KeyModifiers(rawValue: 1 << 2)
    /// The Super, Windows or Command key.
    public static let logo = KeyModifiers(rawValue: 1 << 3)
    public static let capsLock = KeyModifiers(rawValue: 1 << 4)
    public static let numLock = KeyModifiers(rawValue: 1 << 5)
}
