// TouchKiosk: a list of 200 rows under a text field. Drag the list with a pointer (press, move,
// release) or a finger; let go while moving and it coasts on, slowing down with a time constant,
// and stops at either end. Keys type into the field: their UTF-8 text is appended, Backspace
// deletes, Escape quits. Everything is in points, drawn at the surface's scale.
//
// The drag follows the input events, each stamped on the link's clock: the list moves by exactly
// as far as the pointer did, and a fling's speed is that of the drag's last 100 ms by the events'
// times (not by when they happened to arrive). The coasting is a function of the frame's
// targetTimestamp, so it looks the same at any frame rate. While nothing moves the link is paused.
//
//   TouchKiosk [--report]                         until Escape; --report prints what it did
//   TouchKiosk --frames N [--fling V]             a self-check: flung at V points/s, ends at rest or after N frames
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc
import Motion

/// The list's scroll offset: it follows a drag exactly, and coasts after a fling until it rests.
struct Scroller {
    /// A fling's speed falls to 1/e in this many seconds (it travels speed × this in all).
    static let timeConstant = 0.325
    /// The drag's motion over this last stretch of time gives a fling's speed.
    static let velocityWindow = Nanoseconds(100_000_000)
    static let maxSpeed = 8000.0  // points per second

    var offset = 0.0
    var maxOffset = 0.0 {
        didSet { offset = clamped(offset) }
    }
    private var drag: (startY: Double, startOffset: Double, samples: [(time: MonotonicInstant, y: Double)])?
    private var fling: (from: Double, to: Double, start: MonotonicInstant)?

    /// Whether a fling is under way (a drag moves the list only when its input does).
    var isCoasting: Bool { fling != nil }

    /// A press or touch at `y`: the list holds still under it (a fling stops where it is).
    mutating func press(y: Double, at time: MonotonicInstant) {
        fling = nil
        drag = (y, offset, [(time, y)])
    }

    mutating func move(y: Double, at time: MonotonicInstant) {
        guard let start = drag else { return }
        drag?.samples.append((time, y))
        offset = clamped(start.startOffset + start.startY - y)
    }

    /// Ends the drag: coasts on at the drag's speed (points per second, positive down the list), returned.
    mutating func release(at time: MonotonicInstant) -> Double {
        guard let samples = drag?.samples else { return 0 }
        drag = nil
        let speed = Scroller.speed(of: samples, releasedAt: time)
        fling(speed, at: time)
        return speed
    }

    /// Ends the drag where it is, without a fling (the touch was taken over).
    mutating func cancel() { drag = nil }

    /// Coasts from the current offset at `speed`, from `time` on, towards where that speed leads (or the end).
    mutating func fling(_ speed: Double, at time: MonotonicInstant) {
        fling = speed == 0 ? nil : (offset, clamped(offset + speed * Scroller.timeConstant), time)
    }

    /// The drag's speed over its last `velocityWindow` of motion, by the events' times; 0 when it
    /// was held still that long before the release.
    static func speed(of samples: [(time: MonotonicInstant, y: Double)], releasedAt time: MonotonicInstant) -> Double {
        guard let last = samples.last, time - last.time < velocityWindow else { return 0 }
        let first = samples.last { last.time - $0.time >= velocityWindow } ?? samples[0]
        let seconds = (last.time - first.time).seconds
        return seconds > 0 ? min(max((first.y - last.y) / seconds, -maxSpeed), maxSpeed) : 0
    }

    /// The offset at `time` (the frame's targetTimestamp): exponentially closer to the fling's end.
    mutating func update(at time: MonotonicInstant) {
        guard let fling else { return }
        let t = max(0, (time - fling.start).seconds)
        offset = fling.to - (fling.to - fling.from) * exp(-t / Scroller.timeConstant)
        if abs(fling.to - offset) < 0.5 {  // at rest
            offset = fling.to
            self.fling = nil
        }
    }

    func clamped(_ value: Double) -> Double { min(max(value, 0), maxOffset) }
}

@MainActor
final class App: ListDataSource {
    static let rows = 200, rowHeight = 40.0, fieldHeight = 56.0

