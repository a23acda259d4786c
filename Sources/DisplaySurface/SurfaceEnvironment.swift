import SurfaceBackend

/// One fact about the display a surface is on, for reports and logs (defined with the backend
/// protocol, which every backend reports its facts through).
public typealias EnvironmentEntry = SurfaceBackend.EnvironmentEntry

extension DisplaySurface {
    /// What this surface runs on, as named facts in a fixed order.
    ///
    /// - Wayland: `compositor` (its process; behind a proxy, the compositor its globals name and
    ///   the proxy, e.g. `mutter (through waypipe)`), `socket`, `presentation_clock`, `refresh_advertised`, `egl_vendor`,
    ///   `gles_version`, `swap_with_damage`, `timing_protocols` (those in use, with their versions,
    ///   e.g. `wp_presentation 2`, `wp_commit_timing_v1 1`, `wp_fifo_v1 1`, `xdg_wm_base 6`; commit
    ///   timing is no longer listed while commits are untimed), `commit_timing` (the `VSYNC`
    ///   gate's state on the window's output: `in use (VSYNC feedback)`, `in use (VSYNC gate
    ///   bypassed)`, `waiting for VSYNC feedback`, `not used: presentations without VSYNC`,
    ///   `stopped: a timed commit was held`; or `off`: offered but turned off by
    ///   `DisplaySurface.Options.waylandCommitTiming`; or `not offered`).
    /// - DRM/KMS: `device`, `driver`, `connector`, `mode`, `presentation_clock`,
    ///   `refresh_advertised`, `refresh_exact`, `period_exact`, `flips_submitted`,
    ///   `flips_completed`, `egl_driver`, `buffers_kept_mapped`, `kms_api` (`atomic` or `legacy`),
    ///   `pacing` (`vblank`, or `timer` on a driver without vblank events).
    /// - Offscreen: `platform`, `size`, `presentation_clock` (`virtual`), `refresh_advertised`,
    ///   `refresh_exact`, `period_exact`, `start_time`, `refreshes`, `frames_presented`,
    ///   `egl_vendor`, `egl_driver`, `gles_version`.
    ///
    /// After ``close()`` it is what it was at the moment of closing.
    public var environment: [EnvironmentEntry] {
        environmentAtClose ?? surfaceBackend.environment
    }
}
