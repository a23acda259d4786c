internal import CGLES

/// A scrolled list's contents cached in a texture, as toolkits scroll: each row is drawn when it
/// becomes visible or changes, and every frame the cache is copied onto the screen under the
/// renderer's layers.
///
/// The owner adds its contents each frame exactly as it would add them to a clipped renderer layer
/// (screen pixels, top-left origin), between ``begin(offset:clearColor:)`` and the renderer's
/// ``Renderer/endFrame()``, together with the scroll offset they were laid out at. The cache
/// keeps them in content coordinates (the clip's top-left at offset 0), and holds the pixels of
/// one clip-sized window of the content in a ring texture (content row `y` in ring row
/// `y mod height`). At ``Renderer/endFrame()`` it draws only
/// - the content rows that scrolled into the window since the ring was last drawn, and
/// - the rows of anything that was added, removed or changed since then (compared instance by
///   instance in content coordinates),
/// each after clearing its rows, with the renderer's own shaders at exactly the screen positions
/// and viewport the renderer would draw them at (into a screen-sized scratch texture, so that
/// the rasteriser computes the very same pixels), and copies those rows into the ring. Then,
/// after the renderer cleared what it redraws, the window is copied from the ring onto the clip
/// with `glBlitFramebuffer` (same size, nearest: exact copies), before any layer is drawn. What
/// the screen shows equals drawing the contents into a layer with that clip as the renderer's
/// first layer.
///
/// Requirements (else the pixels would not be exact): whole-pixel offsets (the owner snaps its
/// scroll to whole pixels, as toolkits do), a clip on whole pixels, and no earlier layer drawing
/// under the clip (the cache is drawn over the clear colour only). GLES 3 (`glBlitFramebuffer`):
/// ``init(renderer:clip:)`` returns nil on GLES 2.
///
/// Per frame nothing is allocated once the arrays have grown to the contents' size.
public final class ScrollCache {
    /// The renderer's glyphs.
    public var atlas: GlyphAtlas { shared.atlas }
    /// The clip on screen, whole pixels.
    public private(set) var clip: Rect
    /// Content rows drawn into the ring by the last ``Renderer/endFrame()`` (0: only copied).
    public private(set) var rowsDrawn = 0

    private static let rectFloats = RectGlyphPrograms.rectFloats
    private static let glyphFloats = RectGlyphPrograms.glyphFloats
    /// The textures' format, the first the driver takes and renders to (``RenderTarget``), for
    /// the ring and the scratch texture alike. BGRA where the driver renders into it: the layout
    /// of scanout buffers (XRGB8888), so that a software rasteriser copies the ring onto them row
    /// by row (llvmpipe's blit takes its copy path only between formats that differ in nothing
    /// but an unused alpha, and without a flip) instead of sampling it pixel by pixel; and the
    /// same format in both, so that new rows go from the scratch texture into the ring by that
    /// copy path too (row by row: see updateRing(width:height:)). The scratch
    /// texture has a depth buffer it never uses, only so that llvmpipe rasterises into it as
    /// into a window (see ``RenderTarget/allocate(width:height:formats:depth:)``): without one,
    /// its scissored clears of a BGRA texture round differently from those of the window.
    private static let formats: [(GLint, GLint)] = [(GL_BGRA_EXT, GL_BGRA_EXT), (GL_RGBA8, GL_RGBA)]

    private var offset = 0
    private var clearColor = RGBA(0, 0, 0, 0)
    /// This frame's contents in content coordinates, and the contents the ring holds.
    private var rects = ContiguousArray<Float>()
    private var glyphs = ContiguousArray<Float>()
    private var ringRects = ContiguousArray<Float>()
    private var ringGlyphs = ContiguousArray<Float>()
    /// The offset and clear colour the ring was drawn at; nil: it holds nothing usable.
    private var ringOffset: Int?
    private var ringClear = RGBA(0, 0, 0, 0)
    /// Whether this frame's contents are in the ring (a second endFrame of one frame copies only).
    private var applied = false
    /// Instances translated into the ring for one strip (reused).
    private var strip = ContiguousArray<Float>()

