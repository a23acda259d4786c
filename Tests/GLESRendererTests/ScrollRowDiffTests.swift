@testable import GLESRenderer
import Testing

/// Which rows a scroll cache redraws, without GL.
@Suite("Scroll row diff")
struct ScrollRowDiffTests {
    /// A list row's rectangle in content coordinates: x y w h r g b a radius.
    static func row(_ y: Float, _ h: Float = 20, shade: Float = 0.5) -> [Float] { [0, y, 100, h, shade, shade, shade, 1, 0] }
    static func rows(_ tops: [Float]) -> ContiguousArray<Float> { ContiguousArray(tops.flatMap { row($0) }) }

    static func redraw(
        offset: Int, height: Int = 100, ringOffset: Int?, rects: ContiguousArray<Float>,
        ringRects: ContiguousArray<Float>, glyphs: ContiguousArray<Float> = [],
        ringGlyphs: ContiguousArray<Float> = []
    ) -> [Range<Int>] {
        ScrollRowDiff.rowsToRedraw(
            offset: offset, height: height, ringOffset: ringOffset, rects: rects, ringRects: ringRects,
            glyphs: glyphs, ringGlyphs: ringGlyphs
        ).ranges
    }

    @Test("an empty ring, or a jump of a window or more, redraws the whole window")
    func wholeWindow() {
        let list = Self.rows([0, 20, 40])
        #expect(Self.redraw(offset: 7, ringOffset: nil, rects: list, ringRects: list) == [7..<107])
        #expect(Self.redraw(offset: 100, ringOffset: 0, rects: list, ringRects: list) == [100..<200])
        #expect(Self.redraw(offset: 0, ringOffset: 150, rects: list, ringRects: list) == [0..<100])
    }

    @Test("a scroll redraws the rows that came in; a row entering or leaving counts only within the window")
    func scrolledIn() {
        let ring = Self.rows([0, 20, 40, 60, 80])
        // Down 5: the row at 100 comes in at the bottom; the one at 0 is still partly shown.
        #expect(Self.redraw(offset: 5, ringOffset: 0, rects: Self.rows([0, 20, 40, 60, 80, 100]), ringRects: ring) == [100..<105])
        // Down 25: the row at 0 left at the top (outside the window: no run of its own).
        #expect(
            Self.redraw(offset: 25, ringOffset: 0, rects: Self.rows([20, 40, 60, 80, 100, 120]), ringRects: ring)
                == [100..<125])
        // Up 6: rows 4 to 10 came in at the top.
        #expect(Self.redraw(offset: 4, ringOffset: 10, rects: ring, ringRects: ring) == [4..<10])
        // Still and unchanged: nothing.
        #expect(Self.redraw(offset: 10, ringOffset: 10, rects: ring, ringRects: ring) == [])
    }

    @Test("a changed row is a run of its own, or grows the scrolled-in run it touches")
    func changedRows() {
        let ring = Self.rows([0, 20, 40, 60, 80])
        var changed = ring
        changed[2 * 9 + 4] = 0.9  // the row at 40 changes colour
        #expect(Self.redraw(offset: 5, ringOffset: 0, rects: changed, ringRects: ring) == [100..<105, 40..<60])
        changed = ring
        changed[4 * 9 + 4] = 0.9  // the row at 80 reaches row 100: one run
        #expect(Self.redraw(offset: 5, ringOffset: 0, rects: changed, ringRects: ring) == [80..<105])
        // A row removed: its rows; a glyph moved half a pixel: its rows rounded out.
        #expect(Self.redraw(offset: 0, ringOffset: 0, rects: Self.rows([0, 40, 60, 80]), ringRects: ring) == [20..<40])
        let glyph: [Float] = [10, 50, 8, 3, 1, 1, 1, 1, 0, 0, 8, 3]
        var moved = glyph
        moved[1] = 50.5
        #expect(
            Self.redraw(
                offset: 0, ringOffset: 0, rects: ring, ringRects: ring, glyphs: ContiguousArray(moved),
                ringGlyphs: ContiguousArray(glyph)) == [50..<54])
    }

    @Test("property: every row whose instances differ, or that the ring did not hold, is redrawn; nothing outside the window")
    func coversEveryChangedRow() {
        var random = SeededGenerator(seed: 11)
        let height = 60
        for _ in 0..<300 {
            let old = Int.random(in: -20...80, using: &random)
            let offset = old + Int.random(in: -30...30, using: &random)
            var ring: [[Float]] = (0..<12).map { k in Self.row(Float(k * 10) - 20, Float(Int.random(in: 4...15, using: &random))) }
            var current = ring
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let k = Int.random(in: 0..<current.count, using: &random)
                switch Int.random(in: 0...2, using: &random) {
                case 0: current.remove(at: k)
                case 1: current.insert(Self.row(Float(Int.random(in: -20...120, using: &random)), 7), at: k)
                default: current[k][4] = 0.1
                }
            }
            if Bool.random(using: &random) { ring.swapAt(0, 1) }
            let runs = Self.redraw(
                offset: offset, height: height, ringOffset: old, rects: ContiguousArray(current.joined()),
                ringRects: ContiguousArray(ring.joined()))
            #expect(runs.count <= 2)
            for run in runs { #expect(run.lowerBound >= offset && run.upperBound <= offset + height && !run.isEmpty) }
            func at(_ r: Int, _ list: [[Float]]) -> [[Float]] { list.filter { $0[1] < Float(r + 1) && $0[1] + $0[3] > Float(r) } }
            for r in offset..<(offset + height) {
                let held = abs(old - offset) < height && r >= old && r < old + height
                if !held || at(r, current) != at(r, ring) {
                    #expect(runs.contains { $0.contains(r) }, "row \(r) (ring at \(old), window at \(offset)) not redrawn: \(runs)")
                }
            }
        }
    }
}
