import EGLGraphics
import Foundation
import GLESRenderer
import Testing

/// Strokes drawn offscreen (Mesa llvmpipe): caps, joins, antialiased edges, no double blending
/// at joins, one draw call, damage.
@Suite("Stroke pixels (offscreen, Mesa llvmpipe)", .serialized)
struct StrokePixelTests {
    static let size: Int32 = 256
    static let black = RGBA(0, 0, 0, 1)

    /// A renderer on `target` at GLES `version` (at most the context's), one layer.
    static func renderer(_ target: OffscreenTarget, _ version: Int32) throws -> (Renderer, Renderer.LayerID) {
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(version, target.context.glesMajorVersion))
        return (renderer, renderer.makeLayer())
    }

    /// One frame of `strokes` over `clear`; its pixels.
    static func draw(
        _ target: OffscreenTarget, _ version: Int32, clear: RGBA = black, _ strokes: [Stroke]
    ) throws -> [UInt8] {
        let (renderer, layer) = try renderer(target, version)
        renderer.beginFrame(width: size, height: size, clearColor: clear)
        for stroke in strokes { renderer.addStroke(layer, stroke) }
        renderer.endFrame()
        #expect(renderer.drawCalls == 1)
        return target.pixels()
    }

    static func stroke(
        _ points: [Point], width: Float, color: RGBA = RGBA(1, 1, 1, 1), join: Stroke.Join = .round, cap: Stroke.Cap = .round
    )
        -> Stroke
    {
        var stroke = Stroke(width: width, color: color, join: join, cap: cap)
        stroke.append(contentsOf: points)
        return stroke
    }

    @Test("a 10 px butt line on whole pixels covers exactly its rectangle", arguments: [3, 2] as [Int32])
    func buttLineIsItsRectangle(version: Int32) throws {
        let target = try OffscreenTarget()
        let line = Self.stroke([Point(x: 20, y: 50), Point(x: 100, y: 50)], width: 10, cap: .butt)
        let p = try Self.draw(target, version, [line])
        for y in 40..<60 {
            for x in 10..<110 {
                let inside = x >= 20 && x < 100 && y >= 45 && y < 55
                #expect(p.rgba(x, y, width: Self.size) == (inside ? [255, 255, 255, 255] : [0, 0, 0, 255]), "(\(x), \(y))")
            }
        }
    }

    @Test("a butt line between pixel rows is opaque inside, partly covered only on its long edges", arguments: [3, 2] as [Int32])
    func buttLineEdges(version: Int32) throws {
        let target = try OffscreenTarget()
        let line = Self.stroke([Point(x: 20, y: 50.5), Point(x: 100, y: 50.5)], width: 10, cap: .butt)
        let p = try Self.draw(target, version, [line])
        for x in 10..<110 {
            let along = x >= 20 && x < 100
            for y in 44...56 {
                let value = p.rgba(x, y, width: Self.size)[0]
                if !along || y == 44 || y == 56 {
                    #expect(value == 0, "(\(x), \(y)) beyond the line")
                } else if y == 45 || y == 55 {
                    #expect(abs(Int(value) - 128) <= 1, "(\(x), \(y)) on the edge: half covered, \(value)")
                } else {
                    #expect(value == 255, "(\(x), \(y)) inside")
                }
            }
        }
    }

    @Test("round caps reach half the width past the ends, round", arguments: [3, 2] as [Int32])
    func roundCaps(version: Int32) throws {
        let target = try OffscreenTarget()
        let line = Self.stroke([Point(x: 40, y: 50), Point(x: 100, y: 50)], width: 10, cap: .round)
        let p = try Self.draw(target, version, [line])
        func value(_ x: Int, _ y: Int) -> UInt8 { p.rgba(x, y, width: Self.size)[0] }
        for x in [36, 37, 38, 39, 100, 101, 102, 103] { #expect(value(x, 49) == 255 && value(x, 50) == 255, "x \(x)") }
        #expect(value(34, 49) == 0 && value(105, 49) == 0)
        let edge = value(35, 49)
        #expect(edge > 0 && edge < 255, "the cap's end is antialiased: \(edge)")
        // The cap's corner is round: a square cap would cover (35, 45).
        #expect(value(35, 45) == 0 && value(104, 54) == 0)
        let arc = value(36, 46)
        #expect(arc > 0 && arc < 255, "on the arc: \(arc)")
    }

    @Test("a right-angle miter join fills its outer corner square; a round one only its radius", arguments: [3, 2] as [Int32])
    func rightAngleJoins(version: Int32) throws {
        let target = try OffscreenTarget()
        let points = [Point(x: 40, y: 40), Point(x: 100, y: 40), Point(x: 100, y: 100)]
        let miter = try Self.draw(target, version, [Self.stroke(points, width: 10, join: .miter, cap: .butt)])
        let round = try Self.draw(target, version, [Self.stroke(points, width: 10, join: .round, cap: .butt)])
        // The outer corner: x 100..<105, y 35..<40.
        for y in 35..<40 {
            for x in 100..<105 { #expect(miter.rgba(x, y, width: Self.size)[0] == 255, "miter (\(x), \(y))") }
        }
        #expect(miter.rgba(105, 37, width: Self.size)[0] == 0 && miter.rgba(102, 34, width: Self.size)[0] == 0)
        #expect(round.rgba(104, 35, width: Self.size)[0] == 0, "round: the corner pixel is outside the arc")
        for (x, y) in [(102, 37), (103, 38), (101, 36), (100, 39), (102, 36)] {
            #expect(round.rgba(x, y, width: Self.size)[0] == 255, "round: (\(x), \(y)) within the radius")
        }
        // The inside of both segments and the inner corner are covered in both.
        for (x, y) in [(70, 40), (100, 70), (96, 44), (99, 40)] {
            #expect(miter.rgba(x, y, width: Self.size)[0] == 255 && round.rgba(x, y, width: Self.size)[0] == 255, "(\(x), \(y))")
        }
    }

    @Test(
        "a translucent stroke turning sharply has the same alpha at its join as along its segments",
        arguments: [(3, Stroke.Join.round), (2, .round), (3, .miter), (2, .miter)] as [(Int32, Stroke.Join)])
    func noDoubleBlendingAtJoins(version: Int32, join: Stroke.Join) throws {
        let target = try OffscreenTarget()
        // A 160° turn at (150, 60), and a gentle 30° one at (40, 100).
        let points = [Point(x: 30, y: 60), Point(x: 150, y: 60), Point(x: 40, y: 100.3), Point(x: 40 - 60 * 0.866, y: 100.3 + 30)]
        var stroke = Self.stroke(points, width: 12, color: RGBA(1, 1, 1, 0.5), join: join)
        stroke.miterLimit = 10
        let p = try Self.draw(target, version, clear: RGBA(0, 0, 0, 0), [stroke])
        let middle = Int(p.rgba(90, 60, width: Self.size)[3])
        #expect(abs(middle - 128) <= 1)
        // Every pixel within 4.5 px of a join point is well inside the ink: blended once.
        var checked = 0
        for join in [points[1], points[2]] {
            for y in Int(join.y) - 6...Int(join.y) + 6 {
                for x in Int(join.x) - 6...Int(join.x) + 6 {
                    let dx = Float(x) + 0.5 - join.x, dy = Float(y) + 0.5 - join.y
                    guard dx * dx + dy * dy < 4.5 * 4.5 else { continue }
                    let alpha = Int(p.rgba(x, y, width: Self.size)[3])
                    #expect(abs(alpha - middle) <= 1, "(\(x), \(y)) near the join at (\(join.x), \(join.y)): alpha \(alpha)")
                    checked += 1
                }
            }
        }
        #expect(checked > 100)
        // The miter's tip reaches past the round join's arc (1 / cos(80°) ≈ 5.8 half widths).
        let tip = p.rgba(150 + 12, 60 - 2, width: Self.size)[3]
        #expect(join == .miter ? tip > 0 : tip == 0, "beyond the join's point: \(tip)")
    }

    @Test("a 1,000-point stroke is one draw call, and GLES 2 draws the pixels GLES 3 does")
    func thousandPointsOneCall() throws {
        let target = try OffscreenTarget()
        var points: [Point] = []
        for k in 0..<1000 {
            let t = Float(k) / 999
            points.append(Point(x: 10 + 230 * t, y: 128 + 80 * sin(t * 25)))
        }
        let stroke = Self.stroke(points, width: 3, color: RGBA(0.2, 0.8, 1, 0.8))
        let gles3 = try Self.draw(target, 3, [stroke])
        let gles2 = try Self.draw(target, 2, [stroke])
        #expect(gles3.contains { $0 != 0 && $0 != 255 })
        // The same pixels, up to a rounding step where GLES 2 interpolates what GLES 3 keeps flat.
        let largest = zip(gles3, gles2).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(largest <= 1, "largest difference \(largest)")
    }

    @Test(
        "a growing stroke's damage covers its new segment; retained or laid out each frame",
        arguments: [(3, false), (3, true), (2, false), (2, true)] as [(Int32, Bool)])
    func growingStrokeDamage(version: Int32, retained: Bool) throws {
        let target = try OffscreenTarget()
        let (renderer, layer) = try Self.renderer(target, version)
        renderer.setRetained(layer, retained)
        var stroke = Self.stroke([Point(x: 20, y: 20), Point(x: 60, y: 20)], width: 6)
        func frame() {
            renderer.beginFrame(width: Self.size, height: Self.size, clearColor: Self.black)
            if retained { renderer.clear(layer) }
            renderer.addStroke(layer, stroke)
            #expect(renderer.strokeSegmentCount(layer) == stroke.points.count - 1)
            renderer.endFrame()
        }
        frame()
        #expect(renderer.damage == .full)
        frame()
        #expect(renderer.damage == .none)
        #expect(renderer.uploads == 0)
        stroke.append(Point(x: 200, y: 150))
        frame()
        guard case .region(let region) = renderer.damage else { Issue.record("expected a damage region"); return }
        // The new segment with its round cap and antialiased edge: up to (203 + 1, 153 + 1).
        #expect(region.x <= 16 && region.y <= 16)
        #expect(region.x + region.width >= 204 && region.y + region.height >= 154)
        #expect(renderer.uploads == 1)
        #expect(target.pixels().rgba(130, 85, width: Self.size) == [255, 255, 255, 255])
    }

    @Test("with the depth pass a stroke is drawn over its layer's rectangles and hidden by a later opaque one")
    func depthOrder() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        renderer.depthPassMinimumOverdraw = 0
        let below = renderer.makeLayer(), above = renderer.makeLayer()
        renderer.beginFrame(width: Self.size, height: Self.size, clearColor: Self.black)
        renderer.addRect(below, Rect(x: 0, y: 0, width: 256, height: 256), color: RGBA(0, 0, 1, 1))
        renderer.addLine(below, from: Point(x: 20, y: 100), to: Point(x: 230, y: 100), width: 10, color: RGBA(1, 0, 0, 1))
        renderer.addText(below, Array("x".utf8), x: 200, baseline: 40, face: 1, color: RGBA(1, 1, 1, 1))
        renderer.addRect(above, Rect(x: 100, y: 80, width: 40, height: 40), color: RGBA(0, 1, 0, 1))
        renderer.endFrame()
        #expect(renderer.usedDepthPass == (target.context.glesMajorVersion >= 3))
        let p = target.pixels()
        #expect(p.rgba(50, 100, width: Self.size) == [255, 0, 0, 255])
        #expect(p.rgba(120, 100, width: Self.size) == [0, 255, 0, 255])
        #expect(p.rgba(50, 120, width: Self.size) == [0, 0, 255, 255])
        #expect(renderer.drawCalls == 4)  // rects, stroke and glyphs below; rects above
    }

    @Test("a stroke in a cached layer is drawn into its texture and composited")
    func cachedLayer() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.setCached(layer, true)
        renderer.beginFrame(width: Self.size, height: Self.size, clearColor: Self.black)
        renderer.addLine(layer, from: Point(x: 20, y: 100), to: Point(x: 230, y: 100), width: 10, color: RGBA(1, 0, 0, 1))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(50, 100, width: Self.size) == [255, 0, 0, 255])
        #expect(p.rgba(50, 110, width: Self.size) == [0, 0, 0, 255])
    }

    @Test("a stroke outside the viewport or its layer's clip is dropped")
    func culled() throws {
        let target = try OffscreenTarget()
        let (renderer, layer) = try Self.renderer(target, 3)
        renderer.setClip(layer, Rect(x: 0, y: 0, width: 100, height: 100))
        renderer.beginFrame(width: Self.size, height: Self.size, clearColor: Self.black)
        renderer.addLine(layer, from: Point(x: 300, y: 10), to: Point(x: 400, y: 10), width: 4, color: RGBA(1, 1, 1, 1))
        renderer.addLine(layer, from: Point(x: 120, y: 120), to: Point(x: 200, y: 120), width: 4, color: RGBA(1, 1, 1, 1))
        #expect(renderer.strokeSegmentCount(layer) == 0)
        // Its width reaches into the clip: kept.
        renderer.addLine(layer, from: Point(x: 102, y: 50), to: Point(x: 200, y: 50), width: 6, color: RGBA(1, 1, 1, 1))
        #expect(renderer.strokeSegmentCount(layer) == 1)
        renderer.endFrame()
    }
}

extension StrokePixelTests {
    @Test("at scale 2 a stroke's points and width are drawn at twice the pixels", arguments: [3, 2] as [Int32])
    func scaled(version: Int32) throws {
        let target = try OffscreenTarget()
        let (renderer, layer) = try Self.renderer(target, version)
        try renderer.setScale(2)
        renderer.beginFrame(width: Self.size, height: Self.size, clearColor: Self.black)
        renderer.addLine(layer, from: Point(x: 10, y: 20), to: Point(x: 50, y: 20), width: 5, color: RGBA(1, 1, 1, 1))
        renderer.endFrame()
        let p = target.pixels()
        for (x, y) in [(20, 35), (99, 44), (60, 40)] { #expect(p.rgba(x, y, width: Self.size)[0] == 255, "(\(x), \(y))") }
        for (x, y) in [(19, 40), (100, 40), (60, 34), (60, 45)] { #expect(p.rgba(x, y, width: Self.size)[0] == 0, "(\(x), \(y))") }
    }
}
