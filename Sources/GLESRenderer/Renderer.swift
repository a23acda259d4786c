internal import CGLES
import EGLGraphics

/// A batched GLES renderer: rounded rectangles and text in layers, one draw call per layer and
/// kind (rectangles, glyphs), clipped per layer with the scissor.
///
/// What it makes the rasteriser do (on a software rasteriser every pixel touched is CPU time):
/// - Opaque first, front to back (GLES 3 with a depth buffer): the inside of every opaque
///   rectangle, where its coverage is exactly 1, is drawn first with the depth test, nearest
///   first and unblended, so hidden fragments are rejected before shading; then everything
///   (antialiased edges, translucent rectangles, text) back to front, blended, with the depth
///   test, so what a nearer opaque inside covers is rejected too. Each instance's depth is its
///   place in the drawing order, so the pixels equal those of drawing every layer in order.
/// - Partial redraw: with a buffer age (`EGL_EXT_buffer_age`, asked of the current EGL surface,
///   or given to ``beginFrame(width:height:clearColor:bufferAge:)``) only the union of what
///   changed since that buffer was drawn is cleared and drawn (scissored; with
///   `EGL_KHR_partial_update` also declared to the driver). Without an age, everything. This
///   assumes every ``endFrame()`` is presented (swapped) before the next; ``warmUp(partialRedraws:)`` and
///   ``invalidateBuffers()`` start over.
/// - Rectangles and glyphs wholly outside the viewport or their layer's clip are dropped when added.
/// - Cached layers (``setCached(_:_:)``): a layer that changes rarely (a HUD) is drawn into a
///   texture when it changes and composited from it as one quad per frame (measured with llvmpipe
///   under callgrind: the bounce scene's 60 views with the HUD, 3.15 to 2.46 million instructions
///   per frame for the whole process).
///
/// - GLES 3: one static unit quad plus per-instance attributes (`glDrawArraysInstanced`).
///   GLES 2: the same attributes expanded to six vertices per instance in a streamed buffer.
///   One GLSL ES 1.00 shader pair serves both.
/// - Text: glyphs from a ``GlyphAtlas`` uploaded once as an alpha texture.
/// - Per frame nothing is allocated once the layers' buffers have grown to the scene's size, and a
///   layer whose contents did not change is not uploaded again.
/// - ``damage`` tells which region changed since the previous frame (for swap-with-damage).
///
/// Draws into whatever surface is current: a Wayland window, a GBM surface, or a pbuffer.
public final class Renderer {
    public typealias LayerID = Int

    public enum Damage: Sendable, Equatable {
        case none
        case region(Rect)
        case full
    }

    private struct Layer {
        var clip: Rect?
        var rects = ContiguousArray<Float>()
        var glyphs = ContiguousArray<Float>()
        var previousRects = ContiguousArray<Float>()
        var previousGlyphs = ContiguousArray<Float>()
        var bounds = Bounds()
        var previousBounds = Bounds()
        /// The summed area of the rectangles (pixels; overlaps counted each time).
        var area: Float = 0
        var rectBuffer: GLuint = 0
        var glyphBuffer: GLuint = 0
        /// The insides of the opaque rectangles, last added first: x y w h r g b index.
        var opaque = ContiguousArray<Float>()
        var opaqueBuffer: GLuint = 0
        /// Whether this frame's contents differ from the previous frame's.
        var rectsChanged = true
        var glyphsChanged = true
        /// Whether the GPU buffers still hold older contents (a change not drawn yet).
        var rectsStale = true
        var glyphsStale = true
        var opaqueStale = true
        /// The index of the layer's first instance in this frame's drawing order (its depth).
        var depthBase = 0
        /// The rectangles drawn this frame: those not wholly hidden behind nearer opaque insides
        /// (see ``Renderer/cullHidden()``), in order; and the last frame's, which the GPU buffers hold.
        var visible = ContiguousArray<Float>()
        var previousVisible = ContiguousArray<Float>()
        /// Kept from frame to frame until its owner clears it (see ``Renderer/setRetained(_:_:)``).
        var retained = false
        /// Drawn into a texture of its own when it changes, composited from it (``Renderer/setCached(_:_:)``).
        var cached = false
        /// The cached layer's texture and framebuffer (not made until needed), the size they were
        /// made at, and whether the texture holds the layer's current contents.
        var cache = RenderTarget()
        var cacheSize: (Int32, Int32) = (0, 0)
        var cacheValid = false

        /// This frame's contents become the reference for the next frame's change check; the old
        /// reference's storage is reused for the next frame (no allocation). A retained layer keeps
        /// its contents, so they are copied (only when they changed) instead of swapped.
        mutating func keepAsPrevious(changed: Bool) {
            if retained {
                if changed {
                    previousRects.removeAll(keepingCapacity: true)
                    previousRects.append(contentsOf: rects)
                    previousGlyphs.removeAll(keepingCapacity: true)
                    previousGlyphs.append(contentsOf: glyphs)
                }
            } else {
                swap(&rects, &previousRects)
                swap(&glyphs, &previousGlyphs)
            }
            previousBounds = bounds
        }

        /// What was drawn this frame is what the GPU buffers hold now (storage reused).
        mutating func keepVisibleAsPrevious() {
            swap(&visible, &previousVisible)
        }

        mutating func clear() {
            area = 0
            rects.removeAll(keepingCapacity: true)
            glyphs.removeAll(keepingCapacity: true)
            bounds = Bounds()
        }

