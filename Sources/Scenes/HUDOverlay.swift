import DisplayLinkCore
import GLESRenderer

/// The HUD's values, kept up to date by whoever runs the link.
public struct HUDValues: Sendable {
    public var fps: Double = 0
    public var deltaMilliseconds: Double = 0
    public var missed = 0
    public var provenance: TimestampProvenance = .frameCallbackEstimate
    public var paused = false
    public init() {}

    private var windowStart = MonotonicInstant.zero
    private var windowFrames = 0
    private var started = false

    /// Folds one frame in: fps over half-second windows, last delta, total misses, provenance.
    public mutating func record(_ frame: DisplayFrame) {
        if !started { started = true; windowStart = frame.timestamp }
        windowFrames += 1
        let span = (frame.timestamp - windowStart).seconds
        if span >= 0.5 {
            fps = Double(windowFrames) / span
            windowStart = frame.timestamp
            windowFrames = 0
        }
        deltaMilliseconds = frame.deltaTime * 1000
        missed += frame.missedFrames
        provenance = frame.provenance
    }
}

/// A small panel in the top-left corner: fps, frame delta, missed frames, provenance.
@MainActor
public final class HUDOverlay {
    private let renderer: Renderer
    private let layer: Renderer.LayerID
    private var line = TextBuffer(capacity: 64)

    public init(renderer: Renderer) {
        self.renderer = renderer
        layer = renderer.makeLayer(reserving: 128)
    }

    public func draw(_ values: HUDValues) {
        let face = 0
        let lineHeight = Float(renderer.atlas.faces[face].lineHeight) + 2
        let ascender = Float(renderer.atlas.faces[face].ascender)
        renderer.addRect(layer, Rect(x: 8, y: 8, width: 196, height: lineHeight * 4 + 12),
                         color: RGBA(0, 0, 0, 0.6), cornerRadius: 6)
        let x: Float = 16
        var baseline: Float = 14 + ascender
        let color = RGBA(1, 1, 1, 1)

        line.clear(); line.append("fps "); line.append(values.fps, decimals: 1)
        if values.paused { line.append("  (paused)") }
        renderer.addText(layer, line.bytes, x: x, baseline: baseline, face: face, color: color)
        baseline += lineHeight
        line.clear(); line.append("delta "); line.append(values.deltaMilliseconds, decimals: 2); line.append(" ms")
        renderer.addText(layer, line.bytes, x: x, baseline: baseline, face: face, color: color)
        baseline += lineHeight
        line.clear(); line.append("missed "); line.append(values.missed)
        renderer.addText(layer, line.bytes, x: x, baseline: baseline, face: face, color: color)
        baseline += lineHeight
        line.clear()
        switch values.provenance {
        case .hardwareVBlank: line.append("hardware vblank")
        case .presentationFeedback: line.append("presentation feedback")
        case .frameCallbackEstimate: line.append("frame-callback estimate")
        case .timerFallback: line.append("timer fallback")
        }
        renderer.addText(layer, line.bytes, x: x, baseline: baseline, face: face, color: RGBA(0.7, 0.9, 1, 1))
    }
}
