/// Which rectangles are wholly hidden behind nearer opaque ones, on a grid of 4×4-pixel cells.
///
/// Layers are given front to back (the last drawn first), each layer's rectangles are taken
/// last first: a rectangle every cell of whose bounds is already covered is hidden; otherwise
/// the cells wholly inside its opaque inside become covered (the inside the renderer's opaque
/// pass draws: alpha 1, inset by the corner's `r·(1 − 1/√2)` plus a pixel). Every pixel of a
/// hidden rectangle is then drawn opaque by a nearer one, so leaving it out changes no pixel.
///
/// No GL: the renderer gives it each layer's instances (``RectGlyphPrograms/rectFloats`` floats
/// each). Nothing is allocated per frame once the grid has the viewport's size.
struct OcclusionCuller {
    /// A cell's side in pixels.
    static let cell: Float = 4
    private static let rectFloats = RectGlyphPrograms.rectFloats

    /// Whether each cell is covered, row by row.
    private var covered: [Bool] = []
    private var columns = 0
    private var rows = 0
    /// The indices of a layer's rectangles not hidden, nearest first (reused each layer).
    private var shown = ContiguousArray<Int32>()

    /// Starts a frame of a `width`×`height` viewport: no cell covered.
    mutating func begin(width: Int32, height: Int32) {
        let columns = Int((Float(width) / OcclusionCuller.cell).rounded(.up))
        let rows = Int((Float(height) / OcclusionCuller.cell).rounded(.up))
        if covered.count != columns * rows || self.columns != columns {
            covered = [Bool](repeating: false, count: columns * rows)  // only when the size changes
        } else {
            covered.withUnsafeMutableBufferPointer { $0.update(repeating: false) }
        }
        self.columns = columns
        self.rows = rows
    }

    /// Appends to `visible`, in drawing order, the rectangles of the next layer (front to back)
    /// that are not hidden, and returns how many are. `marksCover`: whether this layer's opaque
    /// insides hide what is behind them (false for a clipped layer, whose clip may cut them).
    mutating func cull(
        _ rects: ContiguousArray<Float>, marksCover marks: Bool,
        into visible: inout ContiguousArray<Float>
    ) -> Int {
        let count = rects.count / OcclusionCuller.rectFloats
        guard count > 0 else { return 0 }
        let cell = OcclusionCuller.cell, columns = columns, rows = rows
        // Worked on as locals (moved out and back, no copy) so that the grid's pointer and the
        // list of shown rectangles are not two accesses to `self` at once.
        var shown = ContiguousArray<Int32>()
        var covered: [Bool] = []
        swap(&shown, &self.shown)
        swap(&covered, &self.covered)
        shown.removeAll(keepingCapacity: true)
        rects.withUnsafeBufferPointer { r in
            covered.withUnsafeMutableBufferPointer { grid in
                var n = count - 1
                while n >= 0 {
                    let b = n * OcclusionCuller.rectFloats
                    let x = r[b], y = r[b + 1], w = r[b + 2], h = r[b + 3]
                    let cx0 = max(0, Int((x / cell).rounded(.down))), cy0 = max(0, Int((y / cell).rounded(.down)))
                    let cx1 = min(columns - 1, Int(((x + w) / cell).rounded(.up)) - 1)
                    let cy1 = min(rows - 1, Int(((y + h) / cell).rounded(.up)) - 1)
                    var hidden = cx0 <= cx1 && cy0 <= cy1
                    var cy = cy0
                    while hidden && cy <= cy1 {
                        var cx = cx0
                        while cx <= cx1 { if !grid[cy * columns + cx] { hidden = false; break }; cx += 1 }
                        cy += 1
                    }
                    if !hidden {
                        shown.append(Int32(n))
                        let radius = r[b + 8]
                        if marks, r[b + 7] >= 1, radius >= 0 {
                            let inset = OcclusionCuller.opaqueInset(width: w, height: h, cornerRadius: radius)
                            let ix0 = Int(((x + inset) / cell).rounded(.up)), iy0 = Int(((y + inset) / cell).rounded(.up))
                            let ix1 = Int(((x + w - inset) / cell).rounded(.down)) - 1
                            let iy1 = Int(((y + h - inset) / cell).rounded(.down)) - 1
                            var cy = max(0, iy0)
                            while cy <= min(rows - 1, iy1) {
                                var cx = max(0, ix0)
                                while cx <= min(columns - 1, ix1) { grid[cy * columns + cx] = true; cx += 1 }
                                cy += 1
                            }
                        }
                    }
                    n -= 1
                }
            }
        }
        // `shown` is nearest first: the layer's drawing order is the reverse.
        var k = shown.count - 1
        while k >= 0 {
            let b = Int(shown[k]) * OcclusionCuller.rectFloats
            visible.append(contentsOf: rects[b..<b + OcclusionCuller.rectFloats])
            k -= 1
        }
        let hiddenCount = count - shown.count
        swap(&shown, &self.shown)
        swap(&covered, &self.covered)
        return hiddenCount
    }
}

extension OcclusionCuller {
    /// How far an opaque rectangle's inside, where the rectangle shader's coverage is exactly 1,
    /// lies from each side: the corner's `r·(1 − 1/√2)` (the corner arc's closest approach) plus
    /// a pixel (a margin that keeps every pixel centre inside well within the coverage-1 region,
    /// whatever the rounding).
    @inline(__always)
    static func opaqueInset(width w: Float, height h: Float, cornerRadius radius: Float) -> Float {
        let corner = min(radius, min(w, h) * 0.5)
        return corner * 0.29289322 + 1
    }

    /// Appends the insides of the opaque rectangles (alpha 1, radius ≥ 0, inside at least a pixel
    /// each way) of `rects`, nearest (last) first, as the opaque pass draws them: x y w h r g b and
    /// the rectangle's index in `rects`.
    static func appendOpaqueInsides(of rects: ContiguousArray<Float>, to opaque: inout ContiguousArray<Float>) {
        let count = rects.count / rectFloats
        rects.withUnsafeBufferPointer { r in
            var n = count - 1
            while n >= 0 {
                let b = n * rectFloats
                let w = r[b + 2], h = r[b + 3], radius = r[b + 8]
                if r[b + 7] >= 1, radius >= 0 {
                    let inset = opaqueInset(width: w, height: h, cornerRadius: radius)
                    if w - 2 * inset >= 1, h - 2 * inset >= 1 {
                        opaque.append(r[b] + inset); opaque.append(r[b + 1] + inset)
                        opaque.append(w - 2 * inset); opaque.append(h - 2 * inset)
                        opaque.append(r[b + 4]); opaque.append(r[b + 5])
                        opaque.append(r[b + 6]); opaque.append(Float(n))
                    }
                }
                n -= 1
            }
        }
    }
}