        /// Empty now and in the reference: the next frame sees no change here.
        mutating func reset() {
            clear()
            previousRects.removeAll(keepingCapacity: true)
            previousGlyphs.removeAll(keepingCapacity: true)
            previousBounds = Bounds()
        }
    }

    struct Bounds {
        var minX = Float.infinity, minY = Float.infinity, maxX = -Float.infinity, maxY = -Float.infinity
        var isEmpty: Bool { minX > maxX || minY > maxY }
        static let everything = Bounds(minX: -.infinity, minY: -.infinity, maxX: .infinity, maxY: .infinity)
        mutating func add(_ x: Float, _ y: Float, _ w: Float, _ h: Float) {
            minX = min(minX, x); minY = min(minY, y); maxX = max(maxX, x + w); maxY = max(maxY, y + h)
        }
        mutating func add(_ other: Bounds) {
            guard !other.isEmpty else { return }
            minX = min(minX, other.minX); minY = min(minY, other.minY)
            maxX = max(maxX, other.maxX); maxY = max(maxY, other.maxY)
        }
    }

    public let atlas: GlyphAtlas
    /// Whether instancing is used (GLES 3) or vertices are streamed (GLES 2).
    public let usesInstancing: Bool
    /// Draw calls issued by the last ``endFrame()``.
    public private(set) var drawCalls = 0
    /// Buffer uploads made by the last ``endFrame()``.
    public private(set) var uploads = 0
    /// What changed since the previous frame (for swap-with-damage).
    public private(set) var damage: Damage = .full
    /// What the last ``endFrame()`` cleared and drew: `.full`, a region (partial redraw of a
    /// buffer whose age was known) or `.none` (the buffer already showed this frame).
    public private(set) var redrawn: Damage = .full
    /// Draw calls of the last ``endFrame()``'s opaque pass (not in ``drawCalls``).
    public private(set) var opaqueDrawCalls = 0
    /// Rectangles the last ``endFrame()`` left out as wholly hidden behind nearer opaque insides.
    public private(set) var hiddenRects = 0
    /// Whether the last ``endFrame()`` drew opaque insides front to back with the depth test.
    public private(set) var usedDepthPass = false
    /// Whether the opaque pass is used when the target has a depth buffer (GLES 3). On by
    /// default; off draws everything blended in order (the same pixels; for comparisons).
    public var usesDepthPass = true
    /// The overdraw (the rectangles' summed area over the viewport's) from which the opaque pass
    /// is used. Where rectangles barely overlap it cannot save much, and a software rasteriser
    /// pays for the depth buffer's clear and test on every pixel instead (measured with llvmpipe:
    /// the bounce scene's 60 views and the scroll list cost a third more instructions with it, the
    /// 20,000 views a fifth as many). 0: whenever there is a depth buffer.
    public var depthPassMinimumOverdraw: Float = 2
    /// Whether a buffer age is used to redraw only what changed. On by default; off redraws
    /// everything every frame (the same pixels; for comparisons).
    public var usesPartialRedraw = true
    /// Drawn under every layer, into what each frame redraws, in place of the clear (set by ``ScrollCache``).
    var backdrop: ScrollCache?

    private static let rectFloats = RectGlyphPrograms.rectFloats
    private static let glyphFloats = RectGlyphPrograms.glyphFloats
    private static let opaqueFloats = 8  // x y w h r g b index
    /// Frames of damage kept for buffer ages (a buffer older than this is redrawn whole).
    private static let historyLength = 8

    private var layers: [Layer] = []
    private var warmUpLayer: LayerID?
    private let programs: RectGlyphPrograms
    private let opaqueProgram: ShaderProgram
    private let compositeProgram: ShaderProgram
    private let compositeRect: GLint
    private let compositeSampler: GLint
    private let cornerBuffer: GLuint
    private let atlasTexture: GLuint
    private var expanded = ContiguousArray<Float>()
    private var width: Int32 = 0
    private var height: Int32 = 0
    private var clearColor = RGBA(0, 0, 0, 0)
    private var previousFrame: (Int32, Int32, RGBA)?
    /// The age given to this frame's ``beginFrame(width:height:clearColor:bufferAge:)`` (nil: ask EGL).
    private var givenAge: Int?
    /// What this frame redraws whatever the buffer's age (warm-up; no damage region declared).
    private var forcedRedraw: Bounds?
    /// What changed in each of the last frames, newest at `historyEnd - 1` (a ring).
    private var history = [Bounds](repeating: Bounds(), count: Renderer.historyLength)
    private var historyEnd = 0
    /// Frames recorded since the history was last invalidated.
    private var historyCount = 0

    /// Builds programs and buffers and uploads the atlas in the current GL context.
    /// - Parameter glesMajorVersion: the context's version; 2 forces streamed vertices.
    public init(atlas: GlyphAtlas, glesMajorVersion: Int32) throws(GLError) {
        self.atlas = atlas
        usesInstancing = glesMajorVersion >= 3
        let dialect: Shaders.Dialect = usesInstancing ? .es300 : .es100
        programs = try RectGlyphPrograms(dialect)
        opaqueProgram = try ShaderProgram(dialect, vertex: Shaders.opaqueVertex, fragment: Shaders.opaqueFragment)
        compositeProgram = try ShaderProgram(dialect, vertex: Shaders.compositeVertex, fragment: Shaders.compositeFragment)
        compositeRect = compositeProgram.uniform("u_rect")
        compositeSampler = compositeProgram.uniform("u_layer")
        cornerBuffer = GLResources.makeCornerBuffer()
        atlasTexture = GLResources.uploadAtlas(atlas)
        let status = glGetError()
        guard status == GL_NO_ERROR else { throw GLError(message: "renderer set-up failed (GL error 0x\(String(status, radix: 16)))") }
    }

