import Foundation
import Testing
import Scenes

/// The images scene's layout (``ImageField``) and the stroke scene's growth, without a GL
/// context: what each frame draws follows from the time (images) or the frame count (stroke)
/// alone. The scenes drawn in the demo are in DemoAllocationTests and the `--frames` runs below.
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
}
