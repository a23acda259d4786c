import EGLGraphics
import Foundation
import GLESRenderer
import Testing

/// What a live stroke costs per frame: a 2,000-point stroke growing 10 points a frame, laid out
/// each frame. Asserts the draw calls and uploads; prints the times (a line starting "[strokes]",
/// as the Makefile's figure targets print), asserted nowhere.
@Suite("Stroke cost per frame (offscreen, Mesa llvmpipe)", .serialized)
struct StrokeCostTests {
    @Test("a growing 2,000-point stroke: one draw call and one upload a frame; an unchanged one: none", arguments: [3, 2] as [Int32])
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
        func frame() {
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1), bufferAge: 1)
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
        let ms = { (d: Duration) in
            String(format: "%.3f", (Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15) / Double(frames))
        }
        print(
            "[strokes] GLES \(renderer.usesInstancing ? 3 : 2), \(stroke.points.count) points at the end, ms a frame: growing 10 a frame "
                + "\(ms(growing)) (addStroke \(ms(addGrowing)), endFrame \(ms(endGrowing)), the rest appending and finishing); "
                + "unchanged \(ms(still)) (addStroke \(ms(adding)), endFrame \(ms(ending)), nothing redrawn)")
    }
}