    deinit {
        for var layer in layers {
            var buffers = [layer.rectBuffer, layer.glyphBuffer, layer.opaqueBuffer]
            glDeleteBuffers(3, &buffers)
            layer.cache.delete()
        }
        var cornerBuffer = cornerBuffer, atlasTexture = atlasTexture
        glDeleteBuffers(1, &cornerBuffer)
        glDeleteTextures(1, &atlasTexture)
        programs.delete()
        glDeleteProgram(opaqueProgram.program)
        glDeleteProgram(compositeProgram.program)
    }

    /// Waits until the GPU (or software rasteriser) has finished everything drawn so far.
    public func finish() { glFinish() }

    /// Draws what the layers hold now (call between ``beginFrame(width:height:clearColor:)`` and
    /// ``endFrame()``, after the scene's own drawing) plus rectangles and text that cross every edge
    /// of the viewport, into the current back buffer, and waits for it; the caller does not present it.
    ///
    /// Drivers build code for each combination of state they meet: llvmpipe compiles shader and
    /// clipping variants with LLVM the first time, which takes hundreds of milliseconds under
    /// emulation or on a small CPU. A warm-up frame moves that cost out of the first animated
    /// frames (one of the first views to cross an edge would otherwise stall a frame). The warm-up
    /// also redraws in part (as a buffer age makes later frames do: scissored clears and draws,
    /// cached layers redrawn within them) and takes the row cache's paths (``ScrollCache``): in
    /// the vkms VM each variant first met mid-scroll cost 120-210 ms, a dozen refreshes.
    /// - Parameter partialRedraws: whether later frames may be redrawn in part, so the warm-up
    ///   draws such frames too; nil: when partial redraw is on and the current EGL surface tells
    ///   its buffers' age (where it cannot, every frame is whole and those variants would be built
    ///   for nothing: 17 ms of a 90 ms start with llvmpipe on Wayland). True when the frames will
    ///   be given ages (``beginFrame(width:height:clearColor:bufferAge:)``).
    public func warmUp(partialRedraws: Bool? = nil) {
        let w = Float(width), h = Float(height)
        let layer = warmUpLayer ?? makeLayer(reserving: 8)
        warmUpLayer = layer
        let red = RGBA(1, 0, 0, 0.5)
        for rect in [Rect(x: -10, y: h / 2, width: 20, height: 20), Rect(x: w - 10, y: h / 2, width: 20, height: 20),
                     Rect(x: w / 2, y: -10, width: 20, height: 20), Rect(x: w / 2, y: h - 10, width: 20, height: 20),
                     Rect(x: -10, y: -10, width: w + 20, height: h + 20), Rect(x: 10, y: 10, width: 20, height: 20)] {
            addRect(layer, rect, color: red, cornerRadius: 4)
        }
        addRect(layer, Rect(x: w / 2 - 10, y: h / 2 - 10, width: 20, height: 20), color: RGBA(1, 0, 0, 1), cornerRadius: 4)
        addText(layer, Array("Warm-up 0123".utf8), x: -8, baseline: h - 2, face: 0, color: red)
        addText(layer, Array("Warm-up 0123".utf8), x: w - 40, baseline: 8, face: 0, color: red)
        // The scrolling list's own paths first (its rows drawn in strips, copied around the ring).
        backdrop?.warmUp(width: width, height: height)
        // Both ways of drawing: blended only, and with the opaque pass (when there is a depth
        // buffer); each whole, then partly redrawn (scissored clears and draws, and cached layers
        // drawn into their textures within such a frame, as a buffer age makes them: llvmpipe
        // builds other variants for those, which cost a VM frame 120-210 ms each when first met).
        let minimumOverdraw = depthPassMinimumOverdraw
        let part = Bounds(minX: 1, minY: 1, maxX: w - 1, maxY: h - 1)  // partial, over every layer and clip edge
        let partly = partialRedraws ?? (usesPartialRedraw && EGLCurrentSurface.tellsBufferAge)
        for overdraw in [Float.infinity, 0] {
            depthPassMinimumOverdraw = overdraw
            for redraw in partly ? [Bounds.everything, part] : [Bounds.everything] {
                forcedRedraw = redraw
                for i in layers.indices where layers[i].cached { layers[i].cacheValid = false }
                endFrame()
            }
        }
        forcedRedraw = nil
        depthPassMinimumOverdraw = minimumOverdraw
        layers[layer].reset()
        invalidateBuffers()
        finish()
    }

    /// Forgets what the surface's buffers hold: the next frames are drawn whole until their
    /// buffers were drawn since (after drawing that was not presented, or drawing by others).
    public func invalidateBuffers() {
        historyCount = 0
    }

    /// Adds a layer, drawn after the ones before it. Make layers at set-up, not per frame.
    /// `reserving` sizes its buffers for that many rectangles and glyphs.
    public func makeLayer(reserving capacity: Int = 256) -> LayerID {
        var layer = Layer()
        layer.rects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.previousRects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.glyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        layer.previousGlyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        layer.opaque.reserveCapacity(capacity * Renderer.opaqueFloats)
        layer.visible.reserveCapacity(capacity * Renderer.rectFloats)
        layer.previousVisible.reserveCapacity(capacity * Renderer.rectFloats)
        var buffers: [GLuint] = [0, 0, 0]
        glGenBuffers(3, &buffers)
        layer.rectBuffer = buffers[0]
        layer.glyphBuffer = buffers[1]
        layer.opaqueBuffer = buffers[2]
        layers.append(layer)
        return layers.count - 1
    }