    /// The renderer's programs, quad and atlas texture: the rows are drawn as its layers are.
    private let shared: SharedGPUResources
    private let programs: RectGlyphPrograms
    private let cornerBuffer: GLuint
    private var instanceBuffer: GLuint = 0
    private var ring = RenderTarget()
    private var ringWidth: Int32 = 0
    private var ringHeight: Int32 = 0
    /// Rows are drawn here first, at their screen positions: screen-sized.
    private var scratch = RenderTarget()
    private var scratchWidth: Int32 = 0
    private var scratchHeight: Int32 = 0

    /// Makes the cache in the current GL context and puts it under `renderer`'s layers (one cache
    /// per renderer). Nil on GLES 2 (no framebuffer blits) or when the driver refuses the texture.
    public init?(renderer: Renderer, clip: Rect) {
        guard renderer.usesInstancing else { return nil }
        self.clip = clip
        shared = renderer.shared
        programs = shared.programs
        cornerBuffer = shared.cornerBuffer
        glGenBuffers(1, &instanceBuffer)
        guard resizeRing(), glGetError() == GL_NO_ERROR else {
            release()
            return nil
        }
        renderer.backdrop = self
    }

    deinit { release() }

    private func release() {
        glDeleteBuffers(1, &instanceBuffer)
        ring.delete()
        scratch.delete()
    }

    /// The clip in whole pixels as the renderer scissors a layer's clip: (x, y, width, height).
    private var pixelClip: (Int32, Int32, Int32, Int32) {
        (Int32(clip.x), Int32(clip.y), max(0, Int32(clip.width)), max(0, Int32(clip.height)))
    }

    /// (Re)allocates the ring for the clip's size; the ring then holds nothing.
    private func resizeRing() -> Bool {
        let (_, _, w, h) = pixelClip
        ringOffset = nil
        guard w != ringWidth || h != ringHeight else { return true }
        ringWidth = w
        ringHeight = h
        guard w > 0, h > 0 else { return true }
        return ring.allocate(width: w, height: h, formats: ScrollCache.formats)
    }

    /// Moves the clip (from this frame on); a new size reallocates the ring.
    public func setClip(_ clip: Rect) {
        guard clip != self.clip else { return }
        self.clip = clip
        if !resizeRing() { ringWidth = 0; ringHeight = 0 }
    }

    /// Starts this frame's contents, laid out at `offset` (whole pixels) over `clearColor`.
    public func begin(offset: Int, clearColor: RGBA) {
        if applied {
            swap(&rects, &ringRects)
            swap(&glyphs, &ringGlyphs)
        }
        rects.removeAll(keepingCapacity: true)
        glyphs.removeAll(keepingCapacity: true)
        self.offset = offset
        self.clearColor = clearColor
        applied = false
    }

    /// Whether a rectangle (screen pixels) shows in the clip.
    @inline(__always)
    private func shows(_ x: Float, _ y: Float, _ w: Float, _ h: Float) -> Bool {
        w > 0 && h > 0 && x < clip.x + clip.width && y < clip.y + clip.height && x + w > clip.x && y + h > clip.y
    }

    /// A filled rectangle with rounded corners, in screen pixels at this frame's offset (as
    /// ``Renderer/addRect(_:_:color:cornerRadius:)``).
    public func addRect(_ rect: Rect, color: RGBA, cornerRadius: Float = 0) {
        guard shows(rect.x, rect.y, rect.width, rect.height) else { return }
        InstanceEncoder.appendRect(
            x: rect.x - Float(pixelClip.0), y: rect.y - Float(pixelClip.1) + Float(offset),
            width: rect.width, height: rect.height, color: color, cornerRadius: cornerRadius, to: &rects)
    }

    /// Text, in screen pixels at this frame's offset (as
    /// `Renderer.addText(_:_:x:baseline:face:color:)`). Returns the advance width.
    @discardableResult
    public func addText<S: StringProtocol>(_ text: S, x: Float, baseline: Float, face: Int, color: RGBA) -> Float {
        addText(scalars: text.unicodeScalars, x: x, baseline: baseline, face: face, color: color)
    }

