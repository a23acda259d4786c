import DisplayLinkCore
import EGLGraphics
import GLESRenderer

/// The smallest client: one coloured square moving by deltaTime, drawn with scissored clears.
/// The pacing benchmark's client before richer scenes existed; kept as the minimal reference.
@MainActor
final class QuadScene: DemoScene {
    let name = "quad"
    var sizeField: (name: String, value: Int) { ("views", 1) }
    var scrollSample: ScrollSample? { nil }
    private var x = 0.0
    private var velocity = 120.0
    private var painter = ScissorPainter()
    private var lastX: Int32 = 0

    func update(_ frame: DisplayFrame) {
        x += velocity * frame.deltaTime
    }

    func draw(width: Int32, height: Int32, hud: HUDText) -> PixelRect? {
        let side = max(8, min(width, height) / 5)
        let span = Double(max(1, width - side))
        let phase = x.truncatingRemainder(dividingBy: 2 * span)
        let left = Int32(phase < span ? phase : 2 * span - phase)
        painter.begin(width: width, height: height, background: RGBA(0.08, 0.09, 0.12))
        painter.fill(x: left, y: (height - side) / 2, width: side, height: side, color: RGBA(0.95, 0.45, 0.2))
        // Damage: the old and new square positions.
        let minX = min(left, lastX), maxX = max(left, lastX) + side
        lastX = left
        return PixelRect(x: minX, y: (height - side) / 2, width: maxX - minX, height: side)
    }

    func handle(_ key: DemoKey) {}
}
