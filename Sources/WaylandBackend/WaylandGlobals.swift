internal import CWayland
/// A global the compositor advertised.
public struct WaylandGlobal: Sendable, Hashable {
    public var name: UInt32
    public var interface: String
    public var version: UInt32
}

/// Which globals the backend binds, at which versions.
enum WaylandGlobals {
    /// Needed for a window: without them there is nothing to do.
    static let required = ["wl_compositor", "xdg_wm_base"]

    /// What a connection on the program's display binds (``WaylandConnection/init(borrowing:options:)``):
    /// timing and outputs, nothing the program's own window or input needs.
    static let borrowed: Set<String> = ["wp_presentation", "wp_commit_timing_manager_v1", "wp_fifo_manager_v1", "wl_output"]

    /// The required interfaces missing from an advertisement, in a stable order.
    static func missing(from advertised: [WaylandGlobal]) -> [String] {
        required.filter { name in !advertised.contains { $0.interface == name } }
    }

    /// The version to bind: the highest both sides speak.
    static func negotiated(_ advertised: UInt32, ours: UInt32) -> UInt32 { min(advertised, ours) }

    // The highest versions whose events this backend has listeners for.
    // wl_surface.damage_buffer (4); preferred_buffer_scale and _transform (6) only when the
    // libwayland-client loaded at run time knows them: the one of Debian 12 (1.21) defines
    // wl_surface up to 5, and a compositor's preferred_buffer_scale would end the connection
    // there. Then the scale comes from the outputs the surface enters (wl_output.scale) and from
    // wp_fractional_scale_v1.
    static var compositorVersion: UInt32 { cwl_surface_interface_version() >= 6 ? 6 : 4 }
    static let wmBaseVersion: UInt32 = 6  // xdg_toplevel configure_bounds, wm_capabilities; v6: suspended
    static let presentationVersion: UInt32 = 2  // v2: refresh 0 for variable refresh
    static let commitTimingVersion: UInt32 = 1
    static let fifoVersion: UInt32 = 1
    static let outputVersion: UInt32 = 4  // wl_output.name / description
    static let seatVersion: UInt32 = 8  // wl_pointer frames (5), axis_value120 (8); wl_touch shape (6)
    static let inputTimestampsVersion: UInt32 = 1
    static let viewporterVersion: UInt32 = 1
    static let fractionalScaleVersion: UInt32 = 1
}
