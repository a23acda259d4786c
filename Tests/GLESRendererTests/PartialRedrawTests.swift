import DisplayLinkCore
import EGLGraphics
import GLESRenderer
import Motion
import Scenes
import Testing

/// The opaque front-to-back pass and partial redraw change what the rasteriser does, never the
/// pixels: each frame of a run drawn with them equals, pixel for pixel, the same frame drawn
/// whole and blended in order.
///
/// A swap chain is simulated with pbuffers (each keeps what was drawn into it): frame k is drawn
/// into buffer k mod n, whose age is then n (0 for its first use), as EGL_EXT_buffer_age would
/// say for an n-buffer chain; the reference renderer draws every frame whole into its own pbuffer.
@MainActor
@Suite("Partial redraw and the opaque pass", .serialized)
struct PartialRedrawTests {
    /// Frame `i` of a 60 Hz run.
    static func frame(_ i: Int) -> DisplayFrame {
        DisplayFrame(
            timestamp: MonotonicInstant(nanoseconds: 1_000_000_000 + Int64(i) * 16_000_000),
            targetTimestamp: MonotonicInstant(nanoseconds: 1_016_000_000 + Int64(i) * 16_000_000),
            duration: Nanoseconds(16_000_000), delta: Nanoseconds(i == 0 ? 0 : 16_000_000),
            sequence: UInt64(i), missedFrames: 0, provenance: .hardwareVBlank,
            refreshIndex: UInt64(i), frameInterval: 1)
    }

    /// One renderer with its scene and HUD, drawing into its own buffers.
    struct Side {
        let renderer: Renderer
        let scene: Scene
        let hud: HUDOverlay
        let buffers: [EGLWindowSurface]
    }

