@testable import GLESRenderer
import Testing

/// ``Stroke``'s segment instances, without GL: what each float is, and that growing a stroke
/// touches only its last segment.
@Suite("Stroke encoding")
struct StrokeEncodingTests {
    static let red = RGBA(1, 0, 0, 0.5)

    @Test("a 3-point stroke is two instances: neighbours, points, colour, half width, end kinds, miter limit")
    func threePoints() {
        var stroke = Stroke(width: 6, color: Self.red, join: .miter, cap: .butt, miterLimit: 3)
        stroke.append(contentsOf: [Point(x: 1, y: 2), Point(x: 11, y: 2), Point(x: 11, y: 12)])
        let butt = Stroke.EndKind.buttCap.rawValue, miter = Stroke.EndKind.miterJoin.rawValue
        #expect(
            Array(stroke.instances) == [
                1, 2, 1, 2, 11, 2, 11, 12, 1, 0, 0, 0.5, 3, butt, miter, 3,
                1, 2, 11, 2, 11, 12, 11, 12, 1, 0, 0, 0.5, 3, miter, butt, 3
            ])
        #expect(stroke.points == [Point(x: 1, y: 2), Point(x: 11, y: 2), Point(x: 11, y: 12)])
        #expect(stroke.segmentCount == 2)
    }

    @Test("round joins and caps have their own kinds; a repeated point and a lone point make no segment")
    func roundKindsAndDegenerates() {
        var stroke = Stroke(width: 2, color: Self.red)
        stroke.append(Point(x: 0, y: 0))
        #expect(stroke.instances.isEmpty)
        stroke.append(Point(x: 0, y: 0))
        #expect(stroke.instances.isEmpty && stroke.points.count == 1)
        stroke.append(Point(x: 5, y: 0))
        stroke.append(Point(x: 5, y: 5))
        let i = stroke.instances
        #expect(i[13] == Stroke.EndKind.roundCap.rawValue && i[14] == Stroke.EndKind.roundJoin.rawValue)
        #expect(i[16 + 13] == Stroke.EndKind.roundJoin.rawValue && i[16 + 14] == Stroke.EndKind.roundCap.rawValue)
    }

    @Test("appending a point leaves every earlier instance as it was but the last one's next point and end kind")
    func appendTouchesOnlyTheLastSegment() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        for trial in 0..<50 {
            var stroke = Stroke(
                width: Float.random(in: 0.5...20, using: &generator), color: Self.red,
                join: Bool.random(using: &generator) ? .round : .miter, cap: Bool.random(using: &generator) ? .round : .butt)
            for _ in 0..<Int.random(in: 2...30, using: &generator) {
                stroke.append(Point(x: Float.random(in: -100...100, using: &generator), y: Float.random(in: -100...100, using: &generator)))
            }
            let before = stroke.instances
            let point = Point(x: Float.random(in: -100...100, using: &generator), y: Float.random(in: -100...100, using: &generator))
            stroke.append(point)
            let after = stroke.instances
            let n = Stroke.instanceFloats
            #expect(after.count == before.count + n, "trial \(trial)")
            let lastStart = before.count - n
            // Earlier instances: bit for bit.
            #expect(after[0..<lastStart].map(\.bitPattern) == before[0..<lastStart].map(\.bitPattern), "trial \(trial)")
            // The last one: only its next point and end kind.
            for k in 0..<n {
                let changed = k == Stroke.nextOffset || k == Stroke.nextOffset + 1 || k == Stroke.endKindOffset
                if !changed { #expect(after[lastStart + k].bitPattern == before[lastStart + k].bitPattern, "trial \(trial) float \(k)") }
            }
            #expect(after[lastStart + Stroke.nextOffset] == point.x && after[lastStart + Stroke.nextOffset + 1] == point.y)
            #expect(after[lastStart + Stroke.endKindOffset] >= Stroke.EndKind.roundJoin.rawValue)
            // The new one: the one a stroke built from all the points at once ends with.
            var whole = Stroke(width: stroke.width, color: stroke.color, join: stroke.join, cap: stroke.cap)
            whole.append(contentsOf: stroke.points)
            #expect(Array(whole.instances) == Array(after), "trial \(trial)")
        }
    }

    @Test("removeAll empties the points, instances and bounds; the stroke is then built afresh")
    func removeAll() {
        var stroke = Stroke(width: 4, color: Self.red)
        stroke.append(contentsOf: [Point(x: 0, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 10)])
        stroke.removeAll()
        #expect(stroke.points.isEmpty && stroke.instances.isEmpty && stroke.pointBounds.isEmpty)
        stroke.append(contentsOf: [Point(x: 3, y: 3), Point(x: 4, y: 4)])
        var fresh = Stroke(width: 4, color: Self.red)
        fresh.append(contentsOf: [Point(x: 3, y: 3), Point(x: 4, y: 4)])
        #expect(stroke.instances == fresh.instances)
        #expect(stroke.pointBounds == fresh.pointBounds)
    }

    @Test("changing the width, colour, join, cap or miter limit re-encodes every segment")
    func styleChangesReencode() {
        let points = [Point(x: 0, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 10), Point(x: 20, y: 5)]
        var stroke = Stroke(width: 4, color: Self.red)
        stroke.append(contentsOf: points)
        stroke.width = 9
        stroke.color = RGBA(0, 1, 0, 1)
        stroke.join = .miter
        stroke.cap = .butt
        stroke.miterLimit = 2
        var expected = Stroke(width: 9, color: RGBA(0, 1, 0, 1), join: .miter, cap: .butt, miterLimit: 2)
        expected.append(contentsOf: points)
        #expect(stroke.instances == expected.instances)
        #expect(stroke.segmentCount == 3)
        for s in 0..<3 {
            #expect(stroke.instances[s * Stroke.instanceFloats + 12] == 4.5)
            #expect(stroke.instances[s * Stroke.instanceFloats + 15] == 2)
        }
    }

    @Test("the reach is half the width, or the miter limit's half widths for miter joins")
    func reach() {
        #expect(Stroke(width: 10, color: Self.red).reach == 5)
        #expect(Stroke(width: 10, color: Self.red, join: .miter, miterLimit: 3).reach == 15)
    }
}
