@testable import GLESRenderer
import Testing

/// Which rectangles the opaque pass may leave out, without GL.
@Suite("Occlusion culling")
struct OcclusionCullerTests {
    /// One rectangle's instance floats: x y w h r g b a radius.
    static func rect(_ x: Float, _ y: Float, _ w: Float, _ h: Float, alpha: Float = 1, radius: Float = 0) -> [Float] {
        [x, y, w, h, 0.2, 0.4, 0.6, alpha, radius]
    }

    /// Culls `layers` (drawing order, back to front) on a `width`×`height` viewport; returns each
    /// layer's visible instances and the number hidden.
    static func cull(
        _ layers: [[[Float]]], width: Int32 = 40, height: Int32 = 40,
        marks: Bool = true
    ) -> (visible: [[Float]], hidden: Int) {
        var culler = OcclusionCuller()
        culler.begin(width: width, height: height)
        var visible = [[Float]](repeating: [], count: layers.count)
        var hidden = 0
        for i in layers.indices.reversed() {
            var out = ContiguousArray<Float>()
            hidden += culler.cull(ContiguousArray(layers[i].joined()), marksCover: marks, into: &out)
            visible[i] = Array(out)
        }
        return (visible, hidden)
    }

    @Test("a rectangle behind an opaque one is hidden; the cells at the inside's edge are not covered")
    func behindOpaque() {
        let front = Self.rect(0, 0, 40, 40), behind = Self.rect(8, 8, 8, 8), corner = Self.rect(0, 0, 8, 8)
        let result = Self.cull([[behind, corner, front]])
        #expect(result.hidden == 1)
        #expect(result.visible == [corner + front])
    }

    @Test("translucent rectangles and clipped layers hide nothing")
    func translucentAndClipped() {
        let behind = Self.rect(8, 8, 8, 8)
        #expect(Self.cull([[behind, Self.rect(0, 0, 40, 40, alpha: 0.5)]]).hidden == 0)
        let clipped = Self.cull([[behind, Self.rect(0, 0, 40, 40)]], marks: false)
        #expect(clipped.hidden == 0)
        #expect(clipped.visible == [behind + Self.rect(0, 0, 40, 40)])
    }

    @Test("a nearer layer hides a farther one's rectangles; rounded corners shrink the inside")
    func acrossLayersAndCorners() {
        let rounded = Self.rect(0, 0, 40, 40, radius: 20)  // inset 20·0.2929 + 1: cells 2…7 covered
        let inner = Self.rect(8, 8, 8, 8), nearCorner = Self.rect(4, 4, 4, 4)
        let result = Self.cull([[inner, nearCorner], [rounded]])
        #expect(result.hidden == 1)
        #expect(result.visible == [nearCorner, rounded])
        // Off screen, or empty: never hidden (nothing of it is covered).
        #expect(Self.cull([[Self.rect(50, 50, 8, 8), Self.rect(0, 0, 40, 40)]]).hidden == 0)
    }

    @Test("the opaque pass's insides: opaque rectangles only, inset by the corner and a pixel, nearest first")
    func opaqueInsides() {
        let rects = ContiguousArray(
            [
                Self.rect(10, 20, 30, 40), Self.rect(0, 0, 50, 50, alpha: 0.5), Self.rect(0, 0, 2.5, 9),
                Self.rect(0, 0, 100, 50, radius: 10)
            ].joined())
        var opaque = ContiguousArray<Float>()
        OcclusionCuller.appendOpaqueInsides(of: rects, to: &opaque)
        let inset: Float = 10 * 0.29289322 + 1  // 3.9289322
        #expect(
            Array(opaque) == [
                inset, inset, 100 - 2 * inset, 50 - 2 * inset, 0.2, 0.4, 0.6, 3,
                11, 21, 28, 38, 0.2, 0.4, 0.6, 0
            ])
        #expect(OcclusionCuller.opaqueInset(width: 100, height: 8, cornerRadius: 10) == 4 * 0.29289322 + 1)
    }

    @Test("property: every point of a hidden rectangle on screen is inside a nearer opaque inside; the rest keep their order")
    func hiddenIsCovered() {
        var random = SeededGenerator(seed: 5)
        let width: Int32 = 64, height: Int32 = 48
        var hiddenSeen = 0
        for _ in 0..<150 {
            let layers: [[[Float]]] = (0..<2).map { _ in
                (0..<10).map { _ in
                    Self.rect(
                        Float(Int.random(in: -10...60, using: &random)) + [0, 0.5].randomElement(using: &random)!,
                        Float(Int.random(in: -10...44, using: &random)),
                        Float(Int.random(in: 1...40, using: &random)), Float(Int.random(in: 1...40, using: &random)),
                        alpha: [1, 1, 0.5].randomElement(using: &random)!,
                        radius: Float(Int.random(in: 0...12, using: &random)))
                }
            }
            let result = Self.cull(layers, width: width, height: height)
            hiddenSeen += result.hidden
            // Nearest first, as the culler sees them.
            let order = layers.indices.reversed().flatMap { i in layers[i].indices.reversed().map { (i, $0) } }
            var insides: [(Float, Float, Float, Float)] = []
            for (i, n) in order {
                let r = layers[i][n]
                let shown = result.visible[i].count / 9
                let isVisible = (0..<shown).contains { Array(result.visible[i][$0 * 9..<$0 * 9 + 9]) == r }
                if !isVisible {
                    var y = max(0, r[1])
                    while y <= min(Float(height), r[1] + r[3]) {
                        var x = max(0, r[0])
                        while x <= min(Float(width), r[0] + r[2]) {
                            let inside = insides.contains { x >= $0.0 && x <= $0.2 && y >= $0.1 && y <= $0.3 }
                            #expect(inside, "hidden \(r) at (\(x), \(y))")
                            if !inside { return }
                            x += 0.5
                        }
                        y += 0.5
                    }
                }
                if r[7] >= 1 {
                    let inset = min(r[8], min(r[2], r[3]) * 0.5) * 0.29289322 + 1
                    insides.append((r[0] + inset, r[1] + inset, r[0] + r[2] - inset, r[1] + r[3] - inset))
                }
            }
            // What is left is each layer's rectangles in their order, less the hidden ones.
            for i in layers.indices {
                var rest = layers[i][...]
                for k in 0..<(result.visible[i].count / 9) {
                    let r = Array(result.visible[i][k * 9..<k * 9 + 9])
                    guard let at = rest.firstIndex(of: r) else { Issue.record("out of order"); return }
                    rest = rest[(at + 1)...]
                }
            }
        }
        #expect(hiddenSeen > 50)
    }
}