    /// Runs `frames` frames of a scene on both sides and compares each. `moves(i)`: whether the
    /// scene advances in frame i (a still frame changes only the HUD, or nothing).
    /// Returns how many rectangles the tested side left out as hidden, over all frames.
    @discardableResult
    /// `warmsUp`: the tested side first draws a warm-up frame as the demo does before its first
    /// frame (``Renderer/warmUp(partialRedraws:)`` after the scene and HUD, into its first buffer, never shown).
    func compare(
        width: Int32, height: Int32, chain: Int, frames: Int, moves: (Int) -> Bool, warmsUp: Bool = false,
        before: (Int, Scene) -> Void = { _, _ in }, after: (Int, Scene) -> Void = { _, _ in },
        makeScene: (Renderer, _ tested: Bool) -> Scene
    ) throws -> Int {
        let context = try EGLDisplayContext(platform: .surfaceless, alpha: true)
        func side(buffers count: Int, fast: Bool) throws -> Side {
            let buffers = try (0..<count).map { _ in
                try EGLWindowSurface(context: context, pbufferWidth: width, height: height)
            }
            try buffers[0].beginFrame()
            let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: context.glesMajorVersion)
            renderer.usesDepthPass = fast
            renderer.usesPartialRedraw = fast
            renderer.partialRedrawMaximumCoverage = 1  // every region in part: the partial path is what is compared
            renderer.depthPassMinimumOverdraw = 0  // the opaque pass in every frame, however sparse
            return Side(renderer: renderer, scene: makeScene(renderer, fast), hud: HUDOverlay(renderer: renderer), buffers: buffers)
        }
        let reference = try side(buffers: 1, fast: false)
        let tested = try side(buffers: chain, fast: true)
        var hudValues = HUDValues()
        if warmsUp {
            try tested.buffers[0].beginFrame()
            tested.renderer.beginFrame(width: width, height: height, clearColor: tested.scene.background)
            tested.scene.draw()
            tested.hud.draw(hudValues)
            tested.renderer.warmUp(partialRedraws: true)
        }
        var partialFrames = 0, skippedFrames = 0, depthFrames = 0, hidden = 0
        var time = 0
        for i in 0..<frames {
            if moves(i) { time += 1 }
            let frame = PartialRedrawTests.frame(time)
            // The HUD's values change when the half-second window ends (every 32 moving frames).
            if moves(i) { hudValues.record(frame) }
            var images: [[UInt8]] = []
            for (s, fast) in [(reference, false), (tested, true)] {
                let buffer = s.buffers[i % s.buffers.count]
                try buffer.beginFrame()
                before(i, s.scene)
                if moves(i) { s.scene.update(frame) }
                let age = fast ? (i < chain ? 0 : chain) : 0
                s.renderer.beginFrame(width: width, height: height, clearColor: s.scene.background, bufferAge: age)
                s.scene.draw()
                s.hud.draw(hudValues)
                s.renderer.endFrame()
                if fast {
                    after(i, s.scene)
                    if case .region = s.renderer.redrawn { partialFrames += 1 }
                    if s.renderer.redrawn == .none { skippedFrames += 1 }
                    if s.renderer.usedDepthPass { depthFrames += 1 }
                    hidden += s.renderer.hiddenRects
                }
                images.append(Renderer.readPixels(width: width, height: height))
            }
            let mismatches = zip(images[0], images[1]).lazy.filter { $0 != $1 }.count
            #expect(mismatches == 0, "frame \(i): \(mismatches) bytes differ (redrawn: \(tested.renderer.redrawn))")
            if mismatches > 0 {
                let rows = Set(
                    zip(images[0], images[1]).enumerated().filter { $0.element.0 != $0.element.1 }.map { $0.offset / (Int(width) * 4) })
                let sample = (tested.scene as? ScrollScene).map { "offset \($0.pixelOffset) drawn \($0.rowCache?.rowsDrawn ?? -1)" } ?? ""
                let firsts = zip(images[0], images[1]).enumerated().filter { $0.element.0 != $0.element.1 }.prefix(12).map {
                    "\($0.offset % (Int(width) * 4) / 4),\($0.offset / (Int(width) * 4)):c\($0.offset % 4) \($0.element.0)/\($0.element.1)"
                }
                Issue.record("rows differing: \(rows.sorted()) \(sample) \(firsts)")
                return hidden
            }
        }
        // The run exercised what it claims to: every frame used the depth pass, and still frames
        // were redrawn in part or not at all.
        #expect(depthFrames == frames)
        #expect(partialFrames + skippedFrames > 0)
        return hidden
    }

    @Test(
        "bounce frames (60 and 2,000 views, HUD) are pixel-exact with the opaque pass and buffer ages 1 to 3",
        arguments: [(60, 1), (60, 2), (2000, 3)])
    func bounce(views: Int, chain: Int) throws {
        let hidden = try compare(width: 200, height: 150, chain: chain, frames: 48, moves: { $0 % 12 < 8 }) { renderer, _ in
            BounceScene(renderer: renderer, views: views, width: 200, height: 150, seed: 7)
        }
        // 2,000 views on 200x150 overlap many times: most are hidden and left out.
        if views >= 2000 { #expect(hidden > 0) }
    }

    @Test(
        "scroll frames (rows moving, then still) are pixel-exact with the opaque pass and buffer ages 1 and 2",
        arguments: [1, 2])
    func scroll(chain: Int) throws {
        try compare(width: 240, height: 200, chain: chain, frames: 40, moves: { $0 < 30 }) { renderer, _ in
            ScrollScene(
                renderer: renderer, rows: 300, width: 240, height: 200, duration: 0.4,
                curve: .easeInOut, cachesRows: false)
        }
    }

    /// The row cache (ScrollCache) against drawing every row every frame. Both sides draw the list
    /// at the same offsets: the eased offset (fractional) snapped down to whole pixels, as the
    /// cache needs. The reference draws every row into a renderer layer, whole, blended in order;
    /// the tested side draws rows into the cache only as they scroll in, copies it, and adds the
    /// opaque pass and partial redraw with buffer ages 1 to 3. Scrolls down, then back up (toggled
    /// mid-scroll), then stands still, with the HUD over the list changing twice a second.
    @Test(
        "scroll frames drawn through the row cache are pixel-exact (down, back up, still; buffer ages 1 to 3)",
        arguments: [(0.4, 1), (3.0, 1), (3.0, 2), (3.0, 3), (12.0, 2)])
    func scrollCache(duration: Double, chain: Int) throws {
        var partialCacheFrames = 0, copiedOnlyFrames = 0, fractional = 0
        try compare(
            width: 240, height: 200, chain: chain, frames: 56, moves: { $0 < 44 },
            before: { i, scene in if i == 26 { scene.toggleScroll() } },
            after: { _, scene in
                guard let scene = scene as? ScrollScene, let cache = scene.rowCache else { return }
                if let offset = scene.scrollSample?.offset, offset != offset.rounded(.down) { fractional += 1 }
                if cache.rowsDrawn == 0 { copiedOnlyFrames += 1 }
                if cache.rowsDrawn > 0 && cache.rowsDrawn < Int(cache.clip.height) { partialCacheFrames += 1 }
            }
        ) { renderer, tested in
            let scene = ScrollScene(
                renderer: renderer, rows: 300, width: 240, height: 200, duration: duration,
                curve: .easeInOut, cachesRows: tested)
            #expect(scene.cachesRows == tested)
            return scene
        }
        // The run exercised the cache: eased offsets between pixels, frames that drew only the rows
        // scrolled in (the slower scrolls), and frames that only copied (standing still).
        #expect(fractional > 0)
        #expect(copiedOnlyFrames > 0)
        if duration > 1 { #expect(partialCacheFrames > 0) }
    }

    /// The warm-up takes the paths of later frames (partial redraws, cached layers drawn within
    /// them, the row cache's strips and ring copies) with the first frame's contents, then leaves
    /// every cache as it found it: the frames after it are the same, pixel for pixel.
    @Test("frames after a warm-up are pixel-exact (bounce with HUD; scroll through the row cache)")
    func afterWarmUp() throws {
        try compare(width: 200, height: 150, chain: 2, frames: 40, moves: { $0 % 12 < 8 }, warmsUp: true) { renderer, _ in
            BounceScene(renderer: renderer, views: 60, width: 200, height: 150, seed: 7)
        }
        var rowsDrawn: [Int] = []
        try compare(
            width: 240, height: 200, chain: 2, frames: 40, moves: { $0 < 30 }, warmsUp: true,
            after: { _, scene in (scene as? ScrollScene)?.rowCache.map { rowsDrawn.append($0.rowsDrawn) } }
        ) { renderer, tested in
            ScrollScene(renderer: renderer, rows: 300, width: 240, height: 200, duration: 3, curve: .easeInOut, cachesRows: tested)
        }
        // The cache was used, and its first frame drew only the rows it scrolled in (here 1 of the
        // view's 200): the ring held the warm-up's last frame at the list's start, not the
        // warm-up's scrolled strips.
        #expect(rowsDrawn.count == 40)
        #expect(rowsDrawn.first == 1)
    }

    /// The row cache redraws the rows that scrolled in and nothing else, also in frames where
    /// pieces of rows leave the view at the top while others enter at the bottom (which once
    /// made one run over the whole view: every frame of a fast scroll redrew every row).
    @Test("a scroll through the row cache draws only the rows that scrolled in")
    func scrollCacheDrawsOnlyNewRows() throws {
        let context = try EGLDisplayContext(platform: .surfaceless, alpha: true)
        let buffer = try EGLWindowSurface(context: context, pbufferWidth: 240, height: 200)
        try buffer.beginFrame()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: context.glesMajorVersion)
        let scene = ScrollScene(renderer: renderer, rows: 300, width: 240, height: 200, duration: 1, curve: .linear)
        let cache = try #require(scene.rowCache)
        var drawn: [Int] = []
        for i in 0..<40 {
            scene.setOffset(Double(i * 7))
            renderer.beginFrame(width: 240, height: 200, clearColor: scene.background)
            scene.draw()
            renderer.endFrame()
            drawn.append(cache.rowsDrawn)
        }
        #expect(drawn.first == Int(cache.clip.height))
        #expect(Array(drawn.dropFirst()) == Array(repeating: 7, count: 39))
    }

    /// A region over most of the surface is redrawn whole, as a fast clear and the same pixels,
    /// rather than cleared under a scissor (which llvmpipe draws through its fragment shader).
    @Test(
        """
        a rectangle that moves within a quarter of a 100x100 surface (buffer age 1) is redrawn in part; one whose old and new places \
        span 60 % of it is redrawn whole, unless the largest share redrawn in part is raised to 1; the pixels are the same either way
        """)
    func mostOfTheSurfaceIsRedrawnWhole() throws {
        let target = try OffscreenTarget(width: 100, height: 100)
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        let black = RGBA(0, 0, 0, 1), white = RGBA(1, 1, 1, 1)
        func draw(_ rect: Rect) -> (Renderer.Damage, [UInt8]) {
            renderer.beginFrame(width: 100, height: 100, clearColor: black, bufferAge: 1)
            renderer.addRect(layer, rect, color: white)
            renderer.endFrame()
            return (renderer.redrawn, target.pixels())
        }
        _ = draw(Rect(x: 0, y: 0, width: 10, height: 10))
        #expect(draw(Rect(x: 20, y: 20, width: 10, height: 10)).0 == .region(Rect(x: 0, y: 0, width: 30, height: 30)))
        let (whole, wholePixels) = draw(Rect(x: 50, y: 0, width: 30, height: 100))  // with the old place: 60x100
        #expect(whole == .full)
        _ = draw(Rect(x: 20, y: 20, width: 10, height: 10))
        renderer.partialRedrawMaximumCoverage = 1
        let (part, partPixels) = draw(Rect(x: 50, y: 0, width: 30, height: 100))
        #expect(part == .region(Rect(x: 20, y: 0, width: 60, height: 100)))
        #expect(partPixels == wholePixels)
    }
}
