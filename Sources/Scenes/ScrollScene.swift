import DisplayLinkCore
import GLESRenderer
import Motion

/// The seed's eased scroll: a long list scrolled to a target over a duration with an easing
/// curve, where every row that passes through the viewport is really drawn (asked of the data
/// source in the frame that shows it).
///
/// As toolkits scroll: the list is drawn at whole-pixel offsets (the eased offset rounded down;
/// ``pixelSnapping``), and with a `ScrollCache` (GLES 3; ``cachesRows``) each row is rasterised
/// when it scrolls into view or changes, and the cached list is copied onto the screen each frame
/// under the scroll bar and the HUD. The rows asked of the data source each frame are still every
/// row visible at the eased offset or at the drawn one.
@MainActor
public final class ScrollScene: Scene, ListDataSource {
    public let name = "scroll"
    public var sizeField: (name: String, value: Int) { ("rows", layout.rowCount) }
    public let background = RGBA(0.93, 0.94, 0.96)
    public static let rowHeight: Double = 44
    public static let margin: Float = 16

    public private(set) var layout: ListLayout
    public private(set) var scroll = EasedScroll()
    public var duration: Double
    public var curve: EasingCurve
    /// Seconds after the first frame before the first scroll starts.
    public var delay: Double
    /// Rows the data source was asked for in the last frame.
    public private(set) var preparedRows: Range<Int> = 0..<0
    public private(set) var scrollSample: ScrollSample?

    /// Whether the list is drawn at whole-pixel offsets (on by default; required by the cache).
    public let pixelSnapping: Bool
    /// Whether rows are drawn through a `ScrollCache` (false on GLES 2, or when not asked for).
    public var cachesRows: Bool { rowCache != nil }
    /// The offset the list was drawn at in the last frame (the eased offset, snapped).
    public private(set) var pixelOffset = 0.0

    private let renderer: Renderer
    private let listLayer: Renderer.LayerID
    private let barLayer: Renderer.LayerID
    /// The row cache (nil: rows are drawn into a renderer layer every frame).
    public let rowCache: ScrollCache?
    private var viewport: Rect
    private var label = TextBuffer(capacity: 32)
    private var drawOffset = 0.0
    private var firstFrameTime: MonotonicInstant?
    private var autoScrollPending = true

    /// - Parameters:
    ///   - renderer: the renderer the list and its scroll bar are drawn with, in layers of their own.
    ///   - rows: the number of rows in the list.
    ///   - width: the surface's width in pixels; the list fills it less a margin on each side.
    ///   - height: the surface's height in pixels.
    ///   - duration: seconds each scroll takes, from one end of the list to the other.
    ///   - curve: the easing curve of each scroll.
    ///   - delay: seconds after the first frame before the first scroll starts.
    ///   - cachesRows: draw rows through a `ScrollCache` where the context allows (GLES 3);
    ///     needs `pixelSnapping`.
    ///   - pixelSnapping: draw the list at whole-pixel offsets.
    public init(
        renderer: Renderer, rows: Int, width: Int32, height: Int32, duration: Double,
        curve: EasingCurve, delay: Double = 0, cachesRows: Bool = true, pixelSnapping: Bool = true
    ) {
        self.renderer = renderer
        self.pixelSnapping = pixelSnapping
        self.duration = duration
        self.curve = curve
        self.delay = delay
        viewport = ScrollScene.viewport(width: width, height: height)
        layout = ListLayout(rowCount: rows, rowHeight: ScrollScene.rowHeight, viewportHeight: Double(viewport.height))
        listLayer = renderer.makeLayer(reserving: 64)
        renderer.setClip(listLayer, viewport)
        barLayer = renderer.makeLayer(reserving: 1)
        renderer.setClip(barLayer, viewport)
        rowCache = cachesRows && pixelSnapping ? ScrollCache(renderer: renderer, clip: viewport) : nil
    }

    static func viewport(width: Int32, height: Int32) -> Rect {
        Rect(x: margin, y: margin, width: Float(width) - 2 * margin, height: max(0, Float(height) - 2 * margin))
    }

    public func resize(width: Int32, height: Int32) {
        viewport = ScrollScene.viewport(width: width, height: height)
        layout.viewportHeight = Double(viewport.height)
        renderer.setClip(listLayer, viewport)
        renderer.setClip(barLayer, viewport)
        rowCache?.setClip(viewport)
    }

