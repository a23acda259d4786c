internal import CGLES
import EGLGraphics

/// Drawing a layer's passes: the opaque insides (no blending, front to back), the rounded
/// rectangles and the glyphs, instanced on GLES 3 and expanded to triangles on GLES 2.
extension Renderer {

    func drawOpaque(layer i: Int, depthStep: Float) {
        if layers[i].opaqueStale {
            layers[i].opaque.removeAll(keepingCapacity: true)
            OcclusionCuller.appendOpaqueInsides(of: layers[i].visible, to: &layers[i].opaque)
        }
        let count = layers[i].opaque.count / Renderer.opaqueFloats
        guard count > 0 else { layers[i].opaqueStale = false; return }
        opaqueProgram.use(
            viewport: (Float(width), Float(height)), depth: (Float(layers[i].depthBase), depthStep), transform: layers[i].drawTransform)
        draw(
            data: layers[i].opaque, count: count, floats: Renderer.opaqueFloats, buffer: layers[i].opaqueBuffer,
            upload: layers[i].opaqueStale, attributes: Renderer.opaqueAttributes)
        layers[i].opaqueStale = false
        opaqueDrawCalls += 1
        drawCalls -= 1
    }

    /// Draws layer `i`'s contents blended, in their order within a layer: rectangles, images,
    /// strokes, text. Each instance's depth index follows the one before.
    func drawContents(layer i: Int, depthStep: Float) {
        drawRects(layer: i, depthStep: depthStep)
        let images = layers[i].depthBase + layers[i].visible.count / Renderer.rectFloats
        drawImages(layer: i, first: images, depthStep: depthStep)
        let strokes = images + layers[i].imageCount
        drawStrokes(layer: i, first: strokes, depthStep: depthStep)
        drawGlyphs(layer: i, first: strokes + layers[i].strokes.count / Renderer.strokeFloats, depthStep: depthStep)
    }

    func drawRects(layer i: Int, depthStep: Float) {
        let data = layers[i].visible
        let count = data.count / Renderer.rectFloats
        guard count > 0 else { layers[i].rectsStale = false; return }
        programs.rect.use(
            viewport: (Float(width), Float(height)), depth: (Float(layers[i].depthBase), depthStep),
            transform: layers[i].drawTransform)
        draw(
            data: data, count: count, floats: Renderer.rectFloats, buffer: layers[i].rectBuffer, upload: layers[i].rectsStale,
            attributes: Renderer.rectAttributes)
        layers[i].rectsStale = false
    }

    func drawGlyphs(layer i: Int, first: Int, depthStep: Float) {
        let data = layers[i].glyphs
        let count = data.count / Renderer.glyphFloats
        guard count > 0 else { layers[i].glyphsStale = false; return }
        shared.useGlyphs(
            viewport: (Float(width), Float(height)),
            depth: (Float(first), depthStep),
            transform: layers[i].drawTransform)
        draw(
            data: data, count: count, floats: Renderer.glyphFloats, buffer: layers[i].glyphBuffer, upload: layers[i].glyphsStale,
            attributes: Renderer.glyphAttributes)
        layers[i].glyphsStale = false
    }

    /// Per-instance attribute layouts: (location, components, first float). Static, so drawing
    /// builds no arrays per frame.
    static let rectAttributes = RectGlyphPrograms.rectAttributes
    static let glyphAttributes = RectGlyphPrograms.glyphAttributes
    static let opaqueAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4)]

    /// Draws `count` instances of `data`: instanced on GLES 3, expanded to triangles on GLES 2.
    /// `attributes`: (location, components, first float) of each per-instance attribute.
    /// `first`: the first instance drawn (`upload` uploads all of `data`).
    func draw(
        data: ContiguousArray<Float>, first: Int = 0, count: Int, floats: Int, buffer: GLuint, upload: Bool,
        attributes: [(GLuint, GLint, Int)]
    ) {
        if usesInstancing {
            GLResources.drawInstanced(
                first: first, count: count, floats: floats, attributes: attributes, cornerBuffer: cornerBuffer,
                instanceBuffer: buffer, upload: upload ? data : nil)
        } else {
            GLResources.drawExpanded(
                first: first, count: count, floats: floats, attributes: attributes, buffer: buffer,
                upload: upload ? data : nil, scratch: &expanded)
        }
        if upload { uploads += 1 }
        drawCalls += 1
    }
}
