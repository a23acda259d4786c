import DRMBackend
import EGLGraphics
import WaylandBackend

/// Everything a ``DisplaySurface`` can fail with: the backends' errors wrapped, worded so a person
/// can act on them (naming the ``DisplaySurface/Options`` to change).
public enum DisplaySurfaceError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The Wayland backend failed (connecting, the window, the compositor going away).
    case wayland(WaylandError)
    /// The DRM/KMS backend failed (device, master, mode, flips).
    case drm(DRMError)
    /// EGL refused to bind, draw or present.
    case graphics(String)
    /// `.auto` found no display: what was tried, in order, and why each failed.
    case noDisplay(tried: [Attempt])
    /// The surface is closed.
    case closed
    /// A screenshot could not be taken or written.
    case screenshot(String)

    /// One backend `.auto` tried.
    public struct Attempt: Sendable, Equatable {
        public var backend: DisplaySurface.Backend
        public var error: DisplaySurfaceError
    }

    public var description: String {
        switch self {
        case .wayland(let error):
            switch error {
            case .cannotConnect:
                return "\(error) Set DisplaySurface.Options.waylandSocket (or WAYLAND_DISPLAY) to a running compositor's socket, "
                    + "or open the console's display with DisplaySurface.Options.backend = .drm."
            case .missingGlobals:
                return "\(error) Use another compositor, or DisplaySurface.Options.backend = .drm on a console."
            default:
                return error.description
            }
        case .drm(let error):
            switch error {
            case .noDevice, .noConnectedConnector:
                return "\(error) Choose the card with DisplaySurface.Options.devicePath (e.g. \"/dev/dri/card1\")."
            case .notMaster:
                return "\(error) Inside a compositor, use DisplaySurface.Options.backend = .wayland (or .auto)."
            case .modeNotFound:
                return "\(error) Set DisplaySurface.Options.mode to one of those (nil: the preferred mode)."
            default:
                return error.description
            }
        case .graphics(let message):
            return message
        case .noDisplay(let attempts):
            return "no display to run on:\n"
                + attempts.map { "  - \($0.backend): \($0.error)" }.joined(separator: "\n")
        case .closed:
            return "The display surface is closed."
        case .screenshot(let message):
            return message
        }
    }
}
