/// A `wl_surface` a ``WaylandFrameSource`` paces: the library's own window (``WaylandWindow``),
/// or a surface the program owns (``ForeignSurface``). The source asks of it only this.
@MainActor
protocol PacedSurface: AnyObject {
    var connection: WaylandConnection { get }
    /// The surface proxy that frame callbacks are requested on: the surface itself, or a wrapper
    /// of the program's surface on the connection's own event queue (the callback proxy takes
    /// the queue of the proxy it is made from).
    var frameProxy: OpaquePointer { get }
    /// The surface's `wp_commit_timer_v1` and `wp_fifo_v1`, when the source may use them.
    var commitTimer: OpaquePointer? { get }
    var fifo: OpaquePointer? { get }
    /// The outputs the surface is on.
    var outputs: [WaylandOutput] { get }
    var isSuspended: Bool { get }
    /// Whether the surface is gone (nothing may be requested on it).
    var isDestroyed: Bool { get }
    /// Whether the source commits the surface itself: an empty commit when no link drew, a
    /// commit that releases a held timed one. Never on the program's surface: there the program
    /// commits, and the source's requests go out with the commit it announces.
    var commitsItself: Bool { get }
    func addSuspendedHandler(_ handler: @escaping (Bool) -> Void) -> Int
    func removeSuspendedHandler(_ id: Int)
    func addOutputsChangedHandler(_ handler: @escaping () -> Void) -> Int
    func removeOutputsChangedHandler(_ id: Int)
    /// A presentation feedback named `output` (`wp_presentation_feedback.sync_output`, one of
    /// the connection's outputs) as one its frame is shown on, and then reported the frame
    /// presented: how the program's surface learns where it is shown.
    func feedbackNamed(_ output: WaylandOutput)
    func feedbackPresented()
}

extension WaylandWindow: PacedSurface {
    var frameProxy: OpaquePointer { surface }
    var commitsItself: Bool { !committedByProgram }
    // The window follows its outputs by `wl_surface.enter` and `leave`.
    func feedbackNamed(_ output: WaylandOutput) {}
    func feedbackPresented() {}
}
