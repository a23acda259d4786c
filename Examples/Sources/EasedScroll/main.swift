// EasedScroll: a list of 1000 rows scrolled to its end over a chosen duration. Each frame takes
// the fraction of the duration at the link's targetTimestamp (when this frame will be seen), eases
// it with smoothstep t²(3 − 2t), and draws every row visible at that offset, as in the seed
// "Scrolling a collection view with custom duration using CADisplayLink": the rows in between are
// drawn too, not only the first and last screenful.
//
//   EasedScroll [--frames N] [--duration SECONDS]
import Dispatch
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc
import Motion

@MainActor
final class App: ListDataSource {
    let surface: DisplaySurface
    let renderer: Renderer
    let rowsLayer: Renderer.LayerID
    let layout: ListLayout
    var scroll = EasedScroll()
    var link: DisplayLink?
    let frameLimit: Int
    var offset = 0.0, previousFraction = -1.0
    var frames = 0, endedAt: Int?, wentBack = 0, mismatches = 0
    var firstRows = 0..<0, lastRows = 0..<0, drawn = [Bool](repeating: false, count: 1000)

    init(frames: Int, duration: Double) throws {
        frameLimit = frames
        surface = try DisplaySurface(options: .init(title: "EasedScroll", width: 480, height: 480))
        layout = ListLayout(rowCount: 1000, rowHeight: 24, viewportHeight: Double(surface.height))
        try surface.beginFrame()
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14]), glesMajorVersion: surface.glesMajorVersion)
        rowsLayer = renderer.makeLayer(reserving: 128)
        try surface.prepare { draw(at: 0, marking: false) }  // a warm-up frame, never shown
        surface.onError = { error in
            print("EasedScroll: \(error)"); exit(1)
        }
        scroll.scroll(to: layout.maxOffset, duration: duration, curve: .easeInOut)
        link = DisplayLink(source: surface, target: self) { app, link in app.update(link.frame) }
    }

    /// The data source: called for each visible row (the seed's cellForItemAt).
    var marking = true
    func prepareRow(_ row: Int) {
        if marking { drawn[row] = true }
        let top = Float(layout.rowTop(row, at: offset))
        // A 320-point column, rows as text and a separator: little to fill (llvmpipe pays per pixel).
        renderer.addRect(rowsLayer, Rect(x: 8, y: top + 23, width: 304, height: 1), color: RGBA(0.3, 0.3, 0.35))
        renderer.addText(rowsLayer, "Row \(row)", x: 12, baseline: top + 17, face: 0, color: RGBA(0.9, 0.9, 0.9))
    }

    @discardableResult
    func draw(at offset: Double, marking: Bool = true) -> Range<Int> {
        (self.offset, self.marking) = (offset, marking)
        renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.1, 0.1, 0.12))
        let rows = layout.prepareVisibleRows(at: offset, dataSource: self)
        renderer.endFrame()
        return rows
    }

    func update(_ frame: DisplayFrame) {
        let wasAnimating = scroll.isAnimating, previous = offset
        let newOffset = scroll.update(frame)
        // The seed's rule, by hand: smoothstep of the fraction at targetTimestamp; a fraction past 1
        // ends the scroll at the end offset. A target earlier than the last one (the link's targets
        // go back only after a stall) holds the offset, or ends the scroll when it is back by half
        // a period or more (a clock step), as Motion's EasedScroll documents.
        if wasAnimating, let start = scroll.startTime {
            let t = (frame.targetTimestamp - start).seconds / scroll.duration
            let stepBack = t < previousFraction - frame.duration.seconds / 2 / scroll.duration
            if t < previousFraction { wentBack += 1 }
            let expected =
                t >= 1 || stepBack
                ? layout.maxOffset : t < previousFraction ? previous : layout.maxOffset * t * t * (3 - 2 * t)
            if abs(newOffset - expected) > 1e-6 || newOffset < previous { mismatches += 1 }
            previousFraction = max(t, previousFraction)
            if !scroll.isAnimating { endedAt = frames + 1 }
        }
        do {
            try surface.beginFrame()
            let rows = draw(at: newOffset)
            try surface.present()
            if frames == 0 { firstRows = rows }
            lastRows = rows
        } catch {
            print("EasedScroll: \(error)")
            exit(1)
        }
        frames += 1
        if frames == frameLimit { finish(frame) }
    }

    func finish(_ last: DisplayFrame) {
        link?.invalidate()
        surface.close()
        let count = drawn.filter { $0 }.count
        let reached = endedAt.map { "end reached at frame \($0)" } ?? "still scrolling"
        let back = wentBack > 0 ? " (targetTimestamp went back \(wentBack)×)" : ""
        // Checks: every frame's offset is the smoothstep of its targetTimestamp and never goes
        // back; the first frame draws row 0, and once the end is reached row 999 was drawn.
        let ok = mismatches == 0 && firstRows.first == 0 && (endedAt == nil || drawn[999])
        print(
            "EasedScroll: \(frames) frames on \(surface.backend) (\(last.provenance.rawValue)), \(reached)\(back); rows drawn "
                + "\(firstRows.lowerBound)–\(lastRows.upperBound - 1): \(count) of 1000"
                + (count == lastRows.upperBound ? " (every row passed)" : " (\(lastRows.upperBound - count) passed between frames)")
                + "; check "
                + (ok
                    ? "ok (smoothstep offsets, row 0 drawn" + (endedAt == nil ? ")" : ", row 999 drawn)")
                    : "FAILED (\(mismatches) offsets off)"))
        exit(ok ? 0 : 1)
    }
}

func option(_ name: String, default value: Double) -> Double {
    guard let i = CommandLine.arguments.firstIndex(of: name), i + 1 < CommandLine.arguments.count else { return value }
    return Double(CommandLine.arguments[i + 1]) ?? value
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(frames: max(1, Int(option("--frames", default: 150))), duration: option("--duration", default: 1.5))
    withExtendedLifetime(app) { dispatchMain() }
} catch {
    print("EasedScroll: \(error)")
    exit(1)
}