    /// UTF-8 text (each ill-formed sequence as U+FFFD), as `addText(_:x:baseline:face:color:)` with a `String`.
    @discardableResult
    public func addText<C: Collection>(_ text: C, x: Float, baseline: Float, face: Int, color: RGBA) -> Float
    where C.Element == UInt8 {
        addText(scalars: UTF8Scalars(text), x: x, baseline: baseline, face: face, color: color)
    }

    private func addText<S: Sequence>(scalars: S, x: Float, baseline: Float, face: Int, color: RGBA) -> Float
    where S.Element == Unicode.Scalar {
        let dx = Float(pixelClip.0), dy = Float(offset) - Float(pixelClip.1)
        return InstanceEncoder.layOutText(scalars, atlas: atlas, face: face, x: x, baseline: baseline) { glyph, gx, gy, w, h in
            guard shows(gx, gy, w, h) else { return }
            InstanceEncoder.appendGlyph(glyph, x: gx - dx, y: gy + dy, color: color, to: &glyphs)
        }
    }

    // MARK: Called by the renderer's endFrame

    /// Brings the ring up to this frame's contents; returns the screen region whose pixels change
    /// (nil: none). Leaves the framebuffer bindings as it found them.
    func updateRing(width: Int32, height: Int32) -> Bounds? {
        guard !applied else { return nil }
        applied = true
        let (cx, cy, w, h) = pixelClip
        if width != scratchWidth || height != scratchHeight {
            scratchWidth = width
            scratchHeight = height
            if width <= 0 || height <= 0 || !scratch.allocate(width: width, height: height, formats: ScrollCache.formats, depth: true) {
                scratchWidth = 0
                scratchHeight = 0
            }
        }
        guard w > 0, h > 0, ringWidth == w, ringHeight == h, scratchWidth > 0,
            cx >= 0, cy >= 0, cx + w <= width, cy + h <= height
        else {
            // Nothing to draw (or no storage for it): the clip shows the clear colour.
            rowsDrawn = 0
            ringOffset = nil
            return nil
        }
        let runs = ScrollRowDiff.rowsToRedraw(
            offset: offset, height: Int(h), ringOffset: ringClear == clearColor ? ringOffset : nil,
            rects: rects, ringRects: ringRects, glyphs: glyphs, ringGlyphs: ringGlyphs)
        let count = runs.count
        let moved = ringOffset != offset
        ringOffset = offset
        ringClear = clearColor
        rowsDrawn = 0
        if count > 0 {
            var drawFramebuffer: GLint = 0, readFramebuffer: GLint = 0
            glGetIntegerv(GLenum(GL_DRAW_FRAMEBUFFER_BINDING), &drawFramebuffer)
            glGetIntegerv(GLenum(GL_READ_FRAMEBUFFER_BINDING), &readFramebuffer)
            glViewport(0, 0, width, height)
            glDisable(GLenum(GL_DEPTH_TEST))
            glClearColor(clearColor.r * clearColor.a, clearColor.g * clearColor.a, clearColor.b * clearColor.a, clearColor.a)
            for k in 0..<count {
                // The run's rows at their screen positions, into the scratch texture.
                let s0 = Int32(runs[k].0 - offset) + cy, s1 = Int32(runs[k].1 - offset) + cy
                glBindFramebuffer(GLenum(GL_FRAMEBUFFER), scratch.framebuffer)
                glEnable(GLenum(GL_SCISSOR_TEST))
                glScissor(cx, height - s1, w, s1 - s0)
                drawStrip(from: runs[k].0, to: runs[k].1, screenTop: cy)
                glDisable(GLenum(GL_SCISSOR_TEST))
                // Then into the ring, split where it wraps around.
                glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), scratch.framebuffer)
                glBindFramebuffer(GLenum(GL_DRAW_FRAMEBUFFER), ring.framebuffer)
                var y = runs[k].0
                while y < runs[k].1 {
                    let base = ScrollCache.floorDiv(y, Int(h)) * Int(h)
                    let end = min(runs[k].1, base + Int(h))
                    let r0 = Int32(y - base), r1 = Int32(end - base)
                    let t0 = Int32(y - offset) + cy
                    // Mirrored, as the ring is stored top row first (see copyWindow(into:height:)),
                    // and the scratch texture bottom row first: one blit per row, as a mirrored
                    // blit between two textures is a flip for the driver, which llvmpipe does by
                    // sampling every pixel with a shader; a one-row blit is a straight copy
                    // (memcpy of the row).
                    for i in 0..<(r1 - r0) {
                        glBlitFramebuffer(
                            cx, height - t0 - i - 1, cx + w, height - t0 - i, 0, r0 + i, w, r0 + i + 1,
                            GLbitfield(GL_COLOR_BUFFER_BIT), GLenum(GL_NEAREST))
                    }
                    rowsDrawn += end - y
                    y = end
                }
            }
            glBindFramebuffer(GLenum(GL_DRAW_FRAMEBUFFER), GLuint(drawFramebuffer))
            glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), GLuint(readFramebuffer))
        }
        // The ring holds this frame's contents now: begin() makes them the reference (a swap).
        var changed = Bounds()
        if moved {
            changed.add(Float(cx), Float(cy), Float(w), Float(h))
        } else if rowsDrawn > 0 {
            for k in 0..<count {
                changed.add(Float(cx), Float(cy) + Float(runs[k].0 - offset), Float(w), Float(runs[k].1 - runs[k].0))
            }
        }
        return changed.isEmpty ? nil : changed
    }

    /// Takes, once, the paths a scroll takes after the first frame, with this frame's contents (the
    /// renderer's ``Renderer/warmUp(partialRedraws:)`` calls it before its own frames): rows brought in at the
    /// bottom and at the top as strips (scissored clears and draws into the scratch texture, row
    /// copies into the ring, split where it wraps), and the window copied onto the screen in two
    /// pieces. Drivers build code for each state they meet, which would otherwise stall the
    /// first frames that scroll a pixel.
    /// Draws into the current framebuffer (a warm-up frame, never presented), then leaves the
    /// cache as it found it, holding nothing, so that the next frame draws the whole window.
    func warmUp(width: Int32, height: Int32) {
        let h = Int(pixelClip.3)
        guard h > 1, !applied else { return }
        let (contentRects, contentGlyphs, start) = (rects, glyphs, offset)
        // The contents moved down the content by `shift` rows (same screen positions), the ring
        // holding them as at `from` rows earlier: a scroll by `shift - from` rows.
        for (shift, from) in [(1, 0), (min(7, h - 1), 1), (1, min(7, h - 1))] {
            rects = contentRects
            glyphs = contentGlyphs
            for i in Swift.stride(from: 1, to: rects.count, by: ScrollCache.rectFloats) { rects[i] += Float(shift) }
            for i in Swift.stride(from: 1, to: glyphs.count, by: ScrollCache.glyphFloats) { glyphs[i] += Float(shift) }
            ringRects = rects
            ringGlyphs = glyphs
            offset = start + shift
            ringOffset = start + from
            ringClear = clearColor
            applied = false
            _ = updateRing(width: width, height: height)
            let (cx, cy, w, ch) = pixelClip
            copyWindow(into: (cx, cy, cx + w, cy + ch), height: height)
        }
        crossEdges(width: width, height: height)
        rects = contentRects
        glyphs = contentGlyphs
        ringRects.removeAll(keepingCapacity: true)
        ringGlyphs.removeAll(keepingCapacity: true)
        offset = start
        ringOffset = nil
        applied = false
    }

    /// Draws a rectangle and a glyph across each edge of the scratch texture, as the rows of a
    /// list that fills the window are drawn half scrolled out at the top or bottom: the driver
    /// clips those with code of its own, and builds it for this target too (the renderer's warm-up
    /// draws into the window, never into the scratch texture's format; llvmpipe keys its shader
    /// variants on the target's format as well as the program).
    private func crossEdges(width: Int32, height: Int32) {
        guard scratchWidth > 0 else { return }
        var drawFramebuffer: GLint = 0, readFramebuffer: GLint = 0
        glGetIntegerv(GLenum(GL_DRAW_FRAMEBUFFER_BINDING), &drawFramebuffer)
        glGetIntegerv(GLenum(GL_READ_FRAMEBUFFER_BINDING), &readFramebuffer)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), scratch.framebuffer)
        glViewport(0, 0, width, height)
        glDisable(GLenum(GL_DEPTH_TEST))
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(0, 0, width, height)
        glEnable(GLenum(GL_BLEND))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
        let w = Float(width), h = Float(height)
        let places: [(Float, Float)] = [(-10, h / 2), (w - 10, h / 2), (w / 2, -10), (w / 2, h - 10)]
        strip.removeAll(keepingCapacity: true)
        for (x, y) in places { strip.append(contentsOf: [x, y, 20, 20, 0.5, 0, 0, 0.5, 4]) }
        programs.rect.use(viewport: (w, h), depth: (0, 0))
        drawGathered(floats: ScrollCache.rectFloats, attributes: RectGlyphPrograms.rectAttributes)
        let g = atlas.faces[0].glyph(UInt8(ascii: "W"))
        if g.width > 0 && g.height > 0 {
            let gw = Float(g.width), gh = Float(g.height)
            strip.removeAll(keepingCapacity: true)
            for (x, y) in places {
                strip.append(contentsOf: [x, y, gw, gh, 0.5, 0, 0, 0.5, Float(g.atlasX), Float(g.atlasY), gw, gh])
            }
            shared.useGlyphs(viewport: (w, h), depth: (0, 0))
            drawGathered(floats: ScrollCache.glyphFloats, attributes: RectGlyphPrograms.glyphAttributes)
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        glBindFramebuffer(GLenum(GL_DRAW_FRAMEBUFFER), GLuint(drawFramebuffer))
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), GLuint(readFramebuffer))
    }

    private static func floorDiv(_ a: Int, _ b: Int) -> Int {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Clears (within the scissor) and draws every instance that reaches content rows [from, to),
    /// in order, rectangles then glyphs, at their screen positions (the clip's top at `screenTop`).
    private func drawStrip(from: Int, to: Int, screenTop: Int32) {
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glEnable(GLenum(GL_BLEND))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
        // Content to screen: y − offset + the clip's top, x + the clip's left (exact on whole pixels).
        let shift = Float(offset) - Float(screenTop), dx = Float(pixelClip.0), y0 = Float(from), y1 = Float(to)
        if gather(rects, stride: ScrollCache.rectFloats, dx: dx, shift: shift, y0, y1) > 0 {
            programs.rect.use(viewport: (Float(scratchWidth), Float(scratchHeight)), depth: (0, 0))
            drawGathered(floats: ScrollCache.rectFloats, attributes: RectGlyphPrograms.rectAttributes)
        }
        if gather(glyphs, stride: ScrollCache.glyphFloats, dx: dx, shift: shift, y0, y1) > 0 {
            shared.useGlyphs(viewport: (Float(scratchWidth), Float(scratchHeight)), depth: (0, 0))
            drawGathered(floats: ScrollCache.glyphFloats, attributes: RectGlyphPrograms.glyphAttributes)
        }
    }

    /// Fills ``strip`` with the instances reaching content rows [y0, y1), moved right by `dx`
    /// and up by `shift`.
    private func gather(_ data: ContiguousArray<Float>, stride: Int, dx: Float, shift: Float, _ y0: Float, _ y1: Float) -> Int {
        strip.removeAll(keepingCapacity: true)
        let n = data.count / stride
        for i in 0..<n {
            let b = i * stride
            let y = data[b + 1], h = data[b + 3]
            guard y < y1, y + h > y0 else { continue }
            strip.append(data[b] + dx); strip.append(y - shift)
            for k in 2..<stride { strip.append(data[b + k]) }
        }
        return strip.count / stride
    }

    /// Draws the instances ``gather(_:stride:dx:shift:_:_:)`` put in ``strip``.
    private func drawGathered(floats: Int, attributes: [(GLuint, GLint, Int)]) {
        GLResources.drawInstanced(
            count: strip.count / floats, floats: floats, attributes: attributes, cornerBuffer: cornerBuffer,
            instanceBuffer: instanceBuffer, upload: strip)
    }

    /// The renderer's clear of what it redraws, `region` (pixels, top-left origin: x0 y0 x1 y1,
    /// the scissor set to it when `partial`) of a framebuffer `height` pixels high: the window is
    /// copied onto the clip, and only the rest of the region is cleared (its colour; the depth
    /// buffer, when in `mask`, everywhere). A software rasteriser clears a scissored region by
    /// shading it, so the clip is not cleared only to be copied over.
    func clearCopyingWindow(_ mask: GLbitfield, region: (Int32, Int32, Int32, Int32), partial: Bool, height: Int32) {
        let (cx, cy, w, h) = pixelClip
        let x0 = max(region.0, cx), x1 = min(region.2, cx + w), y0 = max(region.1, cy), y1 = min(region.3, cy + h)
        guard ringOffset != nil, ringWidth > 0, ringHeight > 0, x0 < x1, y0 < y1 else {
            glClear(mask)
            return
        }
        if !partial {
            glClear(mask)  // whole: the driver's fast clear
        } else {
            let depth = mask & GLbitfield(GL_DEPTH_BUFFER_BIT)
            if depth != 0 { glClear(depth) }
            // The region less the clip: above, below, left and right of it.
            func clearColour(_ ax: Int32, _ ay: Int32, _ bx: Int32, _ by: Int32) {
                guard ax < bx, ay < by else { return }
                glScissor(ax, height - by, bx - ax, by - ay)
                glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
            }
            clearColour(region.0, region.1, region.2, y0)
            clearColour(region.0, y1, region.2, region.3)
            clearColour(region.0, y0, x0, y1)
            clearColour(x1, y0, region.2, y1)
        }
        copyWindow(into: (x0, y0, x1, y1), height: height)
    }

    /// Copies the window onto the screen within `region` (pixels, top-left origin: x0 y0 x1 y1,
    /// inside the clip) of a framebuffer `height` pixels high.
    ///
    /// The ring is stored top row first, as window-system buffers are (a texture's rows are
    /// bottom first in GL's terms), so this blit, mirrored in GL's terms, is a straight copy for
    /// the driver: llvmpipe then copies rows with memcpy instead of sampling every pixel with a
    /// shader (its copy path takes no flip). The rows come into the ring by mirrored blits too.
    private func copyWindow(into region: (Int32, Int32, Int32, Int32), height: Int32) {
        guard let ringOffset else { return }
        let (cx, cy, _, h) = pixelClip
        let x0 = region.0, x1 = region.2
        var readFramebuffer: GLint = 0
        glGetIntegerv(GLenum(GL_READ_FRAMEBUFFER_BINDING), &readFramebuffer)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), ring.framebuffer)
        glDisable(GLenum(GL_SCISSOR_TEST))
        // Screen row s shows content row s − cy + offset, in ring row (that) mod h: two pieces.
        let split = Int32(ringOffset - ScrollCache.floorDiv(ringOffset, Int(h)) * Int(h))  // ring row at the clip's top
        func copy(screenTop: Int32, screenBottom: Int32, ringTop: Int32) {
            let s0 = max(screenTop, region.1), s1 = min(screenBottom, region.3)
            guard s0 < s1 else { return }
            let r0 = ringTop + (s0 - screenTop), r1 = r0 + (s1 - s0)
            glBlitFramebuffer(
                x0 - cx, r1, x1 - cx, r0, x0, height - s1, x1, height - s0,
                GLbitfield(GL_COLOR_BUFFER_BIT), GLenum(GL_NEAREST))
        }
        copy(screenTop: cy, screenBottom: cy + h - split, ringTop: split)
        copy(screenTop: cy + h - split, screenBottom: cy + h, ringTop: 0)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), GLuint(readFramebuffer))
    }
}

// Measured (llvmpipe under qemu TCG): each of the strips' variants takes 120-190 ms to build the
// first time, in the first frames that scroll a pixel. Instances counted whole instead of cut to
// the window (ScrollRowDiff.changedRows) make every frame of a fast scroll redraw every row,
// 150-300 ms a frame, so that the next frame scrolls further still.
