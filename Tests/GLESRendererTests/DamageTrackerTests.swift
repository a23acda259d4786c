@testable import GLESRenderer
import Testing

/// What a frame damages and what a buffer of a given age lacks, without GL.
@Suite("Damage tracking")
struct DamageTrackerTests {
    static func bounds(_ x: Float, _ y: Float, _ w: Float, _ h: Float) -> Bounds {
        var b = Bounds()
        b.add(x, y, w, h)
        return b
    }

    @Test("a layer's change is where it is now and where it was, cut to its clip")
    func layerChange() {
        let now = Self.bounds(10, 10, 20, 20), before = Self.bounds(40, 5, 10, 10)
        #expect(
            DamageTracker.layerChange(bounds: now, previousBounds: before, clip: nil)
                == Bounds(minX: 10, minY: 5, maxX: 50, maxY: 30))
        #expect(
            DamageTracker.layerChange(bounds: now, previousBounds: before, clip: Rect(x: 0, y: 0, width: 45, height: 20))
                == Bounds(minX: 10, minY: 5, maxX: 45, maxY: 20))
        #expect(DamageTracker.layerChange(bounds: now, previousBounds: Bounds(), clip: nil) == now)
    }

    @Test("damage is the changed region rounded out to whole pixels and cut to the viewport")
    func damageRegion() {
        #expect(
            DamageTracker.damage(changed: Self.bounds(10.5, 20.25, 30, 40), frameChanged: false, width: 100, height: 100)
                == .region(Rect(x: 10, y: 20, width: 31, height: 41)))
        #expect(
            DamageTracker.damage(changed: Self.bounds(-5, 90, 20, 20), frameChanged: false, width: 100, height: 100)
                == .region(Rect(x: 0, y: 90, width: 15, height: 10)))
        #expect(DamageTracker.damage(changed: Self.bounds(120, 0, 10, 10), frameChanged: false, width: 100, height: 100) == .none)
        #expect(DamageTracker.damage(changed: Bounds(), frameChanged: false, width: 100, height: 100) == .none)
        #expect(DamageTracker.damage(changed: Bounds(), frameChanged: true, width: 100, height: 100) == .full)
    }

    @Test("a new size or clear colour changes the whole frame; the same one does not")
    func frameChanges() {
        var tracker = DamageTracker()
        let grey = RGBA(0.5, 0.5, 0.5)
        #expect(tracker.frameChanged(width: 100, height: 80, clearColor: grey))
        _ = tracker.record(changed: Bounds(), width: 100, height: 80, clearColor: grey, age: 0)
        #expect(!tracker.frameChanged(width: 100, height: 80, clearColor: grey))
        #expect(tracker.frameChanged(width: 101, height: 80, clearColor: grey))
        #expect(tracker.frameChanged(width: 100, height: 81, clearColor: grey))
        #expect(tracker.frameChanged(width: 100, height: 80, clearColor: RGBA(0.5, 0.5, 0.5, 0.9)))
    }

    @Test("a buffer of age n lacks the changes of its own frame and the n − 1 before; unknown or too old, everything")
    func buffersByAge() {
        var tracker = DamageTracker()
        let a = Self.bounds(0, 0, 10, 10), b = Self.bounds(20, 20, 10, 10), c = Self.bounds(50, 0, 5, 5)
        func record(_ changed: Bounds, age: Int) -> Bounds {
            tracker.record(changed: changed, width: 100, height: 100, clearColor: RGBA(0, 0, 0), age: age)
        }
        #expect(record(a, age: 0) == .everything)  // the first frame: everything changed
        #expect(record(b, age: 1) == b)
        #expect(record(c, age: 2) == Bounds(minX: 20, minY: 0, maxX: 55, maxY: 30))
        #expect(record(a, age: 3) == Bounds(minX: 0, minY: 0, maxX: 55, maxY: 30))
        #expect(record(a, age: 4) == Bounds(minX: 0, minY: 0, maxX: 55, maxY: 30))
        // Older than the frames recorded, or than the history kept: everything.
        #expect(record(a, age: 6) == .everything)
        #expect(record(b, age: 8) == .everything)
        for _ in 0..<DamageTracker.historyLength { _ = record(a, age: 1) }
        #expect(record(a, age: DamageTracker.historyLength) == a)
        #expect(record(a, age: DamageTracker.historyLength + 1) == .everything)
        // After invalidation every buffer is drawn whole until it was drawn since.
        tracker.invalidate()
        #expect(record(b, age: 1) == .everything)
        #expect(record(c, age: 1) == c)
        #expect(record(a, age: 2) == Bounds(minX: 0, minY: 0, maxX: 55, maxY: 10))
        #expect(record(a, age: 3) == Bounds(minX: 0, minY: 0, maxX: 55, maxY: 10))
        #expect(record(a, age: 5) == .everything)
        // A forced region is redrawn whatever the age.
        let forced = Self.bounds(1, 1, 98, 98)
        #expect(
            tracker.record(
                changed: a, width: 100, height: 100, clearColor: RGBA(0, 0, 0), age: 1,
                forced: forced) == forced)
    }

    @Test("property: a buffer's redraw is exactly the union of the changes of the frames it missed")
    func redrawIsUnionOfMissedFrames() {
        var random = SeededGenerator(seed: 24)
        for _ in 0..<200 {
            var tracker = DamageTracker()
            var changes: [Bounds] = []
            for frame in 0..<30 {
                var changed = Bounds()
                if Bool.random(using: &random) {
                    changed.add(
                        Float(Int.random(in: -20...100, using: &random)), Float(Int.random(in: -20...100, using: &random)),
                        Float(Int.random(in: 1...40, using: &random)), Float(Int.random(in: 1...40, using: &random)))
                }
                changes.append(changed)
                let age = Int.random(in: 0...10, using: &random)
                let redraw = tracker.record(
                    changed: changed, width: 100, height: 100,
                    clearColor: RGBA(0, 0, 0), age: age)
                if age == 0 || age > frame || age > DamageTracker.historyLength {
                    #expect(redraw == .everything)
                } else {
                    var expected = Bounds()
                    for k in (frame - age + 1)...frame { expected.add(changes[k]) }
                    #expect(redraw == expected)
                }
            }
        }
    }
}
