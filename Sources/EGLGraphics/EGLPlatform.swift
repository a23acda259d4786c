/// Which native display EGL runs on. The handles are the native objects' pointers, so this module
/// needs neither Wayland nor GBM headers.
public enum EGLPlatform {
    /// A `wl_display *`.
    case wayland(display: OpaquePointer)
    /// A `struct gbm_device *` (DRM/KMS).
    case gbm(device: OpaquePointer)
    /// No display at all (Mesa's surfaceless platform): offscreen rendering, e.g. for tests.
    case surfaceless
}

/// A rectangle in surface pixels, origin at the top left (as Wayland damage is).
public struct PixelRect: Sendable, Hashable {
    public var x: Int32, y: Int32, width: Int32, height: Int32
    public init(x: Int32, y: Int32, width: Int32, height: Int32) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
}
