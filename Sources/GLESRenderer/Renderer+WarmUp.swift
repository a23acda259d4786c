import EGLGraphics

extension Renderer {
    /// Draws what the layers hold now (call between ``beginFrame(width:height:clearColor:bufferAge:)`` and
    /// ``endFrame()``, after the scene's own drawing) plus rectangles, text and images that cross every edge
    /// of the viewport, into the current back buffer, and waits for it; the caller does not present it.
    ///
    /// Drivers build code for each combination of state they meet: llvmpipe compiles shader and
    /// clipping variants with LLVM the first time, which can take many refreshes. A warm-up frame
    /// moves that cost out of the first animated frames (one of the first views to cross an edge
    /// would otherwise stall a frame). The warm-up also redraws in part (as a buffer age makes
    /// later frames do: scissored clears and draws, cached layers redrawn within them) and takes
    /// the row cache's paths (``ScrollCache``), whose variants would otherwise be met mid-scroll.
    /// - Parameter partialRedraws: whether later frames may be redrawn in part, so the warm-up
    ///   draws such frames too; nil: when partial redraw is on and the current EGL surface tells
    ///   its buffers' age (where it cannot, every frame is whole and those variants would be built
    ///   for nothing). True when the frames will be given ages
    ///   (``beginFrame(width:height:clearColor:bufferAge:)``).
    public func warmUp(partialRedraws: Bool? = nil) {
        let w = Float(width) / scale, h = Float(height) / scale  // points: added as a scene adds them
        let layer = warmUpLayer ?? makeLayer(reserving: 8)
        warmUpLayer = layer
        let red = RGBA(1, 0, 0, 0.5)
        for rect in [
            Rect(x: -10, y: h / 2, width: 20, height: 20), Rect(x: w - 10, y: h / 2, width: 20, height: 20),
            Rect(x: w / 2, y: -10, width: 20, height: 20), Rect(x: w / 2, y: h - 10, width: 20, height: 20),
            Rect(x: -10, y: -10, width: w + 20, height: h + 20), Rect(x: 10, y: 10, width: 20, height: 20)
        ] {
            addRect(layer, rect, color: red, cornerRadius: 4)
        }
        addRect(layer, Rect(x: w / 2 - 10, y: h / 2 - 10, width: 20, height: 20), color: RGBA(1, 0, 0, 1), cornerRadius: 4)
        addText(layer, "Warm-up 0123", x: -8, baseline: h - 2, face: 0, color: red)
        addText(layer, "Warm-up 0123", x: w - 40, baseline: 8, face: 0, color: red)
        // A stroke (its own program) crossing the left edge.
        var stroke = Stroke(width: 4, color: red)
        stroke.append(contentsOf: [Point(x: -10, y: 20), Point(x: 30, y: 20), Point(x: 30, y: 40)])
        addStroke(layer, stroke)
        // An image across an edge and one inside (the image program's variants).
        if warmUpImage == nil { warmUpImage = try? makeImage(width: 1, height: 1, rgba: [255, 0, 0, 128]) }
        if let image = warmUpImage {
            addImage(layer, image, in: Rect(x: -10, y: h / 3, width: 20, height: 20))
            addImage(layer, image, in: Rect(x: w / 3, y: h / 3, width: 20, height: 20), opacity: 0.5)
        }
        // The scrolling list's own paths first (its rows drawn in strips, copied around the ring).
        backdrop?.warmUp(width: width, height: height)
        // Both ways of drawing: blended only, and with the opaque pass (when there is a depth
        // buffer); each whole, then partly redrawn (scissored clears and draws, and cached layers
        // drawn into their textures within such a frame, as a buffer age makes them: llvmpipe
        // builds other variants for those).
        let minimumOverdraw = depthPassMinimumOverdraw
        let part = Bounds(minX: 1, minY: 1, maxX: Float(width) - 1, maxY: Float(height) - 1)  // partial, over every layer and clip edge
        let partly = partialRedraws ?? (usesPartialRedraw && EGLCurrentSurface.tellsBufferAge)
        // Every layer keeps its contents through the passes (a layer that is not retained would
        // swap them out at the first pass's end and draw nothing in the others).
        var retained = [Bool]()
        for i in layers.indices {
            retained.append(layers[i].retained)
            layers[i].retained = true
        }
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
        for i in layers.indices { layers[i].retained = retained[i] }
        layers[layer].reset()
        invalidateBuffers()
        finish()
    }
}

// Measured (llvmpipe): each variant first met mid-scroll costs 120-210 ms in the vkms VM under
// qemu TCG (a dozen refreshes); the partial-redraw variants take 17 ms of a 90 ms start on
// Wayland where no buffer age is told (hence the partialRedraws default).
