import DRMBackend
import EGLGraphics
import SurfaceBackend
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
    /// A backend without a case of its own failed (the offscreen backend): which one, and its
    /// typed error (e.g. `OffscreenError`), whose message names the option to change.
    case backend(SurfaceBackendError)
    /// ``DisplaySurface/Options/scale`` is not a scale.
    case invalidScale(Double)
    /// ``DisplaySurface/Options/graphics`` `.external` asked of a backend that cannot hand the
    /// display to another graphics API: which backend, and why.
    case externalGraphicsUnsupported(DisplaySurface.Backend, reason: String)
    /// A GLES call (``DisplaySurface/beginFrame()``, ``DisplaySurface/present(damage:)``,
    /// ``DisplaySurface/readPixels()``) on a surface opened with `.external` graphics: it has no
    /// GLES context.
    case noGLESContext

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
        case .backend(let failure):
            return failure.description
        case .invalidScale(let scale):
            return "DisplaySurface.Options.scale \(scale) is not a scale: set it above 0 and at most 8 (nil: the display's own)."
        case .externalGraphicsUnsupported(let backend, let reason):
            return "DisplaySurface.Options.graphics = .external is not supported on \(backend): \(reason)"
        case .noGLESContext:
            return "The surface was opened with DisplaySurface.Options.graphics = .external and has no GLES context: "
                + "draw and present with the program's own API (calling "
                + "DisplaySurface.willCommit(bufferWidth:bufferHeight:) right before each present), "
                + "or open it with .gles."
        }
    }
}

extension DisplaySurfaceError {
    /// A backend's failure as the surface reports it: one of the surface's own errors (what the
    /// built-in backends wrap) as it is, an EGL error as ``graphics(_:)``, any other as
    /// ``backend(_:)``.
    init(_ failure: SurfaceBackendError) {
        if let error = failure.error as? DisplaySurfaceError {
            self = error
        } else if let error = failure.error as? EGLError {
            self = .graphics(DisplaySurfaceError.explain(error))
        } else {
            self = .backend(failure)
        }
    }

    private static func explain(_ error: EGLError) -> String {
        guard error.code == 0x3002 /* EGL_BAD_ACCESS */ else { return error.description }
        return error.description + " The context is still current on another thread: call "
            + "DisplaySurface.releaseContext() (or prepare(draw:)) on the thread that bound it before dispatchMain()."
    }
}

extension SurfaceBackendError {
    /// A built-in backend's failure, already worded as the surface reports it (it passes through
    /// as it is).
    init(_ error: DisplaySurfaceError) {
        let backend: DisplaySurface.Backend? =
            switch error {
            case .wayland: .wayland
            case .drm: .drm
            default: nil
            }
        self.init(backend: backend?.rawValue ?? "surface", error)
    }
}
