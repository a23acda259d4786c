internal import CWayland
internal import CWaylandClient

/// A transparent 1×1 desynchronised subsurface of the library's window, made with it on mutter
/// when commit timing is in use: a commit on it makes mutter repaint, and that frame applies the
/// window's timed commit mutter holds (measured on mutter 50.5: 158 of 158 holds released, 1.6 ms
/// median from the subsurface's commit to the window's frame callback, see Docs/MEASURED.md). A
/// timed commit a period ahead releases it too; the subsurface does not queue behind the held
/// commit as the window's own commits do. It costs one 4-byte buffer and, per release, one
/// commit; it takes no input (its input region is empty) and shows nothing.
@MainActor
final class HeldCommitReleaser {
    private let surface: OpaquePointer
    private let subsurface: OpaquePointer
    private let buffer: OpaquePointer
    private var destroyed = false
    /// Releases made.
    private(set) var releaseCount = 0

    /// A subsurface of `parent` on `connection`, or nil when the compositor offers no
    /// `wl_subcompositor` or `wl_shm`, or no memory file can be made (the timed release alone
    /// then serves). Its placement is applied with the parent's next commit.
    init?(connection: WaylandConnection, parent: OpaquePointer) {
        guard let compositor = connection.compositor, let subcompositor = connection.subcompositor,
            let shm = connection.shm, let buffer = cwl_transparent_pixel(shm)
        else { return nil }
        guard let surface = wl_compositor_create_surface(compositor) else {
            wl_buffer_destroy(buffer)
            return nil
        }
        guard let subsurface = wl_subcompositor_get_subsurface(subcompositor, surface, parent) else {
            wl_surface_destroy(surface)
            wl_buffer_destroy(buffer)
            return nil
        }
        self.surface = surface
        self.subsurface = subsurface
        self.buffer = buffer
        wl_subsurface_set_desync(subsurface)
        if let region = wl_compositor_create_region(compositor) {
            wl_surface_set_input_region(surface, region)
            wl_region_destroy(region)
        }
        wl_surface_attach(surface, buffer, 0, 0)
        wl_surface_commit(surface)
    }

    /// Commits the subsurface with its pixel damaged, so the compositor repaints the output.
    func release() {
        guard !destroyed else { return }
        wl_surface_attach(surface, buffer, 0, 0)
        // damage_buffer is wl_surface version 4; a compositor bound lower takes surface damage.
        if wl_proxy_get_version(surface) >= 4 {
            wl_surface_damage_buffer(surface, 0, 0, 1, 1)
        } else {
            wl_surface_damage(surface, 0, 0, 1, 1)
        }
        wl_surface_commit(surface)
        releaseCount += 1
    }

    /// Destroys its objects, before the window's surface goes. Idempotent.
    func destroy() {
        guard !destroyed else { return }
        destroyed = true
        wl_subsurface_destroy(subsurface)
        wl_surface_destroy(surface)
        wl_buffer_destroy(buffer)
    }
}