    /// Clips a layer to a rectangle (nil: no clip), from this frame on.
    public func setClip(_ layer: LayerID, _ clip: Rect?) {
        layers[layer].clip = clip
    }

    /// A retained layer keeps what was added to it from frame to frame, until ``clear(_:)``: its
    /// owner lays it out only when its contents change (a HUD that updates twice a second), and an
    /// unchanged retained layer is drawn from its GPU buffer without re-uploading.
    public func setRetained(_ layer: LayerID, _ retained: Bool) {
        layers[layer].retained = retained
    }

    /// A cached layer (retained as well, see ``setRetained(_:_:)``) is drawn into a texture of its
    /// own (the viewport's size, premultiplied RGBA) only when its contents change, and every frame
    /// it is composited from that texture as one quad over its bounds: for a layer that changes
    /// rarely and holds many small items (a HUD's text on its bands), one quad of texture copies
    /// instead of a triangle pair per glyph and two blended passes over the same pixels. The
    /// pixels are those of the layer drawn over transparent black and then composited (8-bit
    /// rounding in between: within 2/255 per channel of drawing it directly). Not for layers that
    /// change every frame (each change draws the texture as well).
    public func setCached(_ layer: LayerID, _ cached: Bool) {
        layers[layer].cached = cached
        layers[layer].cacheValid = false
        if cached { layers[layer].retained = true }
    }

    /// Empties a layer now (for a retained layer, before laying out its new contents).
    public func clear(_ layer: LayerID) {
        layers[layer].clear()
    }

    /// Starts a frame: every layer that is not retained starts empty.
    /// - Parameter bufferAge: the age of the buffer this frame draws into (1: it holds the previous
    ///   frame, 0: unknown); nil asks the EGL surface current on this thread when the frame ends.
    public func beginFrame(width: Int32, height: Int32, clearColor: RGBA, bufferAge: Int? = nil) {
        self.width = width
        self.height = height
        self.clearColor = clearColor
        givenAge = bufferAge
        for i in layers.indices where !layers[i].retained {
            layers[i].clear()
        }
    }

    /// A filled rectangle with rounded corners (radius in pixels; 0 for square corners).
    public func addRect(_ layer: LayerID, _ rect: Rect, color: RGBA, cornerRadius: Float = 0) {
        guard isVisible(layer, rect.x, rect.y, rect.width, rect.height) else { return }
        layers[layer].rects.append(rect.x); layers[layer].rects.append(rect.y)
        layers[layer].rects.append(rect.width); layers[layer].rects.append(rect.height)
        layers[layer].rects.append(color.r); layers[layer].rects.append(color.g)
        layers[layer].rects.append(color.b); layers[layer].rects.append(color.a)
        layers[layer].rects.append(cornerRadius)
        layers[layer].bounds.add(rect.x, rect.y, rect.width, rect.height)
        layers[layer].area += rect.width * rect.height
    }

    /// ASCII text with its baseline starting at (x, baseline), in atlas face `face`.
    /// Returns the advance width drawn.
    @discardableResult
    public func addText<C: Collection>(_ layer: LayerID, _ text: C, x: Float, baseline: Float, face: Int,
                                       color: RGBA) -> Float where C.Element == UInt8 {
        var pen = x
        let f = atlas.faces[face]
        for byte in text {
            let g = f.glyph(byte)
            let gx = pen + Float(g.bearingX), gy = baseline - Float(g.bearingY)
            let w = Float(g.width), h = Float(g.height)
            if g.width > 0 && g.height > 0 && isVisible(layer, gx, gy, w, h) {
                layers[layer].glyphs.append(gx); layers[layer].glyphs.append(gy)
                layers[layer].glyphs.append(w); layers[layer].glyphs.append(h)
                layers[layer].glyphs.append(color.r); layers[layer].glyphs.append(color.g)
                layers[layer].glyphs.append(color.b); layers[layer].glyphs.append(color.a)
                layers[layer].glyphs.append(Float(g.atlasX)); layers[layer].glyphs.append(Float(g.atlasY))
                layers[layer].glyphs.append(w); layers[layer].glyphs.append(h)
                layers[layer].bounds.add(gx, gy, w, h)
            }
            pen += Float(g.advance)
        }
        return pen - x
    }

    /// Whether a rectangle can show: inside the viewport and the layer's clip, not empty.
    @inline(__always)
    private func isVisible(_ layer: LayerID, _ x: Float, _ y: Float, _ w: Float, _ h: Float) -> Bool {
        guard w > 0, h > 0, x < Float(width), y < Float(height), x + w > 0, y + h > 0 else { return false }
        guard let clip = layers[layer].clip else { return true }
        return x < clip.x + clip.width && y < clip.y + clip.height && x + w > clip.x && y + h > clip.y
    }

    /// Number of rectangles in a layer this frame.
    public func rectCount(_ layer: LayerID) -> Int { layers[layer].rects.count / Renderer.rectFloats }

