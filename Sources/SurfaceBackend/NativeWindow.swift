/// What another graphics API needs to draw into a surface opened without a GLES context
/// (`DisplaySurface.Options.graphics` `.external`).
public enum NativeWindow {
    /// A Wayland window: the `wl_display *` and `wl_surface *`, as
    /// `VkWaylandSurfaceCreateInfoKHR` takes them (`VK_KHR_wayland_surface`). Both stay the
    /// surface's: valid until it closes; the program's swapchain and surface objects go first.
    case wayland(display: OpaquePointer, surface: OpaquePointer)

    /// The `wl_display *` of a Wayland window.
    public var waylandDisplay: OpaquePointer? {
        switch self {
        case .wayland(let display, _): display
        }
    }

    /// The `wl_surface *` of a Wayland window.
    public var waylandSurface: OpaquePointer? {
        switch self {
        case .wayland(_, let surface): surface
        }
    }
}
