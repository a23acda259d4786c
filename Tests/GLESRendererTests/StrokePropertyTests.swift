import EGLGraphics
import Foundation
import GLESRenderer
import Testing

/// Strokes' pixels over many random polylines (seeded, so a failure repeats): every pixel drawn
/// lies within the frame's damage, and a translucent stroke is blended once around its joins.
@Suite("Stroke properties (offscreen, Mesa llvmpipe)", .serialized)
struct StrokePropertyTests {
    static let size: Int32 = 256

    static func point(_ generator: inout SeededGenerator) -> Point {
        Point(x: Float.random(in: -20...276, using: &generator), y: Float.random(in: -20...276, using: &generator))
    }

    @Test("whatever the polyline, join, cap and miter limit, nothing is drawn outside the damage", arguments: [3, 2] as [Int32])
    func inkWithinDamage(version: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(version, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        var generator = SeededGenerator(seed: 0x57_0CE5)
        for trial in 0..<30 {
            var stroke = Stroke(
                width: Float.random(in: 0.5...16, using: &generator), color: RGBA(1, 1, 1, 1),
                join: Bool.random(using: &generator) ? .round : .miter, cap: Bool.random(using: &generator) ? .round : .butt,
                miterLimit: Float.random(in: 1...12, using: &generator))
            // Random points, some close together, and hairpins (a point back near the one before last).
            for _ in 0..<Int.random(in: 2...12, using: &generator) {
                if stroke.points.count >= 2 && Int.random(in: 0..<4, using: &generator) == 0 {
                    let back = stroke.points[stroke.points.count - 2]
                    stroke.append(Point(x: back.x + Float.random(in: -2...2, using: &generator), y: back.y + 1))
                } else if let last = stroke.points.last, Bool.random(using: &generator) {
                    stroke.append(
                        Point(
                            x: last.x + Float.random(in: -3...3, using: &generator), y: last.y + Float.random(in: -3...3, using: &generator)
                        ))
                } else {
                    stroke.append(Self.point(&generator))
                }
            }
            renderer.beginFrame(width: Self.size, height: Self.size, clearColor: RGBA(0, 0, 0, 1), bufferAge: 1)
            renderer.endFrame()
            renderer.beginFrame(width: Self.size, height: Self.size, clearColor: RGBA(0, 0, 0, 1), bufferAge: 0)
            renderer.addStroke(layer, stroke)
            renderer.endFrame()
            let p = target.pixels()
            let region: Rect
            switch renderer.damage {
            case .none: region = Rect(x: 0, y: 0, width: 0, height: 0)
            case .region(let r): region = r
            case .full: continue
            }
            var outside = 0
            for y in 0..<Int(Self.size) {
                for x in 0..<Int(Self.size) where p.rgba(x, y, width: Self.size)[0] != 0 {
                    let inside =
                        Float(x) >= region.x && Float(x) < region.x + region.width && Float(y) >= region.y
                        && Float(y) < region.y + region.height
                    if !inside { outside += 1 }
                }
            }
            #expect(outside == 0, "trial \(trial): \(outside) pixels drawn outside the damage \(region), points \(stroke.points)")
        }
    }

    @Test("a translucent polyline turning up to 150° between long segments is blended once around each join", arguments: [3, 2] as [Int32])
    func blendedOnceAroundJoins(version: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(version, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        var generator = SeededGenerator(seed: 0xB1E_4D)
        for trial in 0..<30 {
            let width = Float.random(in: 4...14, using: &generator)
            let join: Stroke.Join = Bool.random(using: &generator) ? .round : .miter
            // Three points: a join at the centre between segments 50 to 90 px long.
            let center = Point(x: 128 + Float.random(in: -5...5, using: &generator), y: 128 + Float.random(in: -5...5, using: &generator))
            let heading = Float.random(in: 0..<(2 * .pi), using: &generator)
            let turn = Float.random(in: -150...150, using: &generator) * .pi / 180
            let first = Float.random(in: 50...90, using: &generator), second = Float.random(in: 50...90, using: &generator)
            let start = Point(x: center.x - first * cos(heading), y: center.y - first * sin(heading))
            let end = Point(x: center.x + second * cos(heading + turn), y: center.y + second * sin(heading + turn))
            var stroke = Stroke(width: width, color: RGBA(1, 1, 1, 0.5), join: join, cap: .butt, miterLimit: 10)
            stroke.append(contentsOf: [start, center, end])
            renderer.beginFrame(width: Self.size, height: Self.size, clearColor: RGBA(0, 0, 0, 0))
            renderer.addStroke(layer, stroke)
            renderer.endFrame()
            let p = target.pixels()
            // Within half the width less 1 px of the join: wholly inside the ink, blended once.
            let radius = width / 2 - 1
            var wrong = 0, checked = 0
            for y in Int(center.y - radius) - 1...Int(center.y + radius) + 1 {
                for x in Int(center.x - radius) - 1...Int(center.x + radius) + 1 {
                    let dx = Float(x) + 0.5 - center.x, dy = Float(y) + 0.5 - center.y
                    guard dx * dx + dy * dy < radius * radius else { continue }
                    checked += 1
                    if abs(Int(p.rgba(x, y, width: Self.size)[3]) - 128) > 1 { wrong += 1 }
                }
            }
            #expect(checked > 0)
            #expect(
                wrong == 0,
                "trial \(trial): \(wrong) of \(checked) pixels not blended once; turn \(turn * 180 / .pi)°, width \(width), \(join)")
        }
    }
}
