import Motion
import Testing

@Suite("Moving views")
struct MovingViewsTests {
    @Test("constant acceleration integrates exactly as v += a·dt, p += v·dt")
    func integration() {
        var views = MovingViews(count: 1, width: 10_000, height: 10_000, seed: 7)
        views.set(0, x: 100, y: 200, vx: 10, vy: -20, ax: 2, ay: 4, lifetime: 100)
        var x = 100.0, y = 200.0, vx = 10.0, vy = -20.0
        let dt = 1.0 / 60
        for _ in 0..<120 {
            views.update(deltaTime: dt)
            vx += 2 * dt; vy += 4 * dt
            x += vx * dt; y += vy * dt
        }
        #expect(views.x[0] == x)
        #expect(views.y[0] == y)
        #expect(views.vx[0] == vx)
        // Against the closed form (semi-implicit Euler): x(n) = x0 + n·dt·v0 + a·dt²·n(n+1)/2.
        let n = 120.0
        #expect(abs(views.x[0] - (100 + n * dt * 10 + 2 * dt * dt * n * (n + 1) / 2)) < 1e-9)
        #expect(views.recycledCount == 0)
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
