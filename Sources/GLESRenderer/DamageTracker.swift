/// An axis-aligned region in pixels (top-left origin), grown by adding rectangles; empty when
/// nothing was added.
struct Bounds: Equatable {
    var minX = Float.infinity, minY = Float.infinity, maxX = -Float.infinity, maxY = -Float.infinity
    var isEmpty: Bool { minX > maxX || minY > maxY }
    static let everything = Bounds(minX: -.infinity, minY: -.infinity, maxX: .infinity, maxY: .infinity)
    mutating func add(_ x: Float, _ y: Float, _ w: Float, _ h: Float) {
        minX = min(minX, x); minY = min(minY, y); maxX = max(maxX, x + w); maxY = max(maxY, y + h)
    }
    /// The part within `clip` (everything when nil; empty when they do not meet).
    func clipped(to clip: Rect?) -> Bounds {
        guard let clip, !isEmpty else { return self }
        let r = Bounds(
            minX: max(minX, clip.x), minY: max(minY, clip.y),
            maxX: min(maxX, clip.x + clip.width), maxY: min(maxY, clip.y + clip.height))
        return r.isEmpty ? Bounds() : r
    }

    /// The bounding box of this region's corners moved by `transform`.
    func transformed(by transform: Transform2D) -> Bounds {
        guard !isEmpty else { return self }
        var r = Bounds()
        r.addTransformed(minX, minY, transform); r.addTransformed(maxX, minY, transform)
        r.addTransformed(minX, maxY, transform); r.addTransformed(maxX, maxY, transform)
        return r
    }

    private mutating func addTransformed(_ x: Float, _ y: Float, _ t: Transform2D) {
        let p = t.apply(Point(x: x, y: y))
        add(p.x, p.y, 0, 0)
    }

    mutating func add(_ other: Bounds) {
        guard !other.isEmpty else { return }
        minX = min(minX, other.minX); minY = min(minY, other.minY)
        maxX = max(maxX, other.maxX); maxY = max(maxY, other.maxY)
    }

    /// The region rounded out to whole pixels and cut to a `width`×`height` viewport:
    /// (x0, y0, x1, y1); nil when nothing is left.
    func pixelRegion(width: Int32, height: Int32) -> (Int32, Int32, Int32, Int32)? {
        guard !isEmpty else { return nil }
        let x0 = max(0, minX.rounded(.down)), y0 = max(0, minY.rounded(.down))
        let x1 = min(Float(width), maxX.rounded(.up)), y1 = min(Float(height), maxY.rounded(.up))
        guard x0 < x1, y0 < y1 else { return nil }
        return (Int32(x0), Int32(y0), Int32(x1), Int32(y1))
    }
}

/// Which region of a frame needs redrawing: what changed since the previous frame (the damage a
/// compositor is told), and what a buffer of a given age lacks (the changes of every frame
/// since it was drawn). A buffer older than the kept history, or of unknown age, is redrawn whole.
///
/// No GL: the renderer feeds it each frame's changed region and the buffer's age.
struct DamageTracker {
    /// Frames of damage kept for buffer ages.
    static let historyLength = 8

    /// What changed in each of the last frames, newest at `historyEnd - 1` (a ring).
    private var history = [Bounds](repeating: Bounds(), count: DamageTracker.historyLength)
    private var historyEnd = 0
    /// Frames recorded since the history was last invalidated.
    private var historyCount = 0
    /// The previous frame's size and clear colour: a change of either changes every pixel.
    private var previousFrame: (Int32, Int32, RGBA)?

    /// The region a layer's change touches: where its contents are now, within its clip, and
    /// where they were, within the clip they had then (the same unless given).
    static func layerChange(bounds: Bounds, previousBounds: Bounds, clip: Rect?, previousClip: Rect?? = nil) -> Bounds {
        var region = bounds.clipped(to: clip)
        region.add(previousBounds.clipped(to: previousClip ?? clip))
        return region
    }

    /// Whether a frame of this size and clear colour differs from the previous one everywhere.
    func frameChanged(width: Int32, height: Int32, clearColor: RGBA) -> Bool {
        previousFrame.map { $0.0 != width || $0.1 != height || $0.2 != clearColor } ?? true
    }

    /// The damage of a frame whose contents changed within `changed`.
    static func damage(changed: Bounds, frameChanged: Bool, width: Int32, height: Int32) -> Renderer.Damage {
        if frameChanged { return .full }
        guard let (x0, y0, x1, y1) = changed.pixelRegion(width: width, height: height) else { return .none }
        return .region(Rect(x: Float(x0), y: Float(y0), width: Float(x1 - x0), height: Float(y1 - y0)))
    }

    /// Records a frame that changed within `changed` (everything when its size or clear colour is
    /// new, see ``frameChanged(width:height:clearColor:)``) and returns what a buffer of age `age`
    /// needs redrawn for it (1: the buffer holds the previous frame; 0: unknown). `forced`, when
    /// given, is redrawn whatever the age.
    mutating func record(
        changed: Bounds, width: Int32, height: Int32, clearColor: RGBA,
        age: Int, forced: Bounds? = nil
    ) -> Bounds {
        let thisFrame = frameChanged(width: width, height: height, clearColor: clearColor) ? Bounds.everything : changed
        var redraw = thisFrame
        if let forced {
            redraw = forced
        } else if age <= 0 || age > historyCount || age > DamageTracker.historyLength {
            redraw = .everything
        } else {
            for back in 1..<age {
                redraw.add(history[(historyEnd - back + DamageTracker.historyLength) % DamageTracker.historyLength])
            }
        }
        history[historyEnd] = thisFrame
        historyEnd = (historyEnd + 1) % DamageTracker.historyLength
        historyCount += 1
        previousFrame = (width, height, clearColor)
        return redraw
    }

    /// Forgets what the buffers hold: every buffer is redrawn whole until it was drawn since.
    mutating func invalidate() {
        historyCount = 0
    }
}
