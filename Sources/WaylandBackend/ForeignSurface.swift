internal import CWayland
internal import CWaylandClient

/// A `wl_surface` the program owns (an SDL or GLFW window, a toolkit's, its own), paced by a
/// ``WaylandFrameSource`` on a borrowed ``WaylandConnection``.
///
/// The surface's role, buffers, commits and events stay the program's. The source requests frame
/// callbacks on a wrapper of the surface that lives on the connection's own event queue, and
/// presentation feedback from the connection's own `wp_presentation`, for the commit the program
/// announces (``WaylandFrameSource/willCommit()``). `wp_fifo_v1` and `wp_commit_timer_v1` allow one
/// object per surface, and the program's graphics stack may hold them (Mesa's Vulkan WSI in FIFO
/// mode, SDL): they are made only when the program says they are free to use.
///
/// What the program's window knows and the library cannot see comes from elsewhere: the outputs
/// from the feedback (`sync_output` names the outputs a frame was shown on), the `suspended`
/// state from the program (``setSuspended(_:)``).
@MainActor
final class ForeignSurface: PacedSurface {
    let connection: WaylandConnection
    let frameProxy: OpaquePointer
    private(set) var commitTimer: OpaquePointer?
    private(set) var fifo: OpaquePointer?
    private(set) var outputs: [WaylandOutput] = []
    private(set) var isSuspended = false
    private(set) var isDestroyed = false
    var commitsItself: Bool { false }

    private var suspendedHandlers = HandlerList<(Bool) -> Void>()
    private var outputHandlers = HandlerList<() -> Void>()
    /// The outputs the feedback being read named so far (its storage is kept between frames).
    private var named: [WaylandOutput] = []
    /// The mode-change handler registered with each output the surface was shown on.
    private var modeHandlerIDs: [(output: WaylandOutput, id: Int)] = []
    /// The program's surfaces whose FIFO or commit timer a source holds.
    private static var fifoSurfaces: Set<UInt> = []
    private static var timedSurfaces: Set<UInt> = []
    private var surfaceAddress: UInt = 0

    /// Wraps `surface` (a `wl_surface *` of the connection's display). `usesFifo` and
    /// `usesCommitTiming`: the program leaves the surface's FIFO and commit-timing objects to the
    /// library (each is made only when the compositor offers it and the connection bound it).
    init(connection: WaylandConnection, surface: OpaquePointer, usesFifo: Bool, usesCommitTiming: Bool) throws(WaylandError) {
        if let error = connection.error { throw error }
        // What can be checked of a pointer the program passes: that libwayland calls it a
        // wl_surface (anything else would be a protocol error that ends the program's display).
        guard let name = wl_proxy_get_class(surface), String(cString: name) == "wl_surface" else {
            throw .notASurface
        }
        // One FIFO and one commit timer per surface: a second is a protocol error.
        let surfaceID = UInt(bitPattern: surface)
        if (usesFifo && ForeignSurface.fifoSurfaces.contains(surfaceID))
            || (usesCommitTiming && ForeignSurface.timedSurfaces.contains(surfaceID))
        {
            throw .timingObjectTaken
        }
        guard let wrapper = wl_proxy_create_wrapper(UnsafeMutableRawPointer(surface)) else {
            throw .connectionLost(errno: nil)
        }
        if let queue = connection.queue { wl_proxy_set_queue(OpaquePointer(wrapper), queue) }
        self.connection = connection
        frameProxy = OpaquePointer(wrapper)
        named.reserveCapacity(4)
        surfaceAddress = surfaceID
        if usesCommitTiming, let manager = connection.commitTimingManager {
            commitTimer = wp_commit_timing_manager_v1_get_timer(manager, surface)
            ForeignSurface.timedSurfaces.insert(surfaceID)
        }
        if usesFifo, let manager = connection.fifoManager {
            fifo = wp_fifo_manager_v1_get_fifo(manager, surface)
            ForeignSurface.fifoSurfaces.insert(surfaceID)
        }
        connection.flush()
    }

    isolated deinit {
        destroy()
    }

    /// Lets go of the library's objects on the surface (the surface itself stays the program's).
    /// Idempotent.
    func destroy() {
        guard !isDestroyed else { return }
        isDestroyed = true
        for (output, id) in modeHandlerIDs { output.removeModeChangeHandler(id) }
        modeHandlerIDs.removeAll()
        // Destroying proxies is local (a dead display drops the destructor requests); only a
        // torn-down connection's queue is gone with them.
        if commitTimer != nil { ForeignSurface.timedSurfaces.remove(surfaceAddress) }
        if fifo != nil { ForeignSurface.fifoSurfaces.remove(surfaceAddress) }
        guard !connection.tornDown else { return }
        if let commitTimer { wp_commit_timer_v1_destroy(commitTimer) }
        if let fifo { wp_fifo_v1_destroy(fifo) }
        commitTimer = nil
        fifo = nil
        wl_proxy_wrapper_destroy(UnsafeMutableRawPointer(frameProxy))
        connection.flush()
    }

    /// The program's window was suspended (xdg_toplevel `suspended`, or the toolkit's occluded
    /// state) or resumed.
    func setSuspended(_ suspended: Bool) {
        guard suspended != isSuspended, !isDestroyed else { return }
        isSuspended = suspended
        for entry in suspendedHandlers.entries { entry.handler(suspended) }
    }

    func addSuspendedHandler(_ handler: @escaping (Bool) -> Void) -> Int { suspendedHandlers.add(handler) }
    func removeSuspendedHandler(_ id: Int) { suspendedHandlers.remove(id) }
    func addOutputsChangedHandler(_ handler: @escaping () -> Void) -> Int { outputHandlers.add(handler) }
    func removeOutputsChangedHandler(_ id: Int) { outputHandlers.remove(id) }

    func feedbackNamed(_ output: WaylandOutput) {
        if !named.contains(where: { $0 === output }) { named.append(output) }
    }

    /// The outputs of the frame just presented are the surface's from now on, when they differ.
    func feedbackPresented() {
        defer { named.removeAll(keepingCapacity: true) }
        guard !named.isEmpty, named.count != outputs.count || !named.allSatisfy({ n in outputs.contains { $0 === n } }) else { return }
        outputs = named
        for output in outputs where !modeHandlerIDs.contains(where: { $0.output === output }) {
            let id = output.addModeChangeHandler { [weak self, weak output] in
                guard let self, let output, self.outputs.contains(where: { $0 === output }) else { return }
                self.notifyOutputsChanged()
            }
            modeHandlerIDs.append((output, id))
        }
        notifyOutputsChanged()
    }

    private func notifyOutputsChanged() {
        for entry in outputHandlers.entries { entry.handler() }
    }
}
