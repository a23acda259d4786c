/// Drawing at a display's scale (HiDPI): scenes add rectangles and text in points, the renderer
/// draws them at ``Renderer/scale`` pixels per point with glyphs rasterised at that scale.
extension Renderer {
    /// A face's vertical metrics in points (at any scale the same, up to the rasteriser's rounding).
    public struct FaceMetrics: Sendable, Equatable {
        /// From the baseline up to the top of the tallest glyphs.
        public var ascender: Float
        /// From the baseline down (negative).
        public var descender: Float
        /// From one baseline to the next.
        public var lineHeight: Float
    }

    /// Draws at `scale` pixels per point from the next frame (the surface's, e.g.
    /// `DisplaySurface.scale`; call it at set-up and when the surface reports a new scale). When
    /// the scale changes the glyph atlas is rasterised again at the new size (once, here; not per
    /// frame; glyphs beyond ASCII again when text next needs them) and put into the same texture,
    /// every layer, retained and cached ones too, starts empty (their owners lay them out again,
    /// e.g. when ``scale`` differs from the one they used),
    /// clips are scaled anew, and the next frame is drawn whole. Returns whether it changed.
    ///
    /// A ``ScrollCache`` under the layers keeps working in pixels: use it at scale 1.
    @discardableResult
    public func setScale(_ newScale: Double) throws -> Bool {
        guard newScale.isFinite, newScale > 0 else { throw GLError(message: "Renderer.setScale(\(newScale)): the scale must be above 0") }
        guard Float(newScale) != scale else { return false }
        let old = atlas
        let rebuilt = try GlyphAtlas(
            pixelSizes: old.requestedSizes, fontPaths: [old.fontPath], size: old.requestedSide, scale: newScale,
            glyphCapacity: old.glyphCapacity)
        shared.replaceAtlas(rebuilt)
        scale = Float(newScale)
        for i in layers.indices {
            layers[i].clear()
            layers[i].cacheValid = false
        }
        updatePlacement()
        invalidateBuffers()
        return true
    }

    /// Face `face`'s metrics in points.
    public func metrics(face: Int) -> FaceMetrics {
        let f = atlas.faces[face]
        return FaceMetrics(
            ascender: Float(f.ascender) / scale, descender: Float(f.descender) / scale, lineHeight: Float(f.lineHeight) / scale)
    }

    /// The advance width of `text` in face `face`, in points: what `addText(_:_:x:baseline:face:color:)` with a `String`
    /// returns for it (glyphs it lacks are rasterised now).
    public func measure<S: StringProtocol>(_ text: S, face: Int) -> Float {
        Float(atlas.measure(text, face: face)) / scale
    }

    /// The advance width of UTF-8 `text` in face `face`, in points (each ill-formed sequence as U+FFFD).
    public func measure<C: Collection>(_ text: C, face: Int) -> Float where C.Element == UInt8 {
        Float(atlas.measure(text, face: face)) / scale
    }

    /// A rectangle in points, in pixels.
    func scaled(_ rect: Rect) -> Rect {
        Rect(x: rect.x * scale, y: rect.y * scale, width: rect.width * scale, height: rect.height * scale)
    }
}
