import DisplayLinkCore
import GLESRenderer

/// The HUD's values, kept up to date by whoever runs the link. What the panel shows (``shown``)
/// changes at most twice a second, as a person can read it: frame rate and the longest delta over
/// the last half second, total missed refreshes, and the timestamps' provenance.
public struct HUDValues: Sendable {
    /// What the panel shows.
    public struct Shown: Equatable, Sendable {
        public var fps: Double = 0
        /// The longest delta in the last window (the first frame's delta before the first window ends).
        public var maxDeltaMilliseconds: Double = 0
        public var missed = 0
        public var provenance: TimestampProvenance = .frameCallbackEstimate
        public var paused = false
    }

    public private(set) var shown = Shown()
    /// Total missed refreshes so far (up to date every frame).
    public private(set) var missed = 0
    public var paused = false {
        didSet { shown.paused = paused }
    }
    public init() {}

    private var windowStart = MonotonicInstant.zero
    private var windowFrames = 0
    private var windowMaxDelta = 0.0
    private var started = false

    /// Folds one frame in; ``shown`` changes on the first frame, when a half-second window ends,
    /// and when the provenance changes.
    public mutating func record(_ frame: DisplayFrame) {
        let (sum, overflow) = missed.addingReportingOverflow(max(0, frame.missedFrames))
        missed = overflow ? Int.max : sum
        windowMaxDelta = max(windowMaxDelta, frame.deltaTime)
        if !started {
            started = true
            windowStart = frame.timestamp
            shown.maxDeltaMilliseconds = frame.deltaTime * 1000
            shown.provenance = frame.provenance
            return
        }
        windowFrames += 1
        let span = (frame.timestamp - windowStart).seconds
        if span >= 0.5 {
            shown.fps = Double(windowFrames) / span
            shown.maxDeltaMilliseconds = windowMaxDelta * 1000
            shown.missed = missed
            windowStart = frame.timestamp
            windowFrames = 0
            windowMaxDelta = 0
        }
        shown.provenance = frame.provenance
    }
}

/// A small panel in the top-left corner: fps, frame delta, missed frames, provenance.
@MainActor
public final class HUDOverlay {
    private let renderer: Renderer
    private let layer: Renderer.LayerID
    private var line = TextBuffer(capacity: 64)
    private var laidOut: HUDValues.Shown?
    /// The renderer's scale at the last layout (a new scale empties the layer).
    private var laidOutScale: Float = 0

    public init(renderer: Renderer) {
        self.renderer = renderer
        layer = renderer.makeLayer(reserving: 128)
        // Drawn into a texture twice a second and composited from it every frame (one quad
        // instead of a triangle pair per glyph and two blended passes over the text's pixels).
        renderer.setCached(layer, true)
    }

    /// Draws the panel this frame; it is laid out again only when what it shows changed.
    ///
    /// Each line sits on a dark band just as wide as its text, so it reads on light and dark scenes
    /// alike; one panel around all four lines would blend 15,000 pixels every frame, which a
    /// software rasteriser (llvmpipe on a kiosk without a GPU) pays for as much as for the scene.
    public func draw(_ values: HUDValues) {
        let shown = values.shown
        guard shown != laidOut || renderer.scale != laidOutScale else { return }
        laidOut = shown
        laidOutScale = renderer.scale
        renderer.clear(layer)
        let metrics = renderer.metrics(face: HUDOverlay.face)
        let lineHeight = metrics.lineHeight + 1
        var baseline: Float = 8 + metrics.ascender
        let white = RGBA(1, 1, 1, 1)

        line.clear(); line.append("fps "); line.append(shown.fps, decimals: 1)
        if shown.paused { line.append("  (paused)") }
        addLine(baseline: baseline, color: white)
        baseline += lineHeight
        line.clear(); line.append("max delta "); line.append(shown.maxDeltaMilliseconds, decimals: 2); line.append(" ms")
        addLine(baseline: baseline, color: white)
        baseline += lineHeight
        line.clear(); line.append("missed "); line.append(shown.missed)
        addLine(baseline: baseline, color: white)
        baseline += lineHeight
        line.clear()
        switch shown.provenance {
        case .hardwareVBlank: line.append("hardware vblank")
        case .presentationFeedback: line.append("presentation feedback")
        case .frameCallbackEstimate: line.append("frame-callback estimate")
        case .timerFallback: line.append("timer fallback")
        }
        addLine(baseline: baseline, color: RGBA(0.7, 0.9, 1, 1))
    }

    static let face = 0
    static let left: Float = 12
    static let band = RGBA(0, 0, 0, 0.6)

    /// The current line at `baseline`, on a band as wide as the text.
    private func addLine(baseline: Float, color: RGBA) {
        let metrics = renderer.metrics(face: HUDOverlay.face)
        let width = renderer.addText(layer, line.bytes, x: HUDOverlay.left, baseline: baseline, face: HUDOverlay.face, color: color)
        let top = baseline - metrics.ascender - 1
        renderer.addRect(
            layer, Rect(x: HUDOverlay.left - 4, y: top, width: width + 8, height: metrics.lineHeight + 1),
            color: HUDOverlay.band, cornerRadius: 3)
    }
}
