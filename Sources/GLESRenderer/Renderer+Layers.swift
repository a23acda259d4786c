internal import CGLES

/// Layers and groups: a layer made in another (its parent) is drawn within the parent's clip and
/// moved by the parent's transform as well as its own, so a card's clip holds the rows scrolled
/// inside it and a dial's rotation turns its hand.
extension Renderer {
    /// Adds a layer, drawn after the ones made before it. Make layers at set-up, not per frame.
    /// - Parameters:
    ///   - capacity: sizes its buffers for that many rectangles, images, glyphs and stroke segments.
    ///   - parent: the group it belongs to: it is drawn within the parent's clip and through the
    ///     parent's transform (after its own). Nil: the screen.
    public func makeLayer(reserving capacity: Int = 256, in parent: LayerID? = nil) -> LayerID {
        var layer = RendererLayer()
        layer.rects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.previousRects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.glyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        layer.previousGlyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        layer.opaque.reserveCapacity(capacity * Renderer.opaqueFloats)
        layer.visible.reserveCapacity(capacity * Renderer.rectFloats)
        layer.previousVisible.reserveCapacity(capacity * Renderer.rectFloats)
        // Strokes: room for `capacity` segments.
        layer.strokes.reserveCapacity(capacity * Renderer.strokeFloats)
        layer.previousStrokes.reserveCapacity(capacity * Renderer.strokeFloats)
        var buffers: [GLuint] = [0, 0, 0, 0, 0]
        glGenBuffers(5, &buffers)
        layer.rectBuffer = buffers[0]
        layer.glyphBuffer = buffers[1]
        layer.opaqueBuffer = buffers[2]
        layer.imageBuffer = buffers[3]
        layer.strokeBuffer = buffers[4]
        layer.images.reserveCapacity(capacity * Renderer.imageFloats)
        layer.previousImages.reserveCapacity(capacity * Renderer.imageFloats)
        layer.parent = parent.flatMap { layers.indices.contains($0) ? $0 : nil }
        layers.append(layer)
        updatePlacement(from: layers.count - 1)
        return layers.count - 1
    }

    /// Clips a layer to a rectangle (points, in the layer's own coordinates: it moves with the
    /// layer's transform; nil: no clip of its own), from this frame on. A layer in a group is
    /// clipped by its parent's clip too. The clip is a scissor on screen: under a rotation other
    /// than a multiple of 90° it clips to the rotated rectangle's bounding box.
    public func setClip(_ layer: LayerID, _ clip: Rect?) {
        layers[layer].pointClip = clip
        updatePlacement(from: layer)
    }

    /// Moves a layer (and the layers in it) by `transform` (points, into its parent's
    /// coordinates, or the screen's), from this frame on: translate, scale, rotate. What is added
    /// to the layer is laid out in its own coordinates. Changing it re-uploads nothing.
    public func setTransform(_ layer: LayerID, _ transform: Transform2D) {
        layers[layer].pointTransform = transform
        updatePlacement(from: layer)
    }

    /// The transform set on a layer (its own, not its parent's).
    public func transform(_ layer: LayerID) -> Transform2D { layers[layer].pointTransform }

    /// Brings the screen transform and clip (pixels) of layer `first` and the layers in it (made
    /// after it, at any depth) up to date with what is set; nil: of every layer (the scale
    /// changed). A parent is made before the layers in it, so its own are ready first.
    func updatePlacement(from first: Int? = nil) {
        placementEpoch &+= 1
        for i in (first ?? 0)..<layers.count {
            if let first, i != first {
                // Only the layers within `first`: their parent was brought up to date just now.
                guard let parent = layers[i].parent, layers[parent].placementEpoch == placementEpoch else { continue }
            }
            layers[i].placementEpoch = placementEpoch
            let own = layers[i].pointTransform
            var transform: Transform2D? =
                own.isIdentity
                ? nil : Transform2D(a: own.a, b: own.b, c: own.c, d: own.d, tx: own.tx * scale, ty: own.ty * scale)
            var parentClip: Rect?
            if let parent = layers[i].parent {
                if let outer = layers[parent].transform { transform = (transform ?? .identity).concatenating(outer) }
                parentClip = layers[parent].clip
            }
            if transform?.isIdentity == true { transform = nil }
            layers[i].transform = transform
            var clip = layers[i].pointClip.map { Renderer.screenRect(scaled($0), through: transform) }
            if let parentClip { clip = clip.map { Renderer.intersection($0, parentClip) } ?? parentClip }
            layers[i].clip = clip
        }
    }

    /// The bounding box of `rect` moved by `transform`.
    static func screenRect(_ rect: Rect, through transform: Transform2D?) -> Rect {
        guard let transform else { return rect }
        var b = Bounds()
        b.add(rect.x, rect.y, rect.width, rect.height)
        b = b.transformed(by: transform)
        return Rect(x: b.minX, y: b.minY, width: b.maxX - b.minX, height: b.maxY - b.minY)
    }

    /// Where two rectangles meet (zero-sized where they do not).
    static func intersection(_ r: Rect, _ s: Rect) -> Rect {
        let x0 = max(r.x, s.x), y0 = max(r.y, s.y)
        let x1 = min(r.x + r.width, s.x + s.width), y1 = min(r.y + r.height, s.y + s.height)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}
