/// Content rows [lo, hi) that a scroll cache's ring must redraw: at most two runs, kept inline
/// so that computing them allocates nothing.
struct RowRuns {
    private(set) var count = 0
    private var runs = ((0, 0), (0, 0))

    subscript(k: Int) -> (Int, Int) {
        get { k == 0 ? runs.0 : runs.1 }
        set { if k == 0 { runs.0 = newValue } else { runs.1 = newValue } }
    }

    /// The runs as ranges (for tests and descriptions).
    var ranges: [Range<Int>] { (0..<count).map { self[$0].0..<self[$0].1 } }

    /// A run of its own, or the first one grown over it when they touch or overlap.
    mutating func add(_ run: (Int, Int)) {
        if count == 1, run.0 <= runs.0.1, run.1 >= runs.0.0 {
            runs.0 = (min(run.0, runs.0.0), max(run.1, runs.0.1))
        } else {
            self[count] = run
            count += 1
        }
    }
}

/// Which content rows of a scrolled list change between what the ring holds and this frame: the
/// rows that scrolled into the window, and the rows of anything added, removed or changed.
///
/// No GL: instances are compared as the float arrays the scroll cache keeps, in content
/// coordinates (y at float 1, height at float 3 of each instance).
enum ScrollRowDiff {
    /// The rows to redraw for a window `height` rows high at `offset`, when the ring holds the
    /// window at `ringOffset` (nil: nothing usable; everything is redrawn) with the instances
    /// `ringRects` and `ringGlyphs`, and this frame's are `rects` and `glyphs`.
    static func rowsToRedraw(
        offset: Int, height: Int, ringOffset: Int?,
        rects: ContiguousArray<Float>, ringRects: ContiguousArray<Float>,
        glyphs: ContiguousArray<Float>, ringGlyphs: ContiguousArray<Float>
    ) -> RowRuns {
        let window = (offset, offset + height)
        var runs = RowRuns()
        guard let old = ringOffset, abs(old - offset) < height else {
            runs.add(window)
            return runs
        }
        // Rows scrolled in, then rows whose contents differ.
        if offset > old { runs.add((old + height, offset + height)) }
        if offset < old { runs.add((offset, old)) }
        var lo = Float.infinity, hi = -Float.infinity
        let rows = (Float(window.0), Float(window.1))
        changedRows(rects, ringRects, stride: RectGlyphPrograms.rectFloats, within: rows, &lo, &hi)
        changedRows(glyphs, ringGlyphs, stride: RectGlyphPrograms.glyphFloats, within: rows, &lo, &hi)
        if lo < hi {
            let run = (max(window.0, Int(lo.rounded(.down))), min(window.1, Int(hi.rounded(.up))))
            if run.0 < run.1 { runs.add(run) }
        }
        return runs
    }

    /// Widens [lo, hi) over the content rows within `window` (content rows [window.0, window.1))
    /// of the instances of `current` and `previous` not matched in the other, matching in order
    /// (each match after the one before, as a list's rows are).
    ///
    /// Each instance is cut to the window before it counts: one that left the window (scrolled
    /// out at the top, or no longer shown by the clip) changes no row the ring holds, so a row
    /// leaving at the top and a row entering at the bottom make two short runs, not one over the
    /// whole window.
    static func changedRows(
        _ current: ContiguousArray<Float>, _ previous: ContiguousArray<Float>, stride: Int,
        within window: (Float, Float), _ lo: inout Float, _ hi: inout Float
    ) {
        current.withUnsafeBufferPointer { c in
            previous.withUnsafeBufferPointer { p in
                let n = c.count / stride, m = p.count / stride
                func note(_ b: UnsafeBufferPointer<Float>, _ i: Int) {
                    let top = b[i * stride + 1], bottom = top + b[i * stride + 3]
                    guard bottom > window.0, top < window.1 else { return }
                    lo = min(lo, max(top, window.0)); hi = max(hi, min(bottom, window.1))
                }
                var cursor = 0
                for i in 0..<n {
                    var j = cursor
                    var found = false
                    while j < m {
                        var equal = true
                        for k in 0..<stride where c[i * stride + k] != p[j * stride + k] { equal = false; break }
                        if equal { found = true; break }
                        j += 1
                    }
                    if found {
                        for skipped in cursor..<j { note(p, skipped) }
                        cursor = j + 1
                    } else {
                        note(c, i)
                    }
                }
                for skipped in cursor..<m { note(p, skipped) }
            }
        }
    }
}
