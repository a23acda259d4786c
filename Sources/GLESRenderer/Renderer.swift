internal import CGLES
import EGLGraphics

/// A batched GLES renderer: rounded rectangles, text, images and strokes in layers, one draw call
/// per layer and kind (rectangles, a run of one image, strokes, glyphs), clipped per layer with
/// the scissor and moved by the layer's transform (groups: ``makeLayer(reserving:in:)``).
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
///   `EGL_KHR_partial_update` also declared to the driver). Without an age, or when that union
///   covers more than ``partialRedrawMaximumCoverage`` of the surface, everything. This
///   assumes every ``endFrame()`` is presented (swapped) before the next; ``warmUp(partialRedraws:)`` and
///   ``invalidateBuffers()`` start over.
/// - What is wholly outside the viewport or its layer's clip is dropped when added, in a layer
///   without a transform (set a layer's clip before adding to it); a transformed layer keeps all.
/// - Cached layers (``setCached(_:_:)``): a layer that changes rarely (a HUD) is drawn into a
///   texture when it changes and composited from it as one quad per frame, which costs a software
///   rasteriser far less than the layer's many small blended instances.
///
/// - GLES 3: one static unit quad plus per-instance attributes (`glDrawArraysInstanced`).
///   GLES 2: the same attributes expanded to six vertices per instance in a streamed buffer.
///   One GLSL ES 1.00 shader pair serves both.
/// - Text: Unicode, glyphs from a ``GlyphAtlas`` as an alpha texture, uploaded whole once and
///   then by the band of rows that glyphs rasterised on demand went into.
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

    /// The glyphs text is drawn with, rasterised at ``scale`` (replaced by ``setScale(_:)``).
    public var atlas: GlyphAtlas { shared.atlas }
    /// Pixels per point: what ``addRect(_:_:color:cornerRadius:)``, `addText(_:_:x:baseline:face:color:)`
    /// and ``setClip(_:_:)`` take is in points and drawn at this many pixels each (see ``setScale(_:)``).
    public internal(set) var scale: Float = 1
    /// Whether instancing is used (GLES 3) or vertices are streamed (GLES 2).
    public let usesInstancing: Bool
    /// Draw calls issued by the last ``endFrame()``.
    public internal(set) var drawCalls = 0
    /// Buffer uploads made by the last ``endFrame()``.
    public internal(set) var uploads = 0
    /// What changed since the previous frame (for swap-with-damage).
    public private(set) var damage: Damage = .full
    /// What the last ``endFrame()`` cleared and drew: `.full`, a region (partial redraw of a
    /// buffer whose age was known) or `.none` (the buffer already showed this frame).
    public private(set) var redrawn: Damage = .full
    /// Draw calls of the last ``endFrame()``'s opaque pass (not in ``drawCalls``).
    public internal(set) var opaqueDrawCalls = 0
    /// Rectangles the last ``endFrame()`` left out as wholly hidden behind nearer opaque insides.
    public private(set) var hiddenRects = 0
    /// Whether the last ``endFrame()`` drew opaque insides front to back with the depth test.
    public private(set) var usedDepthPass = false
    /// Whether the opaque pass is used when the target has a depth buffer (GLES 3). On by
    /// default; off draws everything blended in order (the same pixels; for comparisons).
    public var usesDepthPass = true
    /// The overdraw (the rectangles' summed area over the viewport's) from which the opaque pass
    /// is used. Where rectangles barely overlap it cannot save much, and a software rasteriser
    /// pays for the depth buffer's clear and test on every pixel instead. 0: whenever there is a
    /// depth buffer.
    public var depthPassMinimumOverdraw: Float = 2
    /// Whether a buffer age is used to redraw only what changed. On by default; off redraws
    /// everything every frame (the same pixels; for comparisons).
    public var usesPartialRedraw = true
    /// A region to redraw covering more than this share of the surface is redrawn whole (the same
    /// pixels). A partial redraw clears its region under a scissor, which llvmpipe does by drawing
    /// a quad through its fragment shader instead of filling tiles: over most of the surface that
    /// costs more than the drawing it saves (see "Measured" at the end of this file). 1: any
    /// region is redrawn in part.
    public var partialRedrawMaximumCoverage: Float = 0.5
    /// Drawn under every layer, into what each frame redraws, in place of the clear (set by ``ScrollCache``).
    var backdrop: ScrollCache?

    static let rectFloats = RectGlyphPrograms.rectFloats
    static let glyphFloats = RectGlyphPrograms.glyphFloats
    static let opaqueFloats = 8  // x y w h r g b index

    var layers: [RendererLayer] = []
    var warmUpLayer: LayerID?
    /// What the warm-up draws its images with (made at the first warm-up).
    var warmUpImage: ImageID?
    /// Counts ``updatePlacement(from:)`` passes.
    var placementEpoch = 0
    /// Programs, quad and atlas texture, shared with the ``ScrollCache`` drawn under the layers.
    let shared: SharedGPUResources
    let programs: RectGlyphPrograms
    let opaqueProgram: ShaderProgram
    let compositeProgram: ShaderProgram
    let strokeProgram: ShaderProgram
    let compositeRect: GLint
    let compositeSampler: GLint
    let imageProgram: ShaderProgram
    let imageSampler: GLint
    let imageTexel: GLint
    /// The textures of the images made with ``makeImage(width:height:rgba:)``.
    var imageStore = ImageStore()
    let cornerBuffer: GLuint
    let atlasTexture: GLuint
    var expanded = ContiguousArray<Float>()
    private(set) var width: Int32 = 0
    private(set) var height: Int32 = 0
    private var clearColor = RGBA(0, 0, 0, 0)
    /// The age given to this frame's ``beginFrame(width:height:clearColor:bufferAge:)`` (nil: ask EGL).
    private var givenAge: Int?
    /// What this frame redraws whatever the buffer's age (warm-up; no damage region declared).
    var forcedRedraw: Bounds?
    private var damageTracker = DamageTracker()

    /// Builds programs and buffers and uploads the atlas in the current GL context.
    /// - Parameters:
    ///   - atlas: the glyphs text is drawn with (uploaded once, shared with a ``ScrollCache``).
    ///   - glesMajorVersion: the context's version; 2 forces streamed vertices.
    public init(atlas: GlyphAtlas, glesMajorVersion: Int32) throws(GLError) {
        usesInstancing = glesMajorVersion >= 3
        scale = Float(atlas.scale)
        let dialect: Shaders.Dialect = usesInstancing ? .es300 : .es100
        shared = try SharedGPUResources(atlas: atlas, dialect: dialect)
        programs = shared.programs
        cornerBuffer = shared.cornerBuffer
        atlasTexture = shared.atlasTexture
        opaqueProgram = try ShaderProgram(dialect, vertex: Shaders.opaqueVertex, fragment: Shaders.opaqueFragment)
        compositeProgram = try ShaderProgram(dialect, vertex: Shaders.compositeVertex, fragment: Shaders.compositeFragment)
        compositeRect = compositeProgram.uniform("u_rect")
        compositeSampler = compositeProgram.uniform("u_layer")
        imageProgram = try ShaderProgram(dialect, vertex: Shaders.imageVertex, fragment: Shaders.imageFragment)
        imageSampler = imageProgram.uniform("u_image")
        imageTexel = imageProgram.uniform("u_texel")
        strokeProgram = try ShaderProgram(dialect, vertex: Shaders.strokeVertex, fragment: Shaders.strokeFragment)
        let status = glGetError()
        guard status == GL_NO_ERROR else { throw GLError(message: "renderer set-up failed (GL error 0x\(String(status, radix: 16)))") }
    }

    deinit {
        for var layer in layers {
            var buffers = [layer.rectBuffer, layer.glyphBuffer, layer.opaqueBuffer, layer.imageBuffer, layer.strokeBuffer]
            glDeleteBuffers(5, &buffers)
            layer.cache.delete()
        }
        imageStore.deleteAll()
        glDeleteProgram(imageProgram.program)
        glDeleteProgram(opaqueProgram.program)
        glDeleteProgram(compositeProgram.program)
        glDeleteProgram(strokeProgram.program)
    }

    /// Waits until the GPU (or software rasteriser) has finished everything drawn so far.
    public func finish() { glFinish() }

    /// Forgets what the surface's buffers hold: the next frames are drawn whole until their
    /// buffers were drawn since (after drawing that was not presented, or drawing by others).
    public func invalidateBuffers() {
        damageTracker.invalidate()
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

    /// Starts a frame: every layer that is not retained starts empty. Its contents are added in
    /// points and drawn at ``scale``.
    /// - Parameters:
    ///   - width: the viewport's width in pixels (the surface's).
    ///   - height: the viewport's height in pixels.
    ///   - clearColor: what every redrawn pixel starts as (not premultiplied).
    ///   - bufferAge: the age of the buffer this frame draws into (1: it holds the previous
    ///     frame, 0: unknown); nil asks the EGL surface current on this thread when the frame ends.
    public func beginFrame(width: Int32, height: Int32, clearColor: RGBA, bufferAge: Int? = nil) {
        self.width = width
        self.height = height
        self.clearColor = clearColor
        givenAge = bufferAge
        for i in layers.indices where !layers[i].retained {
            layers[i].clear()
        }
    }

    /// A filled rectangle with rounded corners (points, top-left origin; radius in points, 0 for
    /// square corners).
    public func addRect(_ layer: LayerID, _ rect: Rect, color: RGBA, cornerRadius: Float = 0) {
        // The one place a rectangle goes from points to pixels: instances, damage, scissors and
        // culling are all in whole device pixels.
        let s = scale
        let x = rect.x * s, y = rect.y * s, w = rect.width * s, h = rect.height * s
        guard isVisible(layer, x, y, w, h) else { return }
        InstanceEncoder.appendRect(
            x: x, y: y, width: w, height: h, color: color,
            cornerRadius: cornerRadius * s, to: &layers[layer].rects)
        layers[layer].bounds.add(x, y, w, h)
        layers[layer].area += w * h
    }

    /// Whether a rectangle (the layer's pixels) can show: not empty, and for a layer without a
    /// transform inside the viewport and the layer's clip.
    @inline(__always)
    func isVisible(_ layer: LayerID, _ x: Float, _ y: Float, _ w: Float, _ h: Float) -> Bool {
        guard w > 0, h > 0 else { return false }
        // A transformed layer keeps everything it is given: its transform (or its group's) may
        // bring it into view in a later frame without it being added again (a retained layer).
        guard layers[layer].transform == nil else { return true }
        guard x < Float(width), y < Float(height), x + w > 0, y + h > 0 else { return false }
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
        let frameChanged = damageTracker.frameChanged(width: width, height: height, clearColor: clearColor)
        for i in layers.indices {
            layers[i].screenBounds = layers[i].transform.map { layers[i].bounds.transformed(by: $0) } ?? layers[i].bounds
            let rectsChanged = layers[i].rects != layers[i].previousRects
            let glyphsChanged = layers[i].glyphs != layers[i].previousGlyphs
            layers[i].rectsChanged = rectsChanged
            layers[i].glyphsChanged = glyphsChanged
            layers[i].imagesChanged = layers[i].images != layers[i].previousImages || layers[i].imagesDeleted
            if glyphsChanged { layers[i].glyphsStale = true }
            if layers[i].imagesChanged { layers[i].imagesStale = true }
            layers[i].strokesChanged = layers[i].strokes != layers[i].previousStrokes
            if layers[i].strokesChanged { layers[i].strokesStale = true }
            if layers[i].changed {
                layers[i].cacheValid = false
                changed.add(
                    DamageTracker.layerChange(
                        bounds: layers[i].screenBounds, previousBounds: layers[i].previousBounds,
                        clip: layers[i].clip, previousClip: layers[i].previousClip))
            }
        }
        if let moved = backdrop?.updateRing(width: width, height: height) { changed.add(moved) }
        damage = DamageTracker.damage(changed: changed, frameChanged: frameChanged, width: width, height: height)

        // What this buffer needs: the changes of the frames since it was drawn.
        let age = forcedRedraw != nil || !usesPartialRedraw ? 0 : (givenAge ?? EGLCurrentSurface.bufferAge())
        let redraw = damageTracker.record(
            changed: changed, width: width, height: height, clearColor: clearColor,
            age: age, forced: forcedRedraw)

        prepareCacheTargets()

        guard var (x0, y0, x1, y1) = pixelRegion(redraw) else {
            redrawn = .none
            for i in layers.indices { layers[i].keepAsPrevious(changed: layers[i].contentsChanged) }
            return
        }
        // A forced region (the warm-up's) stays as it is: it builds the partial paths' shaders.
        if forcedRedraw == nil, Float(x1 - x0) * Float(y1 - y0) > partialRedrawMaximumCoverage * Float(width) * Float(height) {
            (x0, y0, x1, y1) = (0, 0, width, height)
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
            instances += layers[i].instanceCount(rects: layers[i].rects)
            area += layers[i].area
        }
        let overdraw = area / max(1, Float(width) * Float(height))
        let depthStep =
            usesDepthPass && usesInstancing && overdraw >= depthPassMinimumOverdraw
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
            instances += layers[i].cached ? 1 : layers[i].instanceCount(rects: layers[i].visible)
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
            clearRedrawn(mask, region: (x0, y0, x1, y1), partial: partial)
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
            clearRedrawn(mask, region: (x0, y0, x1, y1), partial: partial)
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
                    drawContents(layer: i, depthStep: depthStep)
                }
            }
            layers[i].keepAsPrevious(changed: layers[i].contentsChanged)
            if !layers[i].rectsStale { layers[i].keepVisibleAsPrevious() }
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        if usedDepthPass {
            glDisable(GLenum(GL_DEPTH_TEST))
            glDepthMask(GLboolean(GL_TRUE))
        }
    }

    /// Clears what this frame redraws, `region` (x0 y0 x1 y1, top-left origin; the scissor set to
    /// it when `partial`); under a scroll cache its window is copied in instead of cleared.
    private func clearRedrawn(_ mask: GLbitfield, region: (Int32, Int32, Int32, Int32), partial: Bool) {
        if let backdrop {
            backdrop.clearCopyingWindow(mask, region: region, partial: partial, height: height)
        } else {
            glClear(mask)
        }
    }

    /// A region rounded out to whole pixels and cut to the viewport: (x0, y0, x1, y1), top-left
    /// origin; nil when nothing is left.
    func pixelRegion(_ b: Bounds) -> (Int32, Int32, Int32, Int32)? {
        b.pixelRegion(width: width, height: height)
    }

    private var culler = OcclusionCuller()

    /// Fills each layer's ``RendererLayer/visible`` with its rectangles less those wholly hidden behind
    /// nearer opaque insides (``OcclusionCuller``); a cached layer is drawn from its texture and a
    /// transformed layer's rectangles are not where they were laid out, so nothing of either is
    /// left out and neither hides anything.
    private func cullHidden() {
        culler.begin(width: width, height: height)
        hiddenRects = 0
        for i in layers.indices.reversed() {
            layers[i].visible.removeAll(keepingCapacity: true)
            // A transformed layer steps aside: the culler reasons about screen rectangles only.
            if layers[i].cached || layers[i].transform != nil {
                layers[i].visible.append(contentsOf: layers[i].rects)
                continue
            }
            hiddenRects += culler.cull(layers[i].rects, marksCover: layers[i].clip == nil, into: &layers[i].visible)
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
    func layerScissor(_ i: Int, _ region: (Int32, Int32, Int32, Int32), partial: Bool) -> Bool {
        guard let clip = layers[i].clip else {
            setScissor(region, partial: partial)
            return true
        }
        // The clip in GL's coordinates (bottom-left origin), on whole pixels within the viewport
        // (a transform can put a clip anywhere, or make it not a number: nothing is left then).
        let w = Float(width), h = Float(height)
        let left = clip.x, right = clip.x + clip.width, top = h - clip.y - clip.height, bottom = h - clip.y
        guard left < w, right > 0, top < h, bottom > 0 else { return false }
        var x0 = GLint(max(0, left)), y0 = GLint(max(0, top))
        var x1 = x0 + GLsizei(min(w, right) - max(0, left)), y1 = y0 + GLsizei(min(h, bottom) - max(0, top))
        if partial {
            x0 = max(x0, region.0); y0 = max(y0, region.1)
            x1 = min(x1, region.0 + region.2); y1 = min(y1, region.1 + region.3)
        }
        guard x1 > x0, y1 > y0 else { return false }
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(x0, y0, x1 - x0, y1 - y0)
        return true
    }
}

// Measured (llvmpipe under callgrind):
// - Cached layers: the bounce scene's 60 views with the HUD take 2.46 million instructions per
//   frame for the whole process with the HUD cached, 3.15 million drawn directly.
// - The opaque pass: the bounce scene's 60 views and the scroll list take a third more
//   instructions with it, the 20,000 views a fifth as many (hence depthPassMinimumOverdraw 2).
// - A region over most of the surface, cleared under a scissor on llvmpipe: the bounce scene at
//   640x480 in the vkms VM (qemu TCG), whose four buffers' changes span nearly the whole surface,
//   swapped in 13.5 ms a frame from frame 4 on (when buffer ages allow partial redraws), 4 ms
//   redrawn whole (2026-11-27).
