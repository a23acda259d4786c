import DisplayLinkCore
import DisplayLinkTesting
import Motion
import Testing

/// The moving views driven by a display link on mock displays of different rates end up at the
/// same place: the kinematics are exact, so only rounding depends on the frame rate.
@MainActor
@Suite("Moving views are frame-rate independent")
struct FrameRateIndependenceTests {
    final class Model {
        var views: MovingViews
        var firstTimestamp: MonotonicInstant?
        var lastTimestamp: MonotonicInstant = .zero
        var callbacks = 0

        init() {
            // Large bounds and long lifetimes: nothing is recycled within the second.
            views = MovingViews(count: 4, width: 100_000, height: 100_000, seed: 11)
            views.set(0, x: 500, y: 500, vx: 120, vy: -200, ax: 0, ay: 90, lifetime: 10)  // the default gravity
            views.set(1, x: 800, y: 300, vx: -40, vy: 0, ax: 15, ay: -30, lifetime: 10)
            views.set(2, x: 200, y: 900, vx: 0, vy: 0, ax: -250, ay: 400, lifetime: 10)
            views.set(3, x: 600, y: 600, vx: 220, vy: 180, ax: 0, ay: 0, lifetime: 10)  // no acceleration
        }
    }

    /// One second of callbacks on a mock display at `hz`: the first callback (delta 0) and `hz`
    /// more. The mock's period is rounded to the nanosecond (1/144 s → 6,944,444 ns, so 144
    /// periods are 64 ns short of a second); scripted jitter puts vblank k at k/hz s rounded to
    /// the nanosecond instead, as on a display with an exact rate, so the callbacks span exactly
    /// one second at every rate.
    static func oneSecond(at hz: Int) -> Model {
        let model = Model()
        let source = MockFrameSource(refreshRate: Double(hz))
        let period = source.refreshPeriod.value
        source.scriptJitter(
            (1...hz + 1).map { k in
                Int64((Double(k) * 1e9 / Double(hz)).rounded()) - Int64(k) * period
            })
        let link = DisplayLink(source: source, target: model) { model, link in
            if model.firstTimestamp == nil { model.firstTimestamp = link.frame.timestamp }
            model.lastTimestamp = link.frame.timestamp
            model.callbacks += 1
            model.views.update(deltaTime: link.deltaTime)
        }
        source.vsync(hz + 1)
        link.invalidate()
        return model
    }

    @Test("30, 60, 120 and 144 Hz give the same positions and velocities after 1 s, to 1e-9")
    func sameAfterOneSecond() throws {
        let runs = [30, 60, 120, 144].map { (hz: $0, model: Self.oneSecond(at: $0)) }
        for run in runs {
            let first = try #require(run.model.firstTimestamp)
            #expect(run.model.callbacks == run.hz + 1)
            #expect(run.model.lastTimestamp - first == Nanoseconds(1_000_000_000), "\(run.hz) Hz")
            #expect(run.model.views.recycledCount == 0, "\(run.hz) Hz")
        }
        let reference = runs[0].model.views
        for run in runs.dropFirst() {
            let views = run.model.views
            for i in 0..<views.count {
                #expect(abs(views.x[i] - reference.x[i]) < 1e-9, "view \(i) at \(run.hz) Hz: x \(views.x[i]) vs \(reference.x[i])")
                #expect(abs(views.y[i] - reference.y[i]) < 1e-9, "view \(i) at \(run.hz) Hz: y \(views.y[i]) vs \(reference.y[i])")
                #expect(abs(views.vx[i] - reference.vx[i]) < 1e-9, "view \(i) at \(run.hz) Hz")
                #expect(abs(views.vy[i] - reference.vy[i]) < 1e-9, "view \(i) at \(run.hz) Hz")
            }
        }
        // And the place is the closed form p0 + v0·t + a·t²/2 at t = 1 s.
        for run in runs {
            let views = run.model.views
            #expect(abs(views.x[0] - (500 + 120)) < 1e-9)
            #expect(abs(views.y[0] - (500 - 200 + 45)) < 1e-9)
            #expect(abs(views.x[2] - (200 - 125)) < 1e-9)
            #expect(abs(views.y[2] - (900 + 200)) < 1e-9)
            #expect(abs(views.x[3] - (600 + 220)) < 1e-9)
        }
    }
}
