import Foundation
import Testing
import GLESRenderer
import Scenes

/// The images scene's layout (``ImageField``) and the stroke scene's growth, without a GL
/// context: what each frame draws follows from the time (images) or the frame count (stroke)
/// alone. The scenes as the demo draws them are in DemoAllocationTests.
@Suite("The images and stroke scenes")
struct DemoImagesStrokeTests {
    @Test("the images' layout is a pure function of time: the same at a time however reached, within the bounds, the same per seed")
    func imageLayoutIsAFunctionOfTime() {
        let field = ImageField(count: 200, width: 250, height: 250, seed: 1)
        #expect(field.sprites == ImageField(count: 200, width: 250, height: 250, seed: 1).sprites)
        #expect(field.sprites != ImageField(count: 200, width: 250, height: 250, seed: 2).sprites)
        // 60 frames at 60 Hz and 30 at 30 Hz reach the same second: the scene sums the deltas.
        let at60 = (0..<60).reduce(0.0) { t, _ in t + 1.0 / 60 }
        let at30 = (0..<30).reduce(0.0) { t, _ in t + 1.0 / 30 }
        for i in field.sprites.indices {
            let (a, b) = (field.placement(i, at: at60), field.placement(i, at: at30))
            #expect(abs(a.rect.x - b.rect.x) < 1e-3 && abs(a.rect.y - b.rect.y) < 1e-3, "image \(i)")
            #expect(abs(a.rect.width - b.rect.width) < 1e-3 && abs(a.opacity - b.opacity) < 1e-4, "image \(i)")
        }
        for t in stride(from: 0.0, through: 120, by: 0.37) {
            for i in field.sprites.indices {
                let p = field.placement(i, at: t)
                #expect(p.rect.x >= 0 && p.rect.y >= 0 && p.rect.x + p.rect.width <= 250.01 && p.rect.y + p.rect.height <= 250.01)
                #expect(p.opacity > 0 && p.opacity <= 1)
            }
        }
        // In blocks of one picture, so a frame costs one draw call per picture.
        let pictures = field.sprites.map(\.image)
        #expect(pictures == pictures.sorted())
        #expect(Set(pictures).count == ImagePatterns.count)
        #expect(field.sprites.contains { $0.source != nil } && field.sprites.contains { $0.tint != field.sprites[0].tint })
    }

    @Test("each picture is side×side RGBA pixels, and the four differ")
    func picturesAreDistinct() {
        let pictures = (0..<ImagePatterns.count).map(ImagePatterns.rgba)
        #expect(pictures.allSatisfy { $0.count == ImagePatterns.side * ImagePatterns.side * 4 })
        #expect(Set(pictures).count == ImagePatterns.count)
    }

    @Test("the stroke has min(10·N, 2000) points after N frames, then starts over, appended to in place")
    func strokeGrowsAndStartsOver() {
        var polyline = GrowingPolyline(width: 250, height: 250, color: RGBA(1, 1, 1))
        // Full before the first frame: its arrays sized once, at set-up.
        #expect(polyline.stroke.points.count == 2000)
        let capacity = polyline.stroke.points.capacity
        for n in 1...450 {
            polyline.step()
            let expected = ((n - 1) % 200 + 1) * 10
            #expect(polyline.count == expected, "after \(n) frames")
            #expect(polyline.stroke.points.count == expected, "after \(n) frames")
            #expect(polyline.stroke.points.capacity == capacity, "after \(n) frames")
        }
        // Each cycle walks the same curve, its points a few points apart and within the bounds.
        let points = polyline.stroke.points
        #expect(points.first == polyline.point(0))
        for (a, b) in zip(points, points.dropFirst()) {
            let d = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
            #expect(d > 0 && d < 3)
        }
        #expect(points.allSatisfy { $0.x >= 0 && $0.x <= 250 && $0.y >= 0 && $0.y <= 250 })
    }
}
