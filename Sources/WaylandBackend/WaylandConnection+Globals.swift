import DisplayLinkCore
internal import CWayland
internal import CWaylandClient

/// The compositor's globals: recording them as they come and go, binding the ones the library
/// uses, and finding outputs.
extension WaylandConnection {
    func globalAdded(name: UInt32, interface: String, version: UInt32) {
        globals.append(WaylandGlobal(name: name, interface: interface, version: version))
        // Outputs can come and go at any time; bind them as they appear once we are running.
        if interface == "wl_output", registry != nil, globalsBound {
            bindOutput(name: name, version: version)
        }
    }

    func globalRemoved(name: UInt32) {
        globals.removeAll { $0.name == name }
        if let index = outputs.firstIndex(where: { $0.globalName == name }) {
            outputs[index].destroy()
            outputs.remove(at: index)
        }
    }

    func bindGlobals() {
        guard let registry else { return }
        defer { globalsBound = true }
        // On the program's display only the timing globals and the outputs: the window, its
        // input and its scale are the program's.
        let binds = { (interface: String) in !self.isBorrowed || WaylandGlobals.borrowed.contains(interface) }
        // The timestamps manager first: the seat subscribes each device as it appears.
        if options.bindInputTimestamps, !isBorrowed,
            let global = globals.first(where: { $0.interface == "zwp_input_timestamps_manager_v1" })
        {
            let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.inputTimestampsVersion)
            inputTimestampsManager = OpaquePointer(
                cwl_registry_bind(registry, global.name, cwl_zwp_input_timestamps_manager_v1_interface(), version))
            boundVersions.append((global.interface, version))
        }
        for global in globals where binds(global.interface) {
            switch global.interface {
            case "wl_compositor":
                compositor = OpaquePointer(
                    cwl_registry_bind(
                        registry, global.name, cwl_compositor_interface(),
                        WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.compositorVersion)))
            case "xdg_wm_base":
                wmBaseVersion = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.wmBaseVersion)
                wmBase = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_xdg_wm_base_interface(), wmBaseVersion))
                xdg_wm_base_add_listener(wmBase, WaylandListeners.wmBase, nil)
                boundVersions.append((global.interface, wmBaseVersion))
            case "wl_seat" where seatInput == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.seatVersion)
                guard let seat = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_seat_interface(), version)) else { break }
                seatInput = WaylandSeatInput(seat: seat, version: version, timestampsManager: inputTimestampsManager)
            case "wp_presentation" where options.bindPresentationTime:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.presentationVersion)
                presentation = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_wp_presentation_interface(), version))
                wp_presentation_add_listener(
                    presentation, WaylandListeners.presentation,
                    Unmanaged.passUnretained(self).toOpaque())
                boundVersions.append((global.interface, version))
            case "wp_commit_timing_manager_v1" where options.bindCommitTiming && commitTimingManager == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.commitTimingVersion)
                commitTimingManager = OpaquePointer(
                    cwl_registry_bind(
                        registry, global.name, cwl_wp_commit_timing_manager_v1_interface(), version))
                boundVersions.append((global.interface, version))
            case "wp_fifo_manager_v1" where options.bindFifo && fifoManager == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.fifoVersion)
                fifoManager = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_wp_fifo_manager_v1_interface(), version))
                boundVersions.append((global.interface, version))
            case "wl_subcompositor" where subcompositor == nil:
                subcompositor = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_subcompositor_interface(), 1))
            case "wl_shm" where shm == nil:
                shm = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_shm_interface(), 1))
            case "wp_viewporter" where viewporter == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.viewporterVersion)
                viewporter = OpaquePointer(cwl_registry_bind(registry, global.name, cwl_wp_viewporter_interface(), version))
                boundVersions.append((global.interface, version))
            case "wp_fractional_scale_manager_v1" where fractionalScaleManager == nil:
                let version = WaylandGlobals.negotiated(global.version, ours: WaylandGlobals.fractionalScaleVersion)
                fractionalScaleManager = OpaquePointer(
                    cwl_registry_bind(registry, global.name, cwl_wp_fractional_scale_manager_v1_interface(), version))
                boundVersions.append((global.interface, version))
            default:
                break
            }
        }
        for global in globals where global.interface == "wl_output" {
            bindOutput(name: global.name, version: global.version)
        }
    }

    private func bindOutput(name: UInt32, version: UInt32) {
        guard let registry else { return }
        let proxy = OpaquePointer(
            cwl_registry_bind(
                registry, name, cwl_output_interface(),
                WaylandGlobals.negotiated(version, ours: WaylandGlobals.outputVersion)))
        outputs.append(WaylandOutput(proxy: proxy!, globalName: name))
    }

    func presentationClockChanged(_ id: UInt32) {
        presentationClock = ClockDomain(clockID: id)
    }

    // MARK: Outputs

    /// The output with this `wl_output` name (e.g. `HDMI-A-1`), or
    /// ``WaylandError/unknownOutput(_:available:)`` naming the outputs there are. Names come with
    /// `wl_output` version 4: a compositor with an older one (weston 10) has no named outputs
    /// (pass one of ``outputs`` to ``WaylandWindow`` instead).
    public func output(named name: String) throws(WaylandError) -> WaylandOutput {
        guard let output = outputs.first(where: { $0.name == name }) else { throw unknownOutput("'\(name)'") }
        return output
    }

    func unknownOutput(_ what: String) -> WaylandError {
        .unknownOutput(
            what,
            available: outputs.map {
                $0.name ?? "wl_output global \($0.globalName) (unnamed: wl_output before version 4)"
            })
    }

    func output(for proxy: OpaquePointer?) -> WaylandOutput? {
        outputs.first { $0.proxy == proxy }
    }
}