    let surface: DisplaySurface
    let renderer: Renderer
    let listLayer: Renderer.LayerID, fieldLayer: Renderer.LayerID
    var link: DisplayLink?
    var scroller = Scroller()
    var field = ""
    /// What drags the list: the pointer, or the finger that touched it first.
    enum Dragger: Equatable { case pointer, touch(Int32) }
    var dragger: Dragger?
    var pointer = SurfacePoint(x: 0, y: 0)
    var frames = 0
    let options: (report: Bool, frameLimit: Int?, fling: Double)
    var check = (offsets: [Double](), wentBack: false)

    var layout: ListLayout {
        ListLayout(rowCount: App.rows, rowHeight: App.rowHeight, viewportHeight: surface.pointSize.height - App.fieldHeight)
    }

    init(options: (report: Bool, frameLimit: Int?, fling: Double)) throws {
        self.options = options
        surface = try DisplaySurface(options: .init(title: "TouchKiosk", width: 480, height: 640))
        try surface.beginFrame()
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [16, 20]), glesMajorVersion: surface.glesMajorVersion)
        try renderer.setScale(surface.scale)  // draw in points at the display's pixels per point
        listLayer = renderer.makeLayer(reserving: 64)
        fieldLayer = renderer.makeLayer(reserving: 64)
        try surface.prepare { draw() }  // a warm-up frame, never shown
        surface.onScaleChange = { [unowned self] scale in
            do { try renderer.setScale(scale) } catch { fail(error) }
            link?.isPaused = false
        }
        surface.onInput = { [unowned self] event in handle(event) }
        surface.onError = { error in fail(error) }
        link = DisplayLink(source: surface, target: self) { app, link in app.update(link.frame) }
    }

    // MARK: Input

    func handle(_ event: InputEvent) {
        let time = event.time.time
        switch event.kind {
        case .pointer(.entered(let point)), .pointer(.moved(let point)):
            pointer = point
            if dragger == .pointer { drag(to: point.y, at: time) }
        case .pointer(.button(.left, isPressed: true)) where dragger == nil && pointer.y >= App.fieldHeight:
            startDrag(.pointer, y: pointer.y, at: time)
        case .pointer(.button(.left, isPressed: false)) where dragger == .pointer, .pointer(.left) where dragger == .pointer:
            endDrag(at: time)
        case .touch(.down(let id, let point)) where dragger == nil && point.y >= App.fieldHeight:
            startDrag(.touch(id), y: point.y, at: time)
        case .touch(.moved(let id, let point)) where dragger == .touch(id):
            drag(to: point.y, at: time)
        case .touch(.up(let id)) where dragger == .touch(id):
            endDrag(at: time)
        case .touch(.cancelled) where dragger != nil:
            dragger = nil
            scroller.cancel()
        case .key(let key) where key.phase != .released:
            edit(with: key)
        case .keyboardFocus(let focused):
            report("focus \(focused)")
        default:
            return
        }
        link?.isPaused = false  // draw what changed
    }

    func startDrag(_ by: Dragger, y: Double, at time: MonotonicInstant) {
        dragger = by
        scroller.press(y: y, at: time)
        report("press offset=\(scroller.offset)")
    }

    func drag(to y: Double, at time: MonotonicInstant) {
        scroller.move(y: y, at: time)
        report("move offset=\(scroller.offset)")
    }

    func endDrag(at time: MonotonicInstant) {
        dragger = nil
        let speed = scroller.release(at: time)
        report("release offset=\(scroller.offset) velocity=\(speed)")
        if !scroller.isCoasting { report("rest offset=\(scroller.offset)") }
    }

    func edit(with key: KeyboardEvent) {
        switch key.symbol {
        case .escape:
            report("quit")
            link?.invalidate()
            surface.close()
            exit(0)
        case .backspace:
            guard !field.isEmpty else { return }
            field.removeLast()
        default:
            // Printable text only (Control+C's text is a control character).
            guard !key.text.isEmpty, key.text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else { return }
            field += key.text
        }
        report("text \(String(reflecting: field))")
    }

    // MARK: Frames

    func update(_ frame: DisplayFrame) {
        scroller.maxOffset = layout.maxOffset  // (the surface may have been resized)
        if frames == 0 { scroller.fling(options.fling, at: frame.targetTimestamp) }  // --fling: from this first frame on
        let wasMoving = scroller.isCoasting
        scroller.update(at: frame.targetTimestamp)
        do {
            try surface.beginFrame()
            draw()
            try surface.present()
        } catch {
            fail(error)
        }
        frames += 1
        if frames == 1 {
            let size = surface.pointSize
            report("ready width=\(size.width) height=\(size.height) scale=\(surface.scale) maxOffset=\(scroller.maxOffset)")
        }
        if wasMoving && !scroller.isCoasting { report("rest offset=\(scroller.offset)") }
        if let limit = options.frameLimit {
            if check.offsets.last.map({ scroller.offset < $0 }) == true { check.wentBack = true }
            check.offsets.append(scroller.offset)
            if frames == limit || !scroller.isCoasting { finish() }
        } else if !scroller.isCoasting {
            link?.isPaused = true  // nothing moves: no frames until the next input
        }
    }

    func draw() {
        let (width, background) = (Float(surface.pointSize.width), RGBA(0.1, 0.1, 0.12))
        renderer.beginFrame(width: surface.width, height: surface.height, clearColor: background)
        layout.prepareVisibleRows(at: scroller.offset, dataSource: self)
        // The field on top of the rows that scroll under it, its caret after the text.
        renderer.addRect(fieldLayer, Rect(x: 0, y: 0, width: width, height: Float(App.fieldHeight)), color: RGBA(0.16, 0.17, 0.2))
        let box = Rect(x: 10, y: 8, width: width - 20, height: Float(App.fieldHeight) - 16)
        renderer.addRect(fieldLayer, box, color: RGBA(0.95, 0.95, 0.97), cornerRadius: 6)
        let textWidth = renderer.addText(fieldLayer, Array(field.utf8), x: 20, baseline: 35, face: 1, color: RGBA(0.1, 0.1, 0.12))
        renderer.addRect(fieldLayer, Rect(x: 21 + textWidth, y: 16, width: 2, height: 24), color: RGBA(0.2, 0.4, 0.9))
        renderer.endFrame()
    }

    /// The data source: called for each visible row.
    func prepareRow(_ row: Int) {
        let top = Float(App.fieldHeight + layout.rowTop(row, at: scroller.offset))
        let width = Float(surface.pointSize.width)
        renderer.addRect(listLayer, Rect(x: 16, y: top + 39, width: width - 32, height: 1), color: RGBA(0.3, 0.3, 0.35))
        renderer.addText(listLayer, Array("Item \(row + 1)".utf8), x: 20, baseline: top + 26, face: 0, color: RGBA(0.9, 0.9, 0.9))
    }

    /// One line of what the program did, for a test to read (with --report only).
    func report(_ line: String) {
        guard options.report else { return }
        print("TouchKiosk: \(line)")
        fflush(nil)  // at once, also into a file or pipe
    }

    func finish() {
        link?.invalidate()
        surface.close()
        // Checks: the fling never went back or past the end, and once at rest it is where its
        // speed led (speed × time constant, or the end).
        let expectedRest = min(options.fling * Scroller.timeConstant, scroller.maxOffset)
        let rested = !scroller.isCoasting
        let ok = !check.wentBack && check.offsets.allSatisfy { $0 <= scroller.maxOffset } && (!rested || scroller.offset == expectedRest)
        print(
            "TouchKiosk: \(frames) frames on \(surface.backend), flung at \(options.fling) points/s, "
                + (rested ? "at rest at \(scroller.offset)" : "still coasting at \(scroller.offset)") + "; check "
                + (ok ? "ok (never back, never past the end" + (rested ? ", rests at speed × time constant)" : ")") : "FAILED"))
        exit(ok ? 0 : 1)
    }
}

func fail(_ error: any Error) -> Never {
    print("TouchKiosk: \(error)")
    exit(1)
}

func option(_ name: String) -> Double? {
    guard let i = CommandLine.arguments.firstIndex(of: name), i + 1 < CommandLine.arguments.count else { return nil }
    return Double(CommandLine.arguments[i + 1])
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(
        options: (
            report: CommandLine.arguments.contains("--report"), frameLimit: option("--frames").map { max(1, Int($0)) },
            fling: option("--fling") ?? 0
        ))
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    fail(error)
}
