internal import CWayland
internal import CWaylandClient

/// A pointer device made on the compositor's seat through wlroots'
/// `zwlr_virtual_pointer_manager_v1`, for tests: a headless sway has no input devices, and its
/// seat offers a pointer only while a pointer device exists. The device sends nothing itself; the
/// test moves sway's cursor with its IPC (`seat … cursor`), and the seat's clients get the events.
///
/// It holds its connection: its proxies are destroyed (deinit, or ``destroy()``) before the
/// connection can disconnect.
@MainActor
package final class WaylandVirtualPointer {
    private let connection: WaylandConnection
    private var manager: OpaquePointer?
    private var pointer: OpaquePointer?

    /// Makes the device on `connection`'s compositor, or returns nil when it does not offer
    /// `zwlr_virtual_pointer_manager_v1`. The compositor has it after a round trip.
    package init?(connection: WaylandConnection) {
        guard let registry = connection.registry,
            let global = connection.globals.first(where: { $0.interface == "zwlr_virtual_pointer_manager_v1" }),
            let manager = OpaquePointer(
                cwl_registry_bind(registry, global.name, cwl_zwlr_virtual_pointer_manager_v1_interface(), min(global.version, 1)))
        else { return nil }
        self.connection = connection
        self.manager = manager
        // No seat given: the compositor's default one.
        pointer = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(manager, nil)
        connection.flush()
    }

    isolated deinit {
        destroy()
    }

    /// Removes the device from the seat. Idempotent.
    package func destroy() {
        if let pointer { zwlr_virtual_pointer_v1_destroy(pointer) }
        if let manager { zwlr_virtual_pointer_manager_v1_destroy(manager) }
        pointer = nil
        manager = nil
        connection.flush()
    }
}
