internal import CWayland
internal import CWaylandClient

/// Listener tables: one static, never-freed table per interface, so every proxy's listener
/// outlives it. Every slot is filled, for every event of the versions bound.
enum WaylandListeners {
    nonisolated(unsafe) static let registry: UnsafeMutablePointer<wl_registry_listener> = make(
        wl_registry_listener(
            global: { data, _, name, interface, version in
                let interfaceName = interface.map { String(cString: $0) } ?? ""
                let object = WaylandConnection.from(data)
                MainActor.assumeIsolated {
                    object.globalAdded(name: name, interface: interfaceName, version: version)
                }
            },
            global_remove: { data, _, name in
                let object = WaylandConnection.from(data)
                MainActor.assumeIsolated { object.globalRemoved(name: name) }
            }
        ))

    nonisolated(unsafe) static let wmBase: UnsafeMutablePointer<xdg_wm_base_listener> = make(
        xdg_wm_base_listener(
            ping: { _, base, serial in xdg_wm_base_pong(base, serial) }
        ))

    nonisolated(unsafe) static let presentation: UnsafeMutablePointer<wp_presentation_listener> = make(
        wp_presentation_listener(
            clock_id: { data, _, clockID in
                let object = WaylandConnection.from(data)
                MainActor.assumeIsolated { object.presentationClockChanged(clockID) }
            }
        ))

    nonisolated(unsafe) static let sync: UnsafeMutablePointer<wl_callback_listener> = make(
        wl_callback_listener(
            done: { data, callback, _ in
                nonisolated(unsafe) let callback = callback
                nonisolated(unsafe) let data = data
                MainActor.assumeIsolated {
                    wl_callback_destroy(callback)
                    let request = Unmanaged<SyncRequest>.fromOpaque(data!).takeRetainedValue()
                    request.connection?.pendingSyncs[ObjectIdentifier(request)] = nil
                    request.done()
                }
            }
        ))

    static func make<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }
}
