internal import CGLES

/// One of a ``Renderer``'s layers: this frame's instances and the previous frame's (to tell what
/// changed), the GPU buffers that hold them, and the layer's drawing state.
struct RendererLayer {
    /// The clip in pixels on screen (drawn with: the scissor; its own clip moved by its
    /// transform, within its parent's), and in points as set, in the layer's own coordinates.
    var clip: Rect?
    var pointClip: Rect?
    /// The layer whose transform and clip this one's are within (a group), and the transform as
    /// set (points, into the parent's coordinates).
    var parent: Int?
    var pointTransform = Transform2D.identity
    /// The transform from this layer's pixels to the screen's (its own and its ancestors',
    /// scaled to pixels); nil: none (the identity).
    var transform: Transform2D?
    /// The ``Renderer/updatePlacement(from:)`` pass that last brought it up to date.
    var placementEpoch = 0
    var drawTransform: Transform2D { transform ?? .identity }
    /// The previous frame's transform and clip: a change of either moves what the layer shows.
    var previousTransform: Transform2D?
    var previousClip: Rect?
    /// ``bounds`` on screen (through ``transform``), brought up to date when the frame ends.
    var screenBounds = Bounds()
    var rects = ContiguousArray<Float>()
    var glyphs = ContiguousArray<Float>()
    var previousRects = ContiguousArray<Float>()
    var previousGlyphs = ContiguousArray<Float>()
    /// Where the contents lie in the layer's own pixels, and where they lay on screen in the
    /// previous frame (``screenBounds`` then).
    var bounds = Bounds()
    var previousBounds = Bounds()
    /// Stroke segments (``Stroke``'s instances in pixels), this frame's and the previous frame's,
    /// and their GPU buffer; kept as the glyphs are.
    var strokes = ContiguousArray<Float>()
    var previousStrokes = ContiguousArray<Float>()
    var strokeBuffer: GLuint = 0
    var strokesChanged = true
    var strokesStale = true
    /// The summed area of the rectangles (pixels; overlaps counted each time).
    var area: Float = 0
    var rectBuffer: GLuint = 0
    var glyphBuffer: GLuint = 0
    /// Images: their instances (``Renderer/imageFloats`` each), the previous frame's, their GPU
    /// buffer, and whether they changed or the buffer holds older ones.
    var images = ContiguousArray<Float>()
    var previousImages = ContiguousArray<Float>()
    var imageBuffer: GLuint = 0
    var imagesChanged = true
    var imagesStale = true
    /// An image drawn in this layer was deleted (``Renderer/deleteImage(_:)``): where it was
    /// changes though the instances do not.
    var imagesDeleted = false
    var imageCount: Int { images.count / Renderer.imageFloats }

    /// Whether image instances `data` draw the image in `slot`.
    static func holds(_ slot: Float, _ data: ContiguousArray<Float>) -> Bool {
        stride(from: Renderer.imageFloats - 1, to: data.count, by: Renderer.imageFloats).contains { data[$0] == slot }
    }
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
                previousImages.removeAll(keepingCapacity: true)
                previousImages.append(contentsOf: images)
                previousStrokes.removeAll(keepingCapacity: true)
                previousStrokes.append(contentsOf: strokes)
            }
        } else {
            swap(&rects, &previousRects)
            swap(&glyphs, &previousGlyphs)
            swap(&images, &previousImages)
            swap(&strokes, &previousStrokes)
        }
        previousBounds = screenBounds
        previousTransform = transform
        previousClip = clip
        imagesDeleted = false
    }

    /// Whether the transform or clip differ from the previous frame's.
    var placementChanged: Bool { transform != previousTransform || clip != previousClip }

    /// What was drawn this frame is what the GPU buffers hold now (storage reused).
    mutating func keepVisibleAsPrevious() {
        swap(&visible, &previousVisible)
    }

    mutating func clear() {
        area = 0
        rects.removeAll(keepingCapacity: true)
        glyphs.removeAll(keepingCapacity: true)
        images.removeAll(keepingCapacity: true)
        strokes.removeAll(keepingCapacity: true)
        bounds = Bounds()
    }

    /// The instances drawn with `rects` as the rectangles (all of them, or the visible ones).
    func instanceCount(rects: ContiguousArray<Float>) -> Int {
        rects.count / Renderer.rectFloats + imageCount + strokes.count / Renderer.strokeFloats + glyphs.count / Renderer.glyphFloats
    }

    /// Whether this frame's contents differ from the previous frame's.
    var contentsChanged: Bool { rectsChanged || glyphsChanged || imagesChanged || strokesChanged }
    /// Whether its contents or placement differ from the previous frame's.
    var changed: Bool { contentsChanged || placementChanged }

    /// Empty now and in the reference: the next frame sees no change here.
    mutating func reset() {
        clear()
        previousRects.removeAll(keepingCapacity: true)
        previousGlyphs.removeAll(keepingCapacity: true)
        previousImages.removeAll(keepingCapacity: true)
        previousStrokes.removeAll(keepingCapacity: true)
        previousBounds = Bounds()
        screenBounds = Bounds()
        previousTransform = transform
        previousClip = clip
    }
}
