internal import CWayland
internal import CWaylandClient

/// A pointer device made on the compositor's seat through wlroots'
/// `zwlr_virtual_pointer_manager_v1`, for tests: a headless sway has no input devices, and its
/// seat offers a pointer only while a pointer device exists. A test moves sway's cursor with its
/// IPC (`seat … cursor`), or with the device's own events (``move(toX:y:extent:time:)``,
/// ``button(_:isPressed:time:)``): sway 1.7's IPC sends no motion while a button is held, the
/// device's events go the way a mouse's do (a drag), each with the time given, queued until
/// ``send()``.
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

    /// Moves the pointer to (`x`, `y`) of an area `extent` wide and high that the compositor maps
    /// onto its outputs (sway: the whole layout; an output's size gives its points exactly), at
    /// `time` (milliseconds on `CLOCK_MONOTONIC`, as a compositor stamps its events), and ends the
    /// group (a frame). Queued until ``send()``.
    package func move(toX x: UInt32, y: UInt32, extent: (width: UInt32, height: UInt32), time: UInt32) {
        guard let pointer else { return }
        zwlr_virtual_pointer_v1_motion_absolute(pointer, time, x, y, extent.width, extent.height)
        zwlr_virtual_pointer_v1_frame(pointer)
    }

    /// Presses or releases `button` (a Linux input event code: 0x110 is the left button) at
    /// `time` (milliseconds, as in ``move(toX:y:extent:time:)``), and ends the group. Queued
    /// until ``send()``.
    package func button(_ button: UInt32, isPressed: Bool, time: UInt32) {
        guard let pointer else { return }
        zwlr_virtual_pointer_v1_button(pointer, time, button, isPressed ? 1 : 0)
        zwlr_virtual_pointer_v1_frame(pointer)
    }

    /// Sends the events queued, in one write: the compositor reads them together.
    package func send() { connection.flush() }

    /// Removes the device from the seat. Idempotent.
    package func destroy() {
        if let pointer { zwlr_virtual_pointer_v1_destroy(pointer) }
        if let manager { zwlr_virtual_pointer_manager_v1_destroy(manager) }
        pointer = nil
        manager = nil
        connection.flush()
    }
}
