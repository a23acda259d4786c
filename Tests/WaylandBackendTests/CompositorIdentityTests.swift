import Testing

@testable import WaylandBackend

/// How a report names the compositor: its process, or behind a proxy the one its globals name.
@Suite("Compositor identity for reports")
struct CompositorIdentityTests {
    @Test("a compositor's process is its name; a proxy is named with the compositor its globals point to; else the peer or unknown")
    func describe() {
        #expect(CompositorIdentity.describe(peer: "weston", globals: ["gtk_shell1"]) == "weston")
        #expect(CompositorIdentity.describe(peer: "waypipe", globals: ["wl_compositor", "gtk_shell1"]) == "mutter (through waypipe)")
        #expect(CompositorIdentity.describe(peer: "proxy", globals: ["org_kde_kwin_blur_manager"]) == "kwin (through proxy)")
        #expect(CompositorIdentity.describe(peer: "proxy", globals: ["weston_capture_v1"]) == "weston (through proxy)")
        #expect(
            CompositorIdentity.describe(peer: nil, globals: ["zwlr_layer_shell_v1"]) == "a wlroots compositor (through an unknown process)")
        #expect(CompositorIdentity.describe(peer: "proxy", globals: ["wl_compositor"]) == "proxy")
        #expect(CompositorIdentity.describe(peer: nil, globals: []) == "unknown")
    }
}
