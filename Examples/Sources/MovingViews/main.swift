// MovingViews: about 60 small views, each moved by its velocity and acceleration times the
// display link's delta time (so they move at the same speed at any refresh rate), and recycled at
// a random place when their animation ends or they leave the screen. The app is the link's
// DisplayUpdateReceiver, as in the seed "Animations with CADisplayLink".
//
//   MovingViews [--frames N]      (a Wayland window, or a DRM/KMS output without a compositor)
import Dispatch
import DisplayLinkCore
import DisplaySurface
import GLESRenderer
import Glibc

/// One view: the seed's MoveableView (centre, velocity and acceleration in points and seconds).
struct MovingView {
    var x = 0.0, y = 0.0, vx = 0.0, vy = 0.0, ax = 0.0, ay = 90.0, age = 0.0, lifetime = 0.0
    var color = RGBA(1, 1, 1)

    mutating func reset(width: Double, height: Double) {
        let angle = Double.random(in: 0..<2 * .pi), speed = Double.random(in: 40...220)
        (x, y) = (Double.random(in: 0...width), Double.random(in: 0...height))
        (vx, vy, age, lifetime) = (speed * cos(angle), speed * sin(angle), 0, Double.random(in: 1.5...4))
        color = RGBA(Float.random(in: 0.3...1), Float.random(in: 0.3...1), Float.random(in: 0.3...1))
    }

    /// Moves by `dt` seconds; false when the animation is over (ready for reuse).
    mutating func update(deltaTime dt: Double, width: Double, height: Double) -> Bool {
        x += vx * dt + ax * dt * dt / 2
        y += vy * dt + ay * dt * dt / 2
        vx += ax * dt
        vy += ay * dt
        age += dt
        return age < lifetime && (-20...width + 20).contains(x) && (-20...height + 20).contains(y)
    }
}

@MainActor
final class App: DisplayUpdateReceiver {
    let surface: DisplaySurface
    let renderer: Renderer
    let layer: Renderer.LayerID
    var views = [MovingView](repeating: MovingView(), count: 60)
    var link: DisplayLink?
    let frameLimit: Int
    var frames: [DisplayFrame] = []
    var recycled = 0, offScreen = 0
    /// Frames that ran on another thread than the main one (DisplaySurface.runMainLoop() runs them there).
    var offMainThread = 0
    let mainThread = pthread_self()

    init(frames: Int) throws {
        frameLimit = frames
        surface = try DisplaySurface(options: .init(title: "MovingViews"))
        try surface.beginFrame()  // the GL context is current: build the renderer
        renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14]), glesMajorVersion: surface.glesMajorVersion)
        layer = renderer.makeLayer(reserving: views.count)
        for i in views.indices { views[i].reset(width: Double(surface.width), height: Double(surface.height)) }
        try surface.prepare { draw() }  // a warm-up frame, never shown
        surface.onError = { error in
            print("MovingViews: \(error)"); exit(1)
        }
        link = DisplayLink(source: surface, receiver: self)
    }

    func draw() {
        renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.07, 0.08, 0.11))
        for view in views {
            renderer.addRect(
                layer, Rect(x: Float(view.x) - 8, y: Float(view.y) - 8, width: 16, height: 16),
                color: view.color, cornerRadius: 4)
        }
        renderer.endFrame()
    }

    func displayWillUpdate(_ frame: DisplayFrame) {
        let (width, height) = (Double(surface.width), Double(surface.height))
        for i in views.indices where !views[i].update(deltaTime: frame.deltaTime, width: width, height: height) {
            views[i].reset(width: width, height: height)  // recycled
            recycled += 1
        }
        offScreen += views.filter { !(-20...width + 20).contains($0.x) || !(-20...height + 20).contains($0.y) }.count
        do {
            try surface.beginFrame()
            draw()
            try surface.present()
        } catch {
            print("MovingViews: \(error)")
            exit(1)
        }
        if pthread_equal(pthread_self(), mainThread) == 0 { offMainThread += 1 }
        frames.append(frame)
        if frames.count == frameLimit { finish() }
    }

    func finish() {
        link?.invalidate()
        surface.close()
        let first = frames[0], last = frames[frames.count - 1]
        let moved = frames.reduce(0) { $0 + $1.deltaTime }
        // The seed's promise: the views move by delta time, which starts at zero and never runs
        // backwards, and no view is left off screen (it is recycled in the frame it leaves).
        // Every frame ran on the main thread (runMainLoop() below serves the main queue there).
        let ok = first.deltaTime == 0 && frames.allSatisfy { $0.deltaTime >= 0 } && offScreen == 0 && offMainThread == 0
        print(
            "MovingViews: \(frames.count) frames on \(surface.backend), timestamps \(seconds(first.timestamp.seconds))"
                + "…\(seconds(last.timestamp.seconds)) s (\(last.provenance.rawValue)), \(views.count) views moved "
                + "\(seconds(moved)) s, \(recycled) recycled; check "
                + (ok
                    ? "ok (first delta 0, deltas ≥ 0, none left off screen, all on the main thread)"
                    : "FAILED (\(offScreen) views off screen, \(offMainThread) frames off the main thread)"))
        exit(ok ? 0 : 1)
    }
}

/// Seconds to the millisecond, for the summary line.
func seconds(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

var frameLimit = 300
if let i = CommandLine.arguments.firstIndex(of: "--frames"), i + 1 < CommandLine.arguments.count {
    frameLimit = max(1, Int(CommandLine.arguments[i + 1]) ?? frameLimit)
}
DisplaySurface.installSignalHandlers()  // Ctrl-C, SIGTERM: close the surface (KMS: the console's mode back)
do {
    let app = try App(frames: frameLimit)
    // The main queue and the display's events on this thread (dispatchMain() would do too).
    withExtendedLifetime(app) { DisplaySurface.runMainLoop() }
} catch {
    print("MovingViews: \(error)")
    exit(1)
}
