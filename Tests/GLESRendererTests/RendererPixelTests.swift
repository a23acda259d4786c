import EGLGraphics
import GLESRenderer
import Testing

@Suite("Renderer pixels (offscreen, Mesa llvmpipe)", .serialized)
struct RendererPixelTests {
    @Test(
        "a view drawn at a known position and colour is at those pixels, and only there",
        arguments: [3, 2] as [Int32])
    func rectAtPosition(glesVersion: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 1, 1))
        renderer.addRect(layer, Rect(x: 40, y: 30, width: 50, height: 20), color: RGBA(1, 0, 0, 1))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(40, 30, width: 256) == [255, 0, 0, 255])
        #expect(p.rgba(89, 49, width: 256) == [255, 0, 0, 255])
        #expect(p.rgba(65, 40, width: 256) == [255, 0, 0, 255])
        #expect(p.rgba(39, 40, width: 256) == [0, 0, 255, 255])
        #expect(p.rgba(90, 40, width: 256) == [0, 0, 255, 255])
        #expect(p.rgba(65, 29, width: 256) == [0, 0, 255, 255])
        #expect(p.rgba(65, 50, width: 256) == [0, 0, 255, 255])
        #expect(renderer.drawCalls == 1)
        #expect(renderer.usesInstancing == (glesVersion >= 3 && target.context.glesMajorVersion >= 3))
    }

    @Test("rounded corners are transparent, the inside is opaque")
    func roundedCorners() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 0))
        renderer.addRect(layer, Rect(x: 100, y: 100, width: 80, height: 80), color: RGBA(0, 1, 0, 1), cornerRadius: 20)
        renderer.endFrame()
        let p = target.pixels()
        for (x, y) in [(100, 100), (179, 100), (100, 179), (179, 179), (102, 103)] {
            #expect(p.rgba(x, y, width: 256)[3] == 0, "corner pixel (\(x), \(y)) must be transparent")
        }
        for (x, y) in [(140, 140), (100, 140), (179, 140), (140, 100), (140, 179), (115, 115)] {
            #expect(p.rgba(x, y, width: 256) == [0, 255, 0, 255], "(\(x), \(y)) must be opaque green")
        }
        // On the arc the edge is antialiased: partial coverage.
        let arc = p.rgba(105, 106, width: 256)[3]
        #expect(arc > 0 && arc < 255, "arc pixel alpha \(arc)")
    }

    @Test("text pixels equal the glyph atlas coverage exactly")
    func textMatchesGlyphCoverage() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 0))
        let text = Array("Row 123".utf8)
        renderer.addText(layer, text, x: 20, baseline: 60, face: 1, color: RGBA(1, 1, 1, 1))
        renderer.endFrame()
        let p = target.pixels()
        var inked = 0
        let pen = forEachTextPixel(text, x: 20, baseline: 60, face: 1) { byte, x, y, coverage in
            let alpha = p.rgba(x, y, width: 256)[3]
            #expect(abs(Int(alpha) - Int(coverage)) <= 1, "'\(Character(UnicodeScalar(byte)))' at (\(x), \(y))")
            if coverage > 0 { inked += 1 }
        }
        #expect(inked > 100)
        // Nothing drawn outside the text's box.
        #expect(p.rgba(10, 10, width: 256)[3] == 0)
        #expect(p.rgba(Int(pen) + 5, 55, width: 256)[3] == 0)
    }

    @Test("a layer's clip keeps its drawing inside the clip")
    func scissorClip() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let clipped = renderer.makeLayer()
        renderer.setClip(clipped, Rect(x: 50, y: 50, width: 100, height: 40))
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
        renderer.addRect(clipped, Rect(x: 0, y: 0, width: 256, height: 256), color: RGBA(1, 1, 1, 1))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(50, 50, width: 256) == [255, 255, 255, 255])
        #expect(p.rgba(149, 89, width: 256) == [255, 255, 255, 255])
        #expect(p.rgba(49, 60, width: 256) == [0, 0, 0, 255])
        #expect(p.rgba(100, 90, width: 256) == [0, 0, 0, 255])
    }

    @Test("one draw call per layer and kind, whatever the count; unchanged layers are not uploaded")
    func batching() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let views = renderer.makeLayer(reserving: 2000)
        let hud = renderer.makeLayer()
        func frame(shift: Float) {
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 0, 1))
            for i in 0..<2000 {
                renderer.addRect(
                    views, Rect(x: Float(i % 50) * 5 + shift, y: Float(i / 50) * 6, width: 4, height: 4),
                    color: RGBA(1, 0.5, 0, 1), cornerRadius: 2)
            }
            renderer.addText(hud, Array("fps 60".utf8), x: 4, baseline: 250, face: 0, color: RGBA(1, 1, 1, 1))
            renderer.endFrame()
        }
        frame(shift: 0)
        #expect(renderer.drawCalls == 2)  // 2000 rects in one call, the HUD text in another
        #expect(renderer.uploads == 2)
        #expect(renderer.damage == .full)
        frame(shift: 0)
        #expect(renderer.uploads == 0)
        #expect(renderer.damage == .none)
        frame(shift: 1)
        #expect(renderer.uploads == 1)
        guard case .region(let region) = renderer.damage else { Issue.record("expected a damage region"); return }
        #expect(region.x == 0 && region.y == 0)
        #expect(region.width == 250 && region.height == 238)
    }

    @Test("a retained layer is drawn every frame without being laid out or uploaded again, until cleared")
    func retainedLayer() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let panel = renderer.makeLayer()
        renderer.setRetained(panel, true)
        let background = RGBA(0, 0, 1, 1)
        renderer.beginFrame(width: 256, height: 256, clearColor: background)
        renderer.addRect(panel, Rect(x: 10, y: 10, width: 20, height: 20), color: RGBA(1, 0, 0, 1))
        renderer.endFrame()
        #expect(renderer.uploads == 1)
        #expect(target.pixels().rgba(20, 20, width: 256) == [255, 0, 0, 255])
        // Next frames add nothing: the panel is still drawn, from its buffer.
        for _ in 0..<2 {
            renderer.beginFrame(width: 256, height: 256, clearColor: background)
            renderer.endFrame()
            #expect(renderer.rectCount(panel) == 1)
            #expect(renderer.uploads == 0)
            #expect(renderer.damage == .none)
            #expect(target.pixels().rgba(20, 20, width: 256) == [255, 0, 0, 255])
        }
        // Cleared and laid out elsewhere: the old place is background, the new one red, damage covers both.
        renderer.beginFrame(width: 256, height: 256, clearColor: background)
        renderer.clear(panel)
        renderer.addRect(panel, Rect(x: 100, y: 10, width: 20, height: 20), color: RGBA(1, 0, 0, 1))
        renderer.endFrame()
        let p = target.pixels()
        #expect(p.rgba(20, 20, width: 256) == [0, 0, 255, 255])
        #expect(p.rgba(110, 20, width: 256) == [255, 0, 0, 255])
        #expect(renderer.uploads == 1)
        #expect(renderer.damage == .region(Rect(x: 10, y: 10, width: 110, height: 20)))
        // Cleared and left empty: nothing drawn.
        renderer.beginFrame(width: 256, height: 256, clearColor: background)
        renderer.clear(panel)
        renderer.endFrame()
        #expect(target.pixels().rgba(110, 20, width: 256) == [0, 0, 255, 255])
    }

    @Test("a context keeps working after another on the same EGL display is gone")
    func sharedDisplay() throws {
        let target = try OffscreenTarget()
        do {
            let other = try OffscreenTarget()
            _ = other.pixels()
        }  // `other` ends here; the surfaceless display is shared and must stay initialised
        try target.surface.beginFrame()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 1, 1))
        renderer.addRect(layer, Rect(x: 10, y: 10, width: 20, height: 20), color: RGBA(0, 1, 0, 1))
        renderer.endFrame()
        #expect(target.pixels().rgba(15, 15, width: 256) == [0, 255, 0, 255])
    }

    @Test("instanced (GLES 3) and streamed (GLES 2) paths draw identical pixels")
    func pathsAgree() throws {
        let target = try OffscreenTarget()
        guard target.context.glesMajorVersion >= 3 else { return }
        func render(_ version: Int32) throws -> [UInt8] {
            let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: version)
            let layer = renderer.makeLayer()
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0.1, 0.1, 0.1, 1))
            for i in 0..<40 {
                renderer.addRect(
                    layer, Rect(x: Float(i * 6), y: Float(i * 5), width: 30, height: 18),
                    color: RGBA(Float(i) / 40, 0.4, 0.8, 0.7), cornerRadius: 6)
            }
            renderer.addText(layer, Array("Hello 42".utf8), x: 30, baseline: 200, face: 1, color: RGBA(1, 1, 0, 1))
            renderer.endFrame()
            return target.pixels()
        }
        #expect(try render(3) == render(2))
    }
}
