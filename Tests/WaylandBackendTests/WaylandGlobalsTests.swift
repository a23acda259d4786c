@testable import WaylandBackend
import Testing

@Suite("Wayland globals")
struct WaylandGlobalsTests {
    @Test("missing required globals are named, in order")
    func missingNamed() {
        let advertised = [WaylandGlobal(name: 1, interface: "wl_shm", version: 1),
                          WaylandGlobal(name: 2, interface: "wp_presentation", version: 1)]
        #expect(WaylandGlobals.missing(from: advertised) == ["wl_compositor", "xdg_wm_base"])
        let error = WaylandError.missingGlobals(WaylandGlobals.missing(from: advertised))
        #expect(error.description == "The Wayland compositor does not offer wl_compositor, xdg_wm_base, which this program needs.")
        #expect(WaylandGlobals.missing(from: advertised + [WaylandGlobal(name: 3, interface: "wl_compositor", version: 5),
                                                           WaylandGlobal(name: 4, interface: "xdg_wm_base", version: 6)]).isEmpty)
    }

    @Test("versions negotiate down to what both sides speak")
    func negotiation() {
        #expect(WaylandGlobals.negotiated(6, ours: 4) == 4)
        #expect(WaylandGlobals.negotiated(2, ours: 5) == 2)
    }
}
