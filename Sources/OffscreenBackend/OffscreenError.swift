import EGLGraphics

/// Why an offscreen display could not open or draw, worded to act on (naming the
/// `DisplaySurface.Options` to change).
public enum OffscreenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The size has no pixels.
    case invalidSize(width: Int32, height: Int32)
    /// The refresh rate has no positive period (``VirtualRefreshRate/isValid`` is false).
    case invalidRefreshRate(VirtualRefreshRate)
    /// EGL on Mesa's surfaceless platform refused the display, the context or the pbuffer.
    case graphics(EGLError)

    /// What happened, and which option to change.
    public var description: String {
        switch self {
        case .invalidSize(let width, let height):
            return "The offscreen surface cannot be \(width)x\(height) pixels: set DisplaySurface.Options.width and "
                + "DisplaySurface.Options.height (OffscreenDisplay's width and height) to at least 1."
        case .invalidRefreshRate(let rate):
            return "The offscreen refresh rate has no positive period (\(rate)): set "
                + "DisplaySurface.Options.offscreen.refreshRate to e.g. .hertz(60) or .period(Nanoseconds(20_000_000))."
        case .graphics(let error):
            return "\(error) The offscreen backend draws with EGL on Mesa's surfaceless platform "
                + "(EGL_PLATFORM_SURFACELESS_MESA) into a pbuffer of DisplaySurface.Options.width x height: install "
                + "Mesa's EGL and drivers (apt-get install libegl-mesa0 libgl1-mesa-dri), try a smaller size, "
                + "or open a real display with DisplaySurface.Options.backend = .auto."
        }
    }
}
