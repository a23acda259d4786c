import DisplayLinkCore
internal import CWayland
internal import CWaylandClient

/// A `wl_output` the compositor advertised, with what it said about itself.
@MainActor
public final class WaylandOutput {
    public private(set) var name: String?
    public private(set) var outputDescription: String?
    public private(set) var width: Int32 = 0
    public private(set) var height: Int32 = 0
    /// The current mode's refresh in mHz (0 when unknown).
    public private(set) var refreshMilliHertz: Int32 = 0
    public private(set) var scale: Int32 = 1
    /// The manufacturer and model from `wl_output.geometry`.
    public private(set) var make: String?
    public private(set) var model: String?

    /// Whether this is one of mutter's virtual monitors (`--virtual-monitor`, headless and remote
    /// desktop sessions: make `MetaVendor`, model `MetaVirtualMonitor`). Their presentations carry
    /// no `VSYNC`, so commits on them are untimed (see
    /// ``WaylandFrameSource/Configuration/requiresVsyncForTimedCommits``).
    public var isMutterVirtualMonitor: Bool { make == "MetaVendor" && model == "MetaVirtualMonitor" }
    /// The output's key in the scheduler's commit-timing gate: its registry name.
    var gateKey: UInt64 { UInt64(globalName) }

    let proxy: OpaquePointer
    let globalName: UInt32
    private var modeHandlers = HandlerList<() -> Void>()
    private var scaleHandlers = HandlerList<() -> Void>()
    private var scaleAtLastDone: Int32 = 1
    private var refreshAtLastDone: Int32 = 0
    private var sizeAtLastDone: (Int32, Int32) = (0, 0)
    private var doneSeen = false

    /// Runs `handler` after a `done` that changed the current mode (not on the first `done`).
    func addModeChangeHandler(_ handler: @escaping () -> Void) -> Int {
        modeHandlers.add(handler)
    }

    func removeModeChangeHandler(_ id: Int) { modeHandlers.remove(id) }

    /// Runs `handler` after a `done` that changed ``scale`` (surfaces on the output rescale).
    func addScaleChangeHandler(_ handler: @escaping () -> Void) -> Int {
        scaleHandlers.add(handler)
    }

    func removeScaleChangeHandler(_ id: Int) { scaleHandlers.remove(id) }

    private func done() {
        let changed = doneSeen && (refreshAtLastDone != refreshMilliHertz || sizeAtLastDone != (width, height))
        if scaleAtLastDone != scale {
            scaleAtLastDone = scale
            for entry in scaleHandlers.entries { entry.handler() }
        }
        doneSeen = true
        refreshAtLastDone = refreshMilliHertz
        sizeAtLastDone = (width, height)
        if changed { for entry in modeHandlers.entries { entry.handler() } }
    }

    init(proxy: OpaquePointer, globalName: UInt32) {
        self.proxy = proxy
        self.globalName = globalName
        wl_output_add_listener(proxy, WaylandOutput.listener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// How errors name the output: its `wl_output` name (e.g. `'HDMI-A-1'`), else its global's number.
    var label: String { name.map { "'\($0)'" } ?? "wl_output global \(globalName)" }

    /// The refresh period the output advertises, if any.
    public var advertisedPeriod: Nanoseconds? {
        refreshMilliHertz > 0 ? Nanoseconds(1_000_000_000_000 / Int64(refreshMilliHertz)) : nil
    }

    func destroy() {
        if wl_output_get_version(proxy) >= 3 {
            wl_output_release(proxy)
        } else {
            wl_output_destroy(proxy)
        }
    }

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandOutput {
        Unmanaged<WaylandOutput>.fromOpaque(data!).takeUnretainedValue()
    }

    private nonisolated(unsafe) static let listener = WaylandListeners.make(
        wl_output_listener(
            geometry: { data, _, _, _, _, _, _, make, model, _ in
                let makeText = make.map { String(cString: $0) }
                let modelText = model.map { String(cString: $0) }
                let output = WaylandOutput.from(data)
                MainActor.assumeIsolated {
                    output.make = makeText
                    output.model = modelText
                }
            },
            mode: { data, _, flags, width, height, refresh in
                guard flags & WL_OUTPUT_MODE_CURRENT.rawValue != 0 else { return }
                let output = WaylandOutput.from(data)
                MainActor.assumeIsolated {
                    output.width = width
                    output.height = height
                    output.refreshMilliHertz = refresh
                }
            },
            done: { data, _ in
                let output = WaylandOutput.from(data)
                MainActor.assumeIsolated { output.done() }
            },
            scale: { data, _, factor in
                let object = WaylandOutput.from(data)
                MainActor.assumeIsolated { object.scale = factor }
            },
            name: { data, _, name in
                let text = name.map { String(cString: $0) }
                let object = WaylandOutput.from(data)
                MainActor.assumeIsolated { object.name = text }
            },
            description: { data, _, description in
                let text = description.map { String(cString: $0) }
                let object = WaylandOutput.from(data)
                MainActor.assumeIsolated { object.outputDescription = text }
            }
        ))
}
