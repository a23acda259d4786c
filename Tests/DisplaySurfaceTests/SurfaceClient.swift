import DisplayLinkCore
import DisplayLinkWaylandTesting
import DisplaySurface
import GLESRenderer

/// The client of these tests: a link on a surface that draws, at the surface's current size, a
/// red 10×10 square top-left on blue each frame, and records the frames, the presentations, the
/// resizes, frame 3 read back, and, when `readsEveryFrame`, every frame read back (before it is
/// presented).
@MainActor
final class SurfaceClient {
    /// A frame as read back.
    struct Drawn {
        var width: Int32
        var height: Int32
        var bytes: Int
        var topLeft: [UInt8]
        var bottomRight: [UInt8]
    }

    let surface: DisplaySurface
    let readsEveryFrame: Bool
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var presented = 0
    /// Every presentation report, in order.
    var feedback: [PresentationFeedback] = []
    var drawn: [Drawn] = []
    var resizes: [(width: Int32, height: Int32)] = []
    var failure: DisplaySurfaceError?
    var painter = ScissorPainter()
    /// Frame 3's pixels.
    var pixels: [UInt8]?

    init(_ surface: DisplaySurface, readsEveryFrame: Bool = false) {
        self.surface = surface
        self.readsEveryFrame = readsEveryFrame
        surface.onResize = { [weak self] width, height in self?.resizes.append((width, height)) }
    }

    func start() {
        let link = DisplayLink(source: surface, target: self) { client, link in client.tick(link) }
        link.presentationHandler = { [weak self] feedback in
            if case .presented = feedback.outcome { self?.presented += 1 }
            self?.feedback.append(feedback)
        }
        self.link = link
    }

    func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        do {
            try surface.beginFrame()
            let width = surface.width, height = surface.height
            painter.begin(width: width, height: height, background: RGBA(0, 0, 1))
            painter.fill(x: 0, y: 0, width: 10, height: 10, color: RGBA(1, 0, 0))
            if frames.count == 3 || readsEveryFrame {
                let pixels = try surface.readPixels()
                if frames.count == 3 { self.pixels = pixels }
                if readsEveryFrame {
                    let last = max(0, (Int(width) * Int(height) - 1) * 4)
                    drawn.append(
                        Drawn(
                            width: width, height: height, bytes: pixels.count, topLeft: Array(pixels.prefix(4)),
                            bottomRight: pixels.count >= last + 4 ? Array(pixels[last..<last + 4]) : []))
                }
            }
            try surface.present()
        } catch { failure = error }
    }

    /// Waits (a hang guard only) for `count` more frames read back from now, or a failure.
    func waitForFrames(_ count: Int) async -> ArraySlice<Drawn> {
        let start = drawn.count
        _ = await eventually { drawn.count >= start + count || failure != nil }
        return drawn[start...]
    }
}