    /// Computes ``damage``, clears what must be redrawn and draws every layer into it.
    public func endFrame() {
        drawCalls = 0
        opaqueDrawCalls = 0
        uploads = 0

        // What changed since the previous frame.
        var changed = Bounds()
        let frameChanged = previousFrame.map { $0.0 != width || $0.1 != height || $0.2 != clearColor } ?? true
        for i in layers.indices {
            let rectsChanged = layers[i].rects != layers[i].previousRects
            let glyphsChanged = layers[i].glyphs != layers[i].previousGlyphs
            layers[i].rectsChanged = rectsChanged
            layers[i].glyphsChanged = glyphsChanged
            if glyphsChanged { layers[i].glyphsStale = true }
            if rectsChanged || glyphsChanged { layers[i].cacheValid = false }
            if rectsChanged || glyphsChanged {
                var region = layers[i].bounds
                region.add(layers[i].previousBounds)
                if let clip = layers[i].clip {
                    region.minX = max(region.minX, clip.x); region.minY = max(region.minY, clip.y)
                    region.maxX = min(region.maxX, clip.x + clip.width); region.maxY = min(region.maxY, clip.y + clip.height)
                }
                changed.add(region)
            }
        }
        if let moved = backdrop?.prepare(width: width, height: height) { changed.add(moved) }
        if frameChanged {
            damage = .full
        } else if changed.isEmpty {
            damage = .none
        } else {
            damage = pixelRegion(changed).map { .region(Rect(x: Float($0.0), y: Float($0.1), width: Float($0.2 - $0.0), height: Float($0.3 - $0.1))) } ?? .none
        }

        // What this buffer needs: the changes of the frames since it was drawn.
        let thisFrame = frameChanged ? Bounds.everything : changed
        var redraw = thisFrame
        let age = forcedRedraw != nil || !usesPartialRedraw ? 0 : (givenAge ?? EGLCurrentSurface.bufferAge())
        if let forcedRedraw {
            redraw = forcedRedraw
        } else if age <= 0 || age > historyCount || age > Renderer.historyLength {
            redraw = .everything
        } else {
            for back in 1..<age {
                redraw.add(history[(historyEnd - back + Renderer.historyLength) % Renderer.historyLength])
            }
        }
        history[historyEnd] = thisFrame
        historyEnd = (historyEnd + 1) % Renderer.historyLength
        historyCount += 1
        previousFrame = (width, height, clearColor)

        prepareCacheTargets()

        guard let (x0, y0, x1, y1) = pixelRegion(redraw) else {
            redrawn = .none
            for i in layers.indices { layers[i].keepAsPrevious(changed: layers[i].rectsChanged || layers[i].glyphsChanged) }
            return
        }
        let partial = x0 > 0 || y0 > 0 || x1 < width || y1 < height
        redrawn = partial ? .region(Rect(x: Float(x0), y: Float(y0), width: Float(x1 - x0), height: Float(y1 - y0))) : .full
        // The redrawn region in GL's scissor coordinates (bottom-left origin).
        let region = (x0, height - y1, x1 - x0, y1 - y0)
        if partial && age > 0 {
            EGLCurrentSurface.setDamageRegion(x: region.0, y: region.1, width: region.2, height: region.3)
        }

        // What is drawn: with the depth pass, rectangles wholly behind nearer opaque insides are
        // left out (their every pixel would fail the depth test; the rasteriser still pays for
        // their triangles). Then every instance's place in the drawing order is its depth.
        var instances = 0, area: Float = 0
        for i in layers.indices {
            instances += layers[i].rects.count / Renderer.rectFloats + layers[i].glyphs.count / Renderer.glyphFloats
            area += layers[i].area
        }
        let overdraw = area / max(1, Float(width) * Float(height))
        let depthStep = usesDepthPass && usesInstancing && overdraw >= depthPassMinimumOverdraw
            ? clipDepthStep(instances: instances) : 0
        usedDepthPass = depthStep > 0
        hiddenRects = 0
        if usedDepthPass {
            cullHidden()
        } else {
            for i in layers.indices {
                layers[i].visible.removeAll(keepingCapacity: true)
                layers[i].visible.append(contentsOf: layers[i].rects)
            }
        }
        instances = 0
        for i in layers.indices {
            if layers[i].visible != layers[i].previousVisible { layers[i].rectsStale = true; layers[i].opaqueStale = true }
            layers[i].depthBase = instances
            // A cached layer is one quad.
            instances += layers[i].cached ? 1
                : layers[i].visible.count / Renderer.rectFloats + layers[i].glyphs.count / Renderer.glyphFloats
        }
        // Cached layers whose texture is out of date are drawn into it first.
        for i in layers.indices where layers[i].cached && !layers[i].cacheValid {
            renderCache(layer: i)
        }

        glViewport(0, 0, width, height)
        setScissor(region, partial: partial)
        glClearColor(clearColor.r * clearColor.a, clearColor.g * clearColor.a, clearColor.b * clearColor.a, clearColor.a)
        if usedDepthPass {
            glDepthMask(GLboolean(GL_TRUE))
            glClearDepthf(1)
            let mask = GLbitfield(GL_COLOR_BUFFER_BIT) | GLbitfield(GL_DEPTH_BUFFER_BIT)
            if let backdrop { backdrop.clear(mask, region: (x0, y0, x1, y1), partial: partial, height: height) } else { glClear(mask) }
            glEnable(GLenum(GL_DEPTH_TEST))
            glDepthFunc(GLenum(GL_LESS))
            // Opaque insides, nearest first, unblended.
            glDisable(GLenum(GL_BLEND))
            for i in layers.indices.reversed() where !layers[i].visible.isEmpty && !layers[i].cached {
                guard layerScissor(i, region, partial: partial) else { continue }
                drawOpaque(layer: i, depthStep: depthStep)
            }
            glDepthMask(GLboolean(GL_FALSE))
        } else {
            let mask = GLbitfield(GL_COLOR_BUFFER_BIT)
            if let backdrop { backdrop.clear(mask, region: (x0, y0, x1, y1), partial: partial, height: height) } else { glClear(mask) }
            glDisable(GLenum(GL_DEPTH_TEST))
        }
        // Everything else, in order, blended (premultiplied).
        glEnable(GLenum(GL_BLEND))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
        for i in layers.indices {
            if layerScissor(i, region, partial: partial) {
                if layers[i].cached {
                    drawComposite(layer: i, depthStep: depthStep)
                } else {
                    drawRects(layer: i, depthStep: depthStep)
                    drawGlyphs(layer: i, depthStep: depthStep)
                }
            }
            layers[i].keepAsPrevious(changed: layers[i].rectsChanged || layers[i].glyphsChanged)
            if !layers[i].rectsStale { layers[i].keepVisibleAsPrevious() }
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        if usedDepthPass {
            glDisable(GLenum(GL_DEPTH_TEST))
            glDepthMask(GLboolean(GL_TRUE))
        }
    }

    /// A region rounded out to whole pixels and cut to the viewport: (x0, y0, x1, y1), top-left
    /// origin; nil when nothing is left.
    private func pixelRegion(_ b: Bounds) -> (Int32, Int32, Int32, Int32)? {
        guard !b.isEmpty else { return nil }
        let x0 = max(0, b.minX.rounded(.down)), y0 = max(0, b.minY.rounded(.down))
        let x1 = min(Float(width), b.maxX.rounded(.up)), y1 = min(Float(height), b.maxY.rounded(.up))
        guard x0 < x1, y0 < y1 else { return nil }
        return (Int32(x0), Int32(y0), Int32(x1), Int32(y1))
    }

    /// Occlusion cells: 4×4 pixels, set once a nearer opaque inside covers the whole cell.
    private static let cell: Float = 4
    private var covered: [Bool] = []
    private var coveredColumns = 0
    /// The indices of a layer's rectangles not hidden, nearest first (reused each frame).
    private var shown = ContiguousArray<Int32>()

    /// Fills each layer's ``Layer/visible`` with its rectangles less those wholly hidden: going
    /// front to back (last layer, last rectangle first), a rectangle every cell of whose bounds is
    /// already covered is left out; otherwise the cells wholly inside its opaque inside (the same
    /// inside the opaque pass draws; only in layers without a clip) become covered. Each pixel of
    /// a left-out rectangle is drawn opaque by a nearer one, so the pixels do not change.
    private func cullHidden() {
        let columns = Int((Float(width) / Renderer.cell).rounded(.up)), rows = Int((Float(height) / Renderer.cell).rounded(.up))
        if covered.count != columns * rows || coveredColumns != columns {
            covered = [Bool](repeating: false, count: columns * rows)  // only when the size changes
            coveredColumns = columns
        } else {
            covered.withUnsafeMutableBufferPointer { $0.update(repeating: false) }
        }
        let cell = Renderer.cell
        hiddenRects = 0
        for i in layers.indices.reversed() {
            layers[i].visible.removeAll(keepingCapacity: true)
            if layers[i].cached {
                // Drawn from its texture: nothing of it is left out, and it hides nothing.
                layers[i].visible.append(contentsOf: layers[i].rects)
                continue
            }
            let marks = layers[i].clip == nil
            let count = layers[i].rects.count / Renderer.rectFloats
            guard count > 0 else { continue }
            shown.removeAll(keepingCapacity: true)
            layers[i].rects.withUnsafeBufferPointer { r in
                covered.withUnsafeMutableBufferPointer { grid in
                    var n = count - 1
                    while n >= 0 {
                        let b = n * Renderer.rectFloats
                        let x = r[b], y = r[b + 1], w = r[b + 2], h = r[b + 3]
                        let cx0 = max(0, Int((x / cell).rounded(.down))), cy0 = max(0, Int((y / cell).rounded(.down)))
                        let cx1 = min(columns - 1, Int(((x + w) / cell).rounded(.up)) - 1)
                        let cy1 = min(rows - 1, Int(((y + h) / cell).rounded(.up)) - 1)
                        var hidden = cx0 <= cx1 && cy0 <= cy1
                        var cy = cy0
                        while hidden && cy <= cy1 {
                            var cx = cx0
                            while cx <= cx1 { if !grid[cy * columns + cx] { hidden = false; break }; cx += 1 }
                            cy += 1
                        }
                        if !hidden {
                            shown.append(Int32(n))
                            let radius = r[b + 8]
                            if marks, r[b + 7] >= 1, radius >= 0 {
                                let inset = min(radius, min(w, h) * 0.5) * 0.29289322 + 1
                                let ix0 = Int(((x + inset) / cell).rounded(.up)), iy0 = Int(((y + inset) / cell).rounded(.up))
                                let ix1 = Int(((x + w - inset) / cell).rounded(.down)) - 1
                                let iy1 = Int(((y + h - inset) / cell).rounded(.down)) - 1
                                var cy = max(0, iy0)
                                while cy <= min(rows - 1, iy1) {
                                    var cx = max(0, ix0)
                                    while cx <= min(columns - 1, ix1) { grid[cy * columns + cx] = true; cx += 1 }
                                    cy += 1
                                }
                            }
                        }
                        n -= 1
                    }
                }
            }
            hiddenRects += count - shown.count
            // `shown` is nearest first: the layer's drawing order is the reverse.
            var k = shown.count - 1
            while k >= 0 {
                let b = Int(shown[k]) * Renderer.rectFloats
                layers[i].visible.append(contentsOf: layers[i].rects[b..<b + Renderer.rectFloats])
                k -= 1
            }
        }
    }

    /// The clip-space depth step that tells `instances` instances apart in the current depth
    /// buffer (0: no depth buffer, or too many instances for it).
    private func clipDepthStep(instances: Int) -> Float {
        var bits: GLint = 0
        glGetIntegerv(GLenum(GL_DEPTH_BITS), &bits)
        guard bits >= 16 else { return 0 }
        // Window depths 1 - k·2^-(b-2) for k = 1, 2, …: four units of a b-bit buffer apart.
        let exponent = Int(min(bits, 24)) - 2
        guard instances < (1 << exponent) else { return 0 }
        return Float(sign: .plus, exponent: -(exponent - 1), significand: 1)
    }

    private func setScissor(_ region: (Int32, Int32, Int32, Int32), partial: Bool) {
        if partial {
            glEnable(GLenum(GL_SCISSOR_TEST))
            glScissor(region.0, region.1, region.2, region.3)
        } else {
            glDisable(GLenum(GL_SCISSOR_TEST))
        }
    }

    /// Sets the scissor to layer `i`'s clip within the redrawn region; false when nothing is left.
    private func layerScissor(_ i: Int, _ region: (Int32, Int32, Int32, Int32), partial: Bool) -> Bool {
        guard let clip = layers[i].clip else {
            setScissor(region, partial: partial)
            return true
        }
        // The clip in GL's coordinates, as the full-frame path always set it.
        var x0 = GLint(clip.x), y0 = GLint(Float(height) - clip.y - clip.height)
        var x1 = x0 + GLsizei(clip.width), y1 = y0 + GLsizei(clip.height)
        if partial {
            x0 = max(x0, region.0); y0 = max(y0, region.1)
            x1 = min(x1, region.0 + region.2); y1 = min(y1, region.1 + region.3)
        }
        guard x1 > x0, y1 > y0 else { return false }
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(x0, y0, x1 - x0, y1 - y0)
        return true
    }

    // MARK: Cached layers

    /// Gives each cached layer a texture and framebuffer of the viewport's size (made, or remade
    /// when the size changed). A layer whose framebuffer the driver cannot use is drawn directly.
    private func prepareCacheTargets() {
        for i in layers.indices where layers[i].cached && layers[i].cacheSize != (width, height) {
            let complete = layers[i].cache.allocate(width: width, height: height, formats: Renderer.cacheFormats)
            layers[i].cacheSize = (width, height)
            layers[i].cacheValid = false
            if !complete { layers[i].cached = false }
        }
    }

    /// Draws layer `i` into its texture: over transparent black, whole, in its clip.
    private func renderCache(layer i: Int) {
        var previous: GLint = 0
        glGetIntegerv(GLenum(GL_FRAMEBUFFER_BINDING), &previous)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), layers[i].cache.framebuffer)
        glViewport(0, 0, width, height)
        glDisable(GLenum(GL_SCISSOR_TEST))
        glDisable(GLenum(GL_DEPTH_TEST))
        glClearColor(0, 0, 0, 0)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glEnable(GLenum(GL_BLEND))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))
        if layerScissor(i, (0, 0, width, height), partial: false) {
            drawRects(layer: i, depthStep: 0)
            drawGlyphs(layer: i, depthStep: 0)
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), GLuint(previous))
        layers[i].cacheValid = true
    }

    /// Composites cached layer `i` from its texture: one quad over its bounds (whole pixels).
    private func drawComposite(layer i: Int, depthStep: Float) {
        guard let (x0, y0, x1, y1) = pixelRegion(layers[i].bounds) else { return }
        compositeProgram.use(viewport: (Float(width), Float(height)), depth: (Float(layers[i].depthBase), depthStep))
        glUniform4f(compositeRect, Float(x0), Float(y0), Float(x1 - x0), Float(y1 - y0))
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), layers[i].cache.texture)
        glUniform1i(compositeSampler, 0)
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), cornerBuffer)
        glEnableVertexAttribArray(0)
        glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), 0, nil)
        glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        glDisableVertexAttribArray(0)
        drawCalls += 1
    }

    // MARK: Drawing

    /// The insides of layer `i`'s opaque rectangles, nearest (last added) first, where the
    /// rectangle shader's coverage is exactly 1: inset from each side by the corner's
    /// `r·(1 − 1/√2)` plus a pixel (the corner arc's closest approach, and a margin that keeps
    /// every pixel centre inside well within the coverage-1 region, whatever the rounding).
    private func layOutOpaque(layer i: Int) {
        layers[i].opaque.removeAll(keepingCapacity: true)
        let count = layers[i].visible.count / Renderer.rectFloats
        layers[i].visible.withUnsafeBufferPointer { r in
            var n = count - 1
            while n >= 0 {
                let b = n * Renderer.rectFloats
                let w = r[b + 2], h = r[b + 3], radius = r[b + 8]
                if r[b + 7] >= 1, radius >= 0 {
                    let corner = min(radius, min(w, h) * 0.5)
                    let inset = corner * 0.29289322 + 1
                    if w - 2 * inset >= 1, h - 2 * inset >= 1 {
                        layers[i].opaque.append(r[b] + inset); layers[i].opaque.append(r[b + 1] + inset)
                        layers[i].opaque.append(w - 2 * inset); layers[i].opaque.append(h - 2 * inset)
                        layers[i].opaque.append(r[b + 4]); layers[i].opaque.append(r[b + 5])
                        layers[i].opaque.append(r[b + 6]); layers[i].opaque.append(Float(n))
                    }
                }
                n -= 1
            }
        }
    }

    private func drawOpaque(layer i: Int, depthStep: Float) {
        if layers[i].opaqueStale { layOutOpaque(layer: i) }
        let count = layers[i].opaque.count / Renderer.opaqueFloats
        guard count > 0 else { layers[i].opaqueStale = false; return }
        opaqueProgram.use(viewport: (Float(width), Float(height)), depth: (Float(layers[i].depthBase), depthStep))
        draw(data: layers[i].opaque, count: count, floats: Renderer.opaqueFloats, buffer: layers[i].opaqueBuffer,
             upload: layers[i].opaqueStale, attributes: Renderer.opaqueAttributes)
        layers[i].opaqueStale = false
        opaqueDrawCalls += 1
        drawCalls -= 1
    }

    private func drawRects(layer i: Int, depthStep: Float) {
        let data = layers[i].visible
        let count = data.count / Renderer.rectFloats
        guard count > 0 else { layers[i].rectsStale = false; return }
        programs.rect.use(viewport: (Float(width), Float(height)), depth: (Float(layers[i].depthBase), depthStep))
        draw(data: data, count: count, floats: Renderer.rectFloats, buffer: layers[i].rectBuffer, upload: layers[i].rectsStale,
             attributes: Renderer.rectAttributes)
        layers[i].rectsStale = false
    }

    private func drawGlyphs(layer i: Int, depthStep: Float) {
        let data = layers[i].glyphs
        let count = data.count / Renderer.glyphFloats
        guard count > 0 else { layers[i].glyphsStale = false; return }
        programs.useGlyphs(viewport: (Float(width), Float(height)),
                           depth: (Float(layers[i].depthBase + layers[i].visible.count / Renderer.rectFloats), depthStep),
                           atlasSize: (Float(atlas.width), Float(atlas.height)), atlasTexture: atlasTexture)
        draw(data: data, count: count, floats: Renderer.glyphFloats, buffer: layers[i].glyphBuffer, upload: layers[i].glyphsStale,
             attributes: Renderer.glyphAttributes)
        layers[i].glyphsStale = false
    }

    /// Per-instance attribute layouts: (location, components, first float). Static, so drawing
    /// builds no arrays per frame.
    private static let rectAttributes = RectGlyphPrograms.rectAttributes
    private static let glyphAttributes = RectGlyphPrograms.glyphAttributes
    private static let opaqueAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4)]
    /// A cached layer's texture format (internal format, format): unsized RGBA, which GLES 2 takes too.
    private static let cacheFormats: [(GLint, GLint)] = [(GL_RGBA, GL_RGBA)]
    /// The six corners of the two triangles of an expanded (GLES 2) instance.
    private static let triangleCorners: [(Float, Float)] = [(0, 0), (1, 0), (0, 1), (0, 1), (1, 0), (1, 1)]

    /// Draws `count` instances: instanced on GLES 3, expanded to triangles on GLES 2.
    /// `attributes`: (location, components, first float) of each per-instance attribute.
    private func draw(data: ContiguousArray<Float>, count: Int, floats: Int, buffer: GLuint, upload: Bool,
                      attributes: [(GLuint, GLint, Int)]) {
        if usesInstancing {
            GLResources.drawInstanced(count: count, floats: floats, attributes: attributes, cornerBuffer: cornerBuffer,
                                      instanceBuffer: buffer, upload: upload ? data : nil)
            if upload { uploads += 1 }
        } else {
            // Six vertices per instance: corner (2 floats) followed by the instance's floats.
            let vertexFloats = 2 + floats
            glBindBuffer(GLenum(GL_ARRAY_BUFFER), buffer)
            if upload {
                expanded.removeAll(keepingCapacity: true)
                for instance in 0..<count {
                    let base = instance * floats
                    for (cx, cy) in Renderer.triangleCorners {
                        expanded.append(cx); expanded.append(cy)
                        for k in 0..<floats { expanded.append(data[base + k]) }
                    }
                }
                GLResources.stream(expanded)
                uploads += 1
            }
            let stride = GLsizei(vertexFloats * 4)
            glEnableVertexAttribArray(0)
            glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride, nil)
            for (location, components, first) in attributes {
                glEnableVertexAttribArray(location)
                glVertexAttribPointer(location, components, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride,
                                      UnsafeRawPointer(bitPattern: (2 + first) * 4))
            }
            glDrawArrays(GLenum(GL_TRIANGLES), 0, GLsizei(count * 6))
            glDisableVertexAttribArray(0)
            for (location, _, _) in attributes { glDisableVertexAttribArray(location) }
        }
        drawCalls += 1
    }

    /// Reads the current framebuffer as RGBA rows, top row first (call before swapping).
    public func readPixels() -> [UInt8] {
        Renderer.readPixels(width: width, height: height)
    }

    public static func readPixels(width: Int32, height: Int32) -> [UInt8] {
        let rowBytes = Int(width) * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * Int(height))
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        glReadPixels(0, 0, width, height, GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
        // GL's rows start at the bottom.
        var flipped = [UInt8](repeating: 0, count: pixels.count)
        for row in 0..<Int(height) {
            let from = (Int(height) - 1 - row) * rowBytes
            flipped.replaceSubrange(row * rowBytes..<(row + 1) * rowBytes, with: pixels[from..<from + rowBytes])
        }
        return flipped
    }
}
