import FrameSchedulers
internal import CWayland
internal import CWaylandClient

/// The window's scale: what the compositor says (`wp_fractional_scale_v1`,
/// `wl_surface.preferred_buffer_scale` where the libwayland loaded knows it, the outputs'
/// `wl_output.scale`) decided by `SurfaceScale.wayland(fractional120:hasViewporter:preferredBufferScale:outputScales:)`,
/// and how the next commit shows a buffer of ``WaylandWindow/pixelWidth``×``WaylandWindow/pixelHeight``
/// pixels at the window's size in points (buffer scale, or a viewport's destination).
extension WaylandWindow {
    /// The buffer's width in pixels: the width in points at ``scale``.
    public var pixelWidth: Int32 { scale.pixelSize(points: width, height).width }
    /// The buffer's height in pixels.
    public var pixelHeight: Int32 { scale.pixelSize(points: width, height).height }

    /// Asks for the surface's fractional scale when the compositor offers it and a viewporter to
    /// show it (at creation, before the first commit).
    func followFractionalScale(_ me: UnsafeMutableRawPointer) {
        guard let manager = connection.fractionalScaleManager, let viewporter = connection.viewporter else { return }
        viewport = wp_viewporter_get_viewport(viewporter, surface)
        fractionalScale = wp_fractional_scale_manager_v1_get_fractional_scale(manager, surface)
        wp_fractional_scale_v1_add_listener(fractionalScale, WaylandWindow.fractionalScaleListener, me)
    }

    /// Follows the scale of an output the surface entered (registered once per output).
    func followOutputScale(_ output: WaylandOutput) {
        let id = output.addScaleChangeHandler { [weak self, weak output] in
            guard let self, let output, self.outputs.contains(where: { $0 === output }) else { return }
            self.updateScale()
        }
        outputScaleHandlerIDs.append((output, id))
    }

    func destroyScaleObjects() {
        if let fractionalScale { wp_fractional_scale_v1_destroy(fractionalScale) }
        if let viewport { wp_viewport_destroy(viewport) }
        fractionalScale = nil
        viewport = nil
        for (output, id) in outputScaleHandlerIDs { output.removeScaleChangeHandler(id) }
        outputScaleHandlerIDs.removeAll()
        if let scaleDispatchHandlerID { connection.removeAfterDispatchHandler(scaleDispatchHandlerID) }
        scaleDispatchHandlerID = nil
    }

    /// Notes that what the scale rests on changed; the scale is decided after the batch of events
    /// (``decideScale()``), so an output's scale and a fractional scale that come together make one change.
    func updateScale() {
        scaleDecisionPending = true
    }

    /// Follows the scale from now on: decides it after every batch of events that changed what
    /// it rests on (and now, for what came while the window was being configured).
    func startDecidingScale() {
        scaleDispatchHandlerID = connection.addAfterDispatchHandler { [weak self] in self?.decideScale() }
        decideScale()
    }

    /// Decides the scale from what the compositor said last, when that changed; reports a change of
    /// factor or presentation.
    func decideScale() {
        guard scaleDecisionPending, !isDestroyed else { return }
        scaleDecisionPending = false
        let decided = SurfaceScale.wayland(
            fractional120: fractional120, hasViewporter: viewport != nil, preferredBufferScale: preferredBufferScale,
            outputScales: outputs.map(\.scale))
        // A new source of the same scale (the compositor's fractional 120/120 after the outputs'
        // 1) is no change: the buffers stay as they are.
        let changed = decided.factor != scale.factor || decided.presentation != scale.presentation
        scale = decided
        if changed { onScaleChange?(decided) }
    }

    /// Sets what the next commit needs to show a buffer at ``scale``: the buffer scale, or the
    /// viewport's destination (the size in points). Call just before the commit that attaches a
    /// buffer of ``pixelWidth``×``pixelHeight`` (an EGL swap). Sends nothing when nothing changed.
    public func applyScale() {
        guard !isDestroyed else { return }
        let bufferScale: Int32
        switch scale.presentation {
        case .bufferScale(let n): bufferScale = n
        case .viewport: bufferScale = 1
        }
        if bufferScale != appliedBufferScale {
            wl_surface_set_buffer_scale(surface, bufferScale)
            appliedBufferScale = bufferScale
        }
        guard let viewport else { return }
        let destination: (Int32, Int32)? = scale.presentation == .viewport ? (width, height) : nil
        guard destination?.0 != appliedDestination?.0 || destination?.1 != appliedDestination?.1 else { return }
        // -1 × -1 unsets the destination: the buffer's size over its scale, as without a viewport.
        wp_viewport_set_destination(viewport, destination?.0 ?? -1, destination?.1 ?? -1)
        appliedDestination = destination
    }

    private nonisolated static func window(_ data: UnsafeMutableRawPointer?) -> WaylandWindow {
        Unmanaged<WaylandWindow>.fromOpaque(data!).takeUnretainedValue()
    }

    nonisolated(unsafe) static let fractionalScaleListener = WaylandListeners.make(
        wp_fractional_scale_v1_listener(
            preferred_scale: { data, _, scale in
                let window = WaylandWindow.window(data)
                MainActor.assumeIsolated {
                    window.fractional120 = scale
                    window.updateScale()
                }
            }
        ))
}
