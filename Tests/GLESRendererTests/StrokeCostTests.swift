import EGLGraphics
import Foundation
import GLESRenderer
import Testing

/// What a live stroke costs per frame: a 2,000-point stroke growing 10 points a frame, laid out
/// each frame. Asserts the draw calls and uploads; prints the times (a line starting "[strokes]",
/// as the Makefile's figure targets print), asserted nowhere.
@Suite("Stroke cost per frame (offscreen, Mesa llvmpipe)", .serialized)
struct StrokeCostTests {
    @Test("a growing 2,000-point stroke: one draw call and one upload a frame; an unchanged one: no upload", arguments: [3, 2] as [Int32])
    func growingStroke(version: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(version, target.context.glesMajorVersion))
        let layer = renderer.makeLayer(reserving: 4096)
        var stroke = Stroke(width: 2, color: RGBA(1, 1, 1, 0.8))
        var k = 0
        func grow(_ n: Int) {
            for _ in 0..<n {
                let t = Float(k)
                stroke.append(Point(x: 128 + 100 * sin(t * 0.013), y: 128 + 100 * sin(t * 0.0171)))
                k += 1
            }
        }
        let clock = ContinuousClock()
        var adding: Duration = .zero, ending: Duration = .zero
        func frame(age: Int = 1) {
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1), bufferAge: age)
            let start = clock.now
            renderer.addStroke(layer, stroke)
            let added = clock.now
            renderer.endFrame()
            adding += added - start
            ending += clock.now - added
        }
        grow(2000)
        frame()
        renderer.finish()
        let frames = 60
        var growing: Duration = .zero, still: Duration = .zero
        adding = .zero
        ending = .zero
        for _ in 0..<frames {
            let start = clock.now
            grow(10)
            frame()
            renderer.finish()
            growing += clock.now - start
            #expect(renderer.drawCalls == 1)
            #expect(renderer.uploads == 1)
        }
        let (addGrowing, endGrowing) = (adding, ending)
        adding = .zero
        ending = .zero
        for _ in 0..<frames {
            let start = clock.now
            frame()
            renderer.finish()
            still += clock.now - start
            #expect(renderer.drawCalls <= 1)
            #expect(renderer.uploads == 0)
        }
        let (addStill, endStill) = (adding, ending)
        adding = .zero
        ending = .zero
        // Unchanged but redrawn whole (a buffer of unknown age): the draw without the upload.
        var redrawn: Duration = .zero
        for _ in 0..<frames {
            let start = clock.now
            frame(age: 0)
            renderer.finish()
            redrawn += clock.now - start
            #expect(renderer.drawCalls == 1)
            #expect(renderer.uploads == 0)
        }
        // For scale: as many 2x2 rectangles as segments, redrawn whole.
        let rects = renderer.makeLayer(reserving: 4096)
        var rectsRedrawn: Duration = .zero
        for _ in 0..<frames {
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1), bufferAge: 0)
            for k in 0..<stroke.points.count - 1 {
                renderer.addRect(rects, Rect(x: Float(k % 128) * 2, y: Float(k / 128) * 2, width: 2, height: 2), color: RGBA(1, 1, 1, 0.8))
            }
            let start = clock.now
            renderer.endFrame()
            rectsRedrawn += clock.now - start
        }
        let ms = { (d: Duration) in
            String(format: "%.3f", (Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15) / Double(frames))
        }
        print(
            "[strokes] GLES \(renderer.usesInstancing ? 3 : 2), \(stroke.points.count) points at the end, ms a frame: growing 10 a frame "
                + "\(ms(growing)) (addStroke \(ms(addGrowing)), endFrame \(ms(endGrowing)), the rest appending and finishing); "
                + "unchanged \(ms(still)) (addStroke \(ms(addStill)), endFrame \(ms(endStill)), nothing redrawn); "
                + "unchanged, redrawn whole \(ms(redrawn)) (endFrame \(ms(ending)), the rest finishing); "
                + "as many 2x2 rectangles redrawn whole: endFrame \(ms(rectsRedrawn))")
    }
}
