/// Something that knows when the display refreshes: a Wayland surface, a DRM CRTC, the mock.
///
/// A source owns one ``RefreshDispatcher``. It asks the display for refreshes only while
/// ``RefreshDispatcher/wantsRefreshes`` is true (it is told through
/// ``RefreshDispatcher/onDemandChange``), and reports each refresh with
/// ``RefreshDispatcher/dispatch(_:)`` on the main actor. A source must keep ticking when no link
/// target drew anything in a callback (an empty commit on Wayland, a vblank event on DRM).
@MainActor
public protocol FrameSource: AnyObject {
    var dispatcher: RefreshDispatcher { get }
}
