import EGLGraphics
import GLESRenderer
import Testing

@Suite("Cached layers (offscreen, Mesa llvmpipe)", .serialized)
struct CachedLayerTests {
    /// A scene layer (a translucent and an opaque view) under a panel layer: bands with text.
    static func draw(
        _ renderer: Renderer, scene: Renderer.LayerID, panel: Renderer.LayerID, panelAt x: Float,
        layOutPanel: Bool
    ) {
        renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0.07, 0.08, 0.11))
        renderer.addRect(scene, Rect(x: 20, y: 20, width: 90, height: 60), color: RGBA(0.9, 0.4, 0.1, 0.7), cornerRadius: 8)
        renderer.addRect(scene, Rect(x: 60, y: 40, width: 80, height: 80), color: RGBA(0.2, 0.6, 0.9, 1), cornerRadius: 12)
        if layOutPanel {
            renderer.clear(panel)
            renderer.addRect(panel, Rect(x: x, y: 30, width: 120, height: 20), color: RGBA(0, 0, 0, 0.6), cornerRadius: 3)
            renderer.addText(panel, Array("fps 59.9 cached".utf8), x: x + 4, baseline: 45, face: 0, color: RGBA(1, 1, 1, 1))
            renderer.addRect(panel, Rect(x: x, y: 90, width: 30, height: 30), color: RGBA(1, 0, 0, 1))
        }
        renderer.endFrame()
    }

    @Test(
        """
        a cached layer's pixels are within 2/255 of drawing it directly, the same every frame, and its texture is drawn again only when it \
        changes
        """,
        arguments: [3, 2] as [Int32])
    func cachedMatchesDirect(glesVersion: Int32) throws {
        let target = try OffscreenTarget()
        let version = min(glesVersion, target.context.glesMajorVersion)
        let direct = try Renderer(atlas: sharedAtlas, glesMajorVersion: version)
        let directScene = direct.makeLayer(), directPanel = direct.makeLayer()
        direct.setRetained(directPanel, true)
        CachedLayerTests.draw(direct, scene: directScene, panel: directPanel, panelAt: 50, layOutPanel: true)
        let expected = target.pixels()

        let cached = try Renderer(atlas: sharedAtlas, glesMajorVersion: version)
        let scene = cached.makeLayer(), panel = cached.makeLayer()
        cached.setCached(panel, true)
        CachedLayerTests.draw(cached, scene: scene, panel: panel, panelAt: 50, layOutPanel: true)
        let first = target.pixels()
        #expect(cached.uploads == 3)  // the scene's rectangles, the panel's rectangles and glyphs
        var worst = 0
        for i in first.indices { worst = max(worst, abs(Int(first[i]) - Int(expected[i]))) }
        #expect(worst <= 2, "largest difference \(worst)/255")
        // An opaque rectangle of the panel over the scene: exact.
        #expect(first.rgba(65, 105, width: 256) == [255, 0, 0, 255])
        #expect(first.rgba(5, 5, width: 256) == expected.rgba(5, 5, width: 256))

        // Unchanged: composited from the texture (one draw for the scene, one for the panel), no upload.
        for _ in 0..<2 {
            CachedLayerTests.draw(cached, scene: scene, panel: panel, panelAt: 50, layOutPanel: false)
            #expect(cached.uploads == 0)
            #expect(cached.drawCalls == 2)
            #expect(target.pixels() == first)
        }
        // Laid out elsewhere: the texture is drawn again; the old place shows the scene only.
        CachedLayerTests.draw(cached, scene: scene, panel: panel, panelAt: 120, layOutPanel: true)
        let moved = target.pixels()
        #expect(cached.uploads == 2)
        #expect(moved.rgba(135, 105, width: 256) == [255, 0, 0, 255])
        #expect(moved.rgba(65, 105, width: 256) != [255, 0, 0, 255])
        #expect(cached.damage == .region(Rect(x: 50, y: 30, width: 190, height: 90)))
    }
}
