/// Which compositor a connection talks to, for reports: the process at the other end of the
/// socket, unless that is not a compositor (a proxy such as waypipe or a test's fault proxy, a
/// sandbox's), in which case the globals it passes on name the compositor behind it.
enum CompositorIdentity {
    /// Process names (`/proc/PID/comm`) of compositors.
    static let compositorProcesses: Set<String> = [
        "weston", "mutter", "gnome-shell", "kwin_wayland", "sway", "Hyprland", "labwc", "river", "wayfire", "cage",
        "gamescope", "cosmic-comp", "niri", "hikari", "dwl", "kwin_wayland_wr"
    ]

    /// The compositor the globals point to (nil: none known): only mutter offers `gtk_shell1`,
    /// only kwin `org_kde_*`, only weston `weston_*`; `zwlr_*` are wlroots compositors'.
    static func fingerprint(of globals: [String]) -> String? {
        if globals.contains("gtk_shell1") { return "mutter" }
        if globals.contains(where: { $0.hasPrefix("org_kde_") }) { return "kwin" }
        if globals.contains(where: { $0.hasPrefix("weston_") }) { return "weston" }
        if globals.contains(where: { $0.hasPrefix("zwlr_") }) { return "a wlroots compositor" }
        return nil
    }

    /// `peer` when it is a compositor's process; else the compositor the globals name, through
    /// the peer ("mutter (through waypipe)"); else the peer, or "unknown".
    static func describe(peer: String?, globals: [String]) -> String {
        if let peer, compositorProcesses.contains(peer) { return peer }
        guard let behind = fingerprint(of: globals) else { return peer ?? "unknown" }
        return "\(behind) (through \(peer ?? "an unknown process"))"
    }
}
