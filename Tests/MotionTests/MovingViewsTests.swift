import Motion
import Testing

@Suite("Moving views")
struct MovingViewsTests {
    @Test("constant acceleration follows the closed form p0 + v0·t + a·t²/2 at any step size")
    func integration() {
        for steps in [1, 7, 120, 1000] {
            var views = MovingViews(count: 1, width: 10_000, height: 10_000, seed: 7)
            views.set(0, x: 100, y: 200, vx: 10, vy: -20, ax: 2, ay: 4, lifetime: 100)
            let dt = 2.0 / Double(steps)
            for _ in 0..<steps { views.update(deltaTime: dt) }
            // t = 2 s: x = 100 + 10·2 + 2·4/2 = 124, y = 200 − 20·2 + 4·4/2 = 168.
            #expect(abs(views.x[0] - 124) < 1e-9, "\(steps) steps")
            #expect(abs(views.y[0] - 168) < 1e-9, "\(steps) steps")
            #expect(abs(views.vx[0] - 14) < 1e-9, "\(steps) steps")
            #expect(abs(views.vy[0] - -12) < 1e-9, "\(steps) steps")
            #expect(abs(views.age[0] - 2) < 1e-9)
            #expect(views.recycledCount == 0)
        }
    }

    @Test("one step is exactly p += v·dt + a·dt²/2, then v += a·dt")
    func oneStep() {
        var views = MovingViews(count: 1, width: 10_000, height: 10_000, seed: 7)
        views.set(0, x: 100, y: 200, vx: 10, vy: -20, ax: 2, ay: 4, lifetime: 100)
        views.update(deltaTime: 0.5)
        #expect(views.x[0] == 100 + 10 * 0.5 + 2 * 0.125)
        #expect(views.y[0] == 200 - 20 * 0.5 + 4 * 0.125)
        #expect(views.vx[0] == 11)
        #expect(views.vy[0] == -18)
    }

    @Test("a view whose lifetime ends is recycled at a new place, reproducibly")
    func recycling() {
        func run() -> MovingViews {
            var views = MovingViews(count: 3, width: 400, height: 300, seed: 42)
            views.set(1, x: 200, y: 150, vx: 0, vy: 0, ax: 0, ay: 0, lifetime: 0.05)
            for _ in 0..<4 { views.update(deltaTime: 1.0 / 60) }
            return views
        }
        let a = run(), b = run()
        #expect(a.recycledCount >= 1)
        #expect(a.age[1] < 0.05)
        #expect(a.x[1] != 200 || a.y[1] != 150)
        #expect(a.x == b.x && a.y == b.y && a.colorIndex == b.colorIndex)
        #expect((0...400).contains(a.x[1]) && (0...300).contains(a.y[1]))
    }

    @Test("a view that leaves the bounds is recycled inside them")
    func leavesBounds() {
        var views = MovingViews(count: 1, width: 100, height: 100, seed: 1)
        views.set(0, x: 99, y: 50, vx: 1000, vy: 0, ax: 0, ay: 0, lifetime: 100)
        views.update(deltaTime: 0.1)
        #expect(views.recycledCount == 1)
        #expect((0...100).contains(views.x[0]))
    }
}
