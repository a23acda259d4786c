internal import CGLES

/// A batched GLES renderer: rounded rectangles and text in layers, one draw call per layer and
/// kind (rectangles, glyphs), clipped per layer with the scissor.
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
        var rectBuffer: GLuint = 0
        var glyphBuffer: GLuint = 0
        /// Kept from frame to frame until its owner clears it (see ``Renderer/setRetained(_:_:)``).
        var retained = false

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

        mutating func clear() {
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
        var isEmpty: Bool { minX > maxX }
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
    /// What changed since the previous frame.
    public private(set) var damage: Damage = .full

    private static let rectFloats = 9    // x y w h r g b a radius
    private static let glyphFloats = 12  // x y w h r g b a u v uw vh

    private var layers: [Layer] = []
    private var warmUpLayer: LayerID?
    private let rectProgram: ShaderProgram
    private let glyphProgram: ShaderProgram
    private let rectViewport: GLint
    private let glyphViewport: GLint
    private let glyphAtlasSize: GLint
    private let glyphSampler: GLint
    private var cornerBuffer: GLuint = 0
    private var atlasTexture: GLuint = 0
    private var expanded = ContiguousArray<Float>()
    private var width: Int32 = 0
    private var height: Int32 = 0
    private var clearColor = RGBA(0, 0, 0, 0)
    private var previousFrame: (Int32, Int32, RGBA)?

    /// Builds programs and buffers and uploads the atlas in the current GL context.
    /// - Parameter glesMajorVersion: the context's version; 2 forces streamed vertices.
    public init(atlas: GlyphAtlas, glesMajorVersion: Int32) throws(GLError) {
        self.atlas = atlas
        usesInstancing = glesMajorVersion >= 3
        let dialect: Shaders.Dialect = usesInstancing ? .es300 : .es100
        rectProgram = try ShaderProgram(vertex: Shaders.rectVertex(dialect), fragment: Shaders.rectFragment(dialect),
                                        attributes: Shaders.attributes)
        glyphProgram = try ShaderProgram(vertex: Shaders.glyphVertex(dialect), fragment: Shaders.glyphFragment(dialect),
                                         attributes: Shaders.attributes)
        rectViewport = rectProgram.uniform("u_viewport")
        glyphViewport = glyphProgram.uniform("u_viewport")
        glyphAtlasSize = glyphProgram.uniform("u_atlas_size")
        glyphSampler = glyphProgram.uniform("u_atlas")

        let corners: [Float] = [0, 0, 1, 0, 0, 1, 1, 1]
        glGenBuffers(1, &cornerBuffer)
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), cornerBuffer)
        glBufferData(GLenum(GL_ARRAY_BUFFER), corners.count * 4, corners, GLenum(GL_STATIC_DRAW))

        glGenTextures(1, &atlasTexture)
        glBindTexture(GLenum(GL_TEXTURE_2D), atlasTexture)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glTexImage2D(GLenum(GL_TEXTURE_2D), 0, GL_ALPHA, atlas.width, atlas.height, 0, GLenum(GL_ALPHA),
                     GLenum(GL_UNSIGNED_BYTE), atlas.pixels)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
        let status = glGetError()
        guard status == GL_NO_ERROR else { throw GLError(message: "renderer set-up failed (GL error 0x\(String(status, radix: 16)))") }
    }

    deinit {
        for layer in layers {
            var buffers = [layer.rectBuffer, layer.glyphBuffer]
            glDeleteBuffers(2, &buffers)
        }
        glDeleteBuffers(1, &cornerBuffer)
        glDeleteTextures(1, &atlasTexture)
        glDeleteProgram(rectProgram.program)
        glDeleteProgram(glyphProgram.program)
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
    /// frames (one of the first views to cross an edge would otherwise stall a frame).
    public func warmUp() {
        let w = Float(width), h = Float(height)
        let layer = warmUpLayer ?? makeLayer(reserving: 8)
        warmUpLayer = layer
        let red = RGBA(1, 0, 0, 0.5)
        for rect in [Rect(x: -10, y: h / 2, width: 20, height: 20), Rect(x: w - 10, y: h / 2, width: 20, height: 20),
                     Rect(x: w / 2, y: -10, width: 20, height: 20), Rect(x: w / 2, y: h - 10, width: 20, height: 20),
                     Rect(x: -10, y: -10, width: w + 20, height: h + 20), Rect(x: 10, y: 10, width: 20, height: 20)] {
            addRect(layer, rect, color: red, cornerRadius: 4)
        }
        addText(layer, Array("Warm-up 0123".utf8), x: -8, baseline: h - 2, face: 0, color: red)
        addText(layer, Array("Warm-up 0123".utf8), x: w - 40, baseline: 8, face: 0, color: red)
        endFrame()
        layers[layer].reset()
        finish()
    }

    /// Adds a layer, drawn after the ones before it. Make layers at set-up, not per frame.
    /// `reserving` sizes its buffers for that many rectangles and glyphs.
    public func makeLayer(reserving capacity: Int = 256) -> LayerID {
        var layer = Layer()
        layer.rects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.previousRects.reserveCapacity(capacity * Renderer.rectFloats)
        layer.glyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        layer.previousGlyphs.reserveCapacity(capacity * Renderer.glyphFloats)
        var buffers: [GLuint] = [0, 0]
        glGenBuffers(2, &buffers)
        layer.rectBuffer = buffers[0]
        layer.glyphBuffer = buffers[1]
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

    /// Empties a layer now (for a retained layer, before laying out its new contents).
    public func clear(_ layer: LayerID) {
        layers[layer].clear()
    }

    /// Starts a frame: every layer that is not retained starts empty.
    public func beginFrame(width: Int32, height: Int32, clearColor: RGBA) {
        self.width = width
        self.height = height
        self.clearColor = clearColor
        for i in layers.indices where !layers[i].retained {
            layers[i].clear()
        }
    }

    /// A filled rectangle with rounded corners (radius in pixels; 0 for square corners).
    public func addRect(_ layer: LayerID, _ rect: Rect, color: RGBA, cornerRadius: Float = 0) {
        layers[layer].rects.append(rect.x); layers[layer].rects.append(rect.y)
        layers[layer].rects.append(rect.width); layers[layer].rects.append(rect.height)
        layers[layer].rects.append(color.r); layers[layer].rects.append(color.g)
        layers[layer].rects.append(color.b); layers[layer].rects.append(color.a)
        layers[layer].rects.append(cornerRadius)
        layers[layer].bounds.add(rect.x, rect.y, rect.width, rect.height)
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
            if g.width > 0 && g.height > 0 {
                let gx = pen + Float(g.bearingX), gy = baseline - Float(g.bearingY)
                let w = Float(g.width), h = Float(g.height)
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

    /// Number of rectangles in a layer this frame.
    public func rectCount(_ layer: LayerID) -> Int { layers[layer].rects.count / Renderer.rectFloats }

    /// Clears, draws every layer, and computes ``damage``.
    public func endFrame() {
        drawCalls = 0
        uploads = 0
        glViewport(0, 0, width, height)
        glDisable(GLenum(GL_SCISSOR_TEST))
        glClearColor(clearColor.r * clearColor.a, clearColor.g * clearColor.a, clearColor.b * clearColor.a, clearColor.a)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glEnable(GLenum(GL_BLEND))
        glBlendFunc(GLenum(GL_ONE), GLenum(GL_ONE_MINUS_SRC_ALPHA))

        var changed = Bounds()
        let frameChanged = previousFrame.map { $0.0 != width || $0.1 != height || $0.2 != clearColor } ?? true
        for i in layers.indices {
            if let clip = layers[i].clip {
                glEnable(GLenum(GL_SCISSOR_TEST))
                glScissor(GLint(clip.x), GLint(Float(height) - clip.y - clip.height), GLsizei(clip.width), GLsizei(clip.height))
            } else {
                glDisable(GLenum(GL_SCISSOR_TEST))
            }
            let rectsChanged = layers[i].rects != layers[i].previousRects
            let glyphsChanged = layers[i].glyphs != layers[i].previousGlyphs
            if rectsChanged || glyphsChanged {
                var region = layers[i].bounds
                region.add(layers[i].previousBounds)
                if let clip = layers[i].clip {
                    region.minX = max(region.minX, clip.x); region.minY = max(region.minY, clip.y)
                    region.maxX = min(region.maxX, clip.x + clip.width); region.maxY = min(region.maxY, clip.y + clip.height)
                }
                changed.add(region)
            }
            drawRects(layer: i, upload: rectsChanged)
            drawGlyphs(layer: i, upload: glyphsChanged)
            layers[i].keepAsPrevious(changed: rectsChanged || glyphsChanged)
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        if frameChanged {
            damage = .full
        } else if changed.isEmpty {
            damage = .none
        } else {
            let x = max(0, changed.minX.rounded(.down)), y = max(0, changed.minY.rounded(.down))
            damage = .region(Rect(x: x, y: y, width: min(Float(width), changed.maxX.rounded(.up)) - x,
                                  height: min(Float(height), changed.maxY.rounded(.up)) - y))
        }
        previousFrame = (width, height, clearColor)
    }

    // MARK: Drawing

    private func drawRects(layer i: Int, upload: Bool) {
        let data = layers[i].rects
        let count = data.count / Renderer.rectFloats
        guard count > 0 else { return }
        glUseProgram(rectProgram.program)
        glUniform2f(rectViewport, Float(width), Float(height))
        draw(data: data, count: count, floats: Renderer.rectFloats, buffer: layers[i].rectBuffer, upload: upload,
             attributes: Renderer.rectAttributes)
    }

    private func drawGlyphs(layer i: Int, upload: Bool) {
        let data = layers[i].glyphs
        let count = data.count / Renderer.glyphFloats
        guard count > 0 else { return }
        glUseProgram(glyphProgram.program)
        glUniform2f(glyphViewport, Float(width), Float(height))
        glUniform2f(glyphAtlasSize, Float(atlas.width), Float(atlas.height))
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), atlasTexture)
        glUniform1i(glyphSampler, 0)
        draw(data: data, count: count, floats: Renderer.glyphFloats, buffer: layers[i].glyphBuffer, upload: upload,
             attributes: Renderer.glyphAttributes)
    }

    /// Per-instance attribute layouts: (location, components, first float). Static, so drawing
    /// builds no arrays per frame.
    private static let rectAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4), (3, 1, 8)]
    private static let glyphAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4), (4, 4, 8)]
    /// The six corners of the two triangles of an expanded (GLES 2) instance.
    private static let triangleCorners: [(Float, Float)] = [(0, 0), (1, 0), (0, 1), (0, 1), (1, 0), (1, 1)]

    /// Draws `count` instances: instanced on GLES 3, expanded to triangles on GLES 2.
    /// `attributes`: (location, components, first float) of each per-instance attribute.
    private func draw(data: ContiguousArray<Float>, count: Int, floats: Int, buffer: GLuint, upload: Bool,
                      attributes: [(GLuint, GLint, Int)]) {
        if usesInstancing {
            glBindBuffer(GLenum(GL_ARRAY_BUFFER), cornerBuffer)
            glEnableVertexAttribArray(0)
            glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), 0, nil)
            glVertexAttribDivisor(0, 0)
            glBindBuffer(GLenum(GL_ARRAY_BUFFER), buffer)
            if upload {
                data.withUnsafeBytes { raw in
                    glBufferData(GLenum(GL_ARRAY_BUFFER), raw.count, raw.baseAddress, GLenum(GL_STREAM_DRAW))
                }
                uploads += 1
            }
            let stride = GLsizei(floats * 4)
            for (location, components, first) in attributes {
                glEnableVertexAttribArray(location)
                glVertexAttribPointer(location, components, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride,
                                      UnsafeRawPointer(bitPattern: first * 4))
                glVertexAttribDivisor(location, 1)
            }
            glDrawArraysInstanced(GLenum(GL_TRIANGLE_STRIP), 0, 4, GLsizei(count))
            for (location, _, _) in attributes { glVertexAttribDivisor(location, 0) }
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
                expanded.withUnsafeBytes { raw in
                    glBufferData(GLenum(GL_ARRAY_BUFFER), raw.count, raw.baseAddress, GLenum(GL_STREAM_DRAW))
                }
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
        }
        glDisableVertexAttribArray(0)
        for (location, _, _) in attributes { glDisableVertexAttribArray(location) }
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