    /// Jumps to an offset (tests, and the start of a run).
    public func setOffset(_ offset: Double) {
        scroll.set(offset: offset)
        drawOffset = offset
        autoScrollPending = false
    }

    public func toggleScroll() {
        let end = scroll.target >= layout.maxOffset / 2 ? 0 : layout.maxOffset
        scroll.scroll(to: end, duration: duration, curve: curve)
        autoScrollPending = false
    }

    public func update(_ frame: DisplayFrame) {
        if firstFrameTime == nil { firstFrameTime = frame.timestamp }
        if autoScrollPending, let first = firstFrameTime, (frame.timestamp - first).seconds >= delay {
            autoScrollPending = false
            scroll.scroll(to: layout.maxOffset, duration: duration, curve: curve)
        }
        drawOffset = scroll.update(frame)
    }

    public func draw() {
        pixelOffset = pixelSnapping ? drawOffset.rounded(.down) : drawOffset
        rowCache?.begin(offset: Int(max(-1e15, min(1e15, pixelOffset.isFinite ? pixelOffset : 0))), clearColor: background)
        // Rows visible at the drawn offset or the eased one (a row showing by under a pixel at
        // the eased offset is asked for too, and clipped).
        preparedRows = layout.rows(from: pixelOffset, to: drawOffset + layout.viewportHeight)
        for row in preparedRows { prepareRow(row) }
        scrollSample = ScrollSample(
            offset: drawOffset, fraction: scroll.fraction,
            firstRow: preparedRows.lowerBound,
            lastRow: preparedRows.isEmpty ? preparedRows.lowerBound - 1 : preparedRows.upperBound - 1)
        // A scroll bar: where the viewport is in the list.
        let content = max(layout.contentHeight, 1)
        let barHeight = max(24, viewport.height * Float(layout.viewportHeight / content))
        let travel = viewport.height - barHeight
        let position = layout.maxOffset > 0 ? Float(pixelOffset / layout.maxOffset) : 0
        renderer.addRect(
            barLayer, Rect(x: viewport.x + viewport.width - 6, y: viewport.y + travel * position, width: 4, height: barHeight),
            color: RGBA(0, 0, 0, 0.35), cornerRadius: 2)
    }

    /// Where row `row`'s label baseline starts at `offset` (for tests).
    public func labelOrigin(row: Int, offset: Double) -> (x: Float, baseline: Float) {
        let top = viewport.y + Float(layout.rowTop(row, at: offset))
        return (viewport.x + 16, top + 28)
    }

    /// The card colour of a row.
    public static func cardColor(row: Int) -> RGBA {
        row % 2 == 0 ? RGBA(1, 1, 1, 1) : RGBA(0.97, 0.98, 1, 1)
    }

    public static let labelColor = RGBA(0.12, 0.13, 0.16, 1)

    // MARK: ListDataSource

    public func prepareRow(_ row: Int) {
        let top = viewport.y + Float(layout.rowTop(row, at: pixelOffset))
        let card = Rect(x: viewport.x, y: top + 2, width: viewport.width - 12, height: Float(ScrollScene.rowHeight) - 4)
        let accent = Rect(x: viewport.x + viewport.width - 40, y: top + 14, width: 16, height: 16)
        let accentColor = Palette.colors[row % Palette.colors.count]
        label.clear()
        label.append("Row ")
        label.append(row)
        let origin = labelOrigin(row: row, offset: pixelOffset)
        if let rowCache {
            rowCache.addRect(card, color: ScrollScene.cardColor(row: row), cornerRadius: 8)
            rowCache.addRect(accent, color: accentColor, cornerRadius: 8)
            rowCache.addText(label.bytes, x: origin.x, baseline: origin.baseline, face: 1, color: ScrollScene.labelColor)
        } else {
            renderer.addRect(listLayer, card, color: ScrollScene.cardColor(row: row), cornerRadius: 8)
            renderer.addRect(listLayer, accent, color: accentColor, cornerRadius: 8)
            renderer.addText(listLayer, label.bytes, x: origin.x, baseline: origin.baseline, face: 1, color: ScrollScene.labelColor)
        }
    }
}
