internal import CGLES

// The GL objects and draw set-up that ``Renderer`` and ``ScrollCache`` share: the scroll cache
// draws its rows with the renderer's own shaders, quad and atlas, so that the pixels are the same.

/// The rectangle and glyph programs with the glyphs' atlas uniforms, looked up once, and how a
/// draw sets them (the same calls in the renderer's layers and the scroll cache's rows).
struct RectGlyphPrograms {
    /// Floats per instance: rectangles x y w h r g b a radius, glyphs x y w h r g b a u v uw vh.
    static let rectFloats = 9
    static let glyphFloats = 12
    /// Their per-instance attribute layouts: (location, components, first float). Static, so
    /// drawing builds no arrays per frame.
    static let rectAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4), (3, 1, 8)]
    static let glyphAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4), (4, 4, 8)]

    let rect: ShaderProgram
    let glyph: ShaderProgram
    private let glyphAtlasSize: GLint
    private let glyphSampler: GLint

    init(_ dialect: Shaders.Dialect) throws(GLError) {
        rect = try ShaderProgram(dialect, vertex: Shaders.rectVertex, fragment: Shaders.rectFragment)
        glyph = try ShaderProgram(dialect, vertex: Shaders.glyphVertex, fragment: Shaders.glyphFragment)
        glyphAtlasSize = glyph.uniform("u_atlas_size")
        glyphSampler = glyph.uniform("u_atlas")
    }

    func delete() {
        glDeleteProgram(rect.program)
        glDeleteProgram(glyph.program)
    }

    /// Uses the glyph program (as ``ShaderProgram/use(viewport:depth:)``), sampling `atlasTexture`
    /// (of `atlasSize` pixels) on unit 0.
    @inline(__always)
    func useGlyphs(
        viewport: (Float, Float), depth: (Float, Float), transform: Transform2D = .identity, atlasSize: (Float, Float),
        atlasTexture: GLuint
    ) {
        glyph.use(viewport: viewport, depth: depth, transform: transform)
        glUniform2f(glyphAtlasSize, atlasSize.0, atlasSize.1)
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), atlasTexture)
        glUniform1i(glyphSampler, 0)
    }
}

/// The GPU objects a renderer and its scroll cache both draw with: the rectangle and glyph
/// programs, the unit quad and the glyph atlas's texture, made once per renderer. Deleted when
/// the last of them lets go (in the GL context they were made in).
///
/// The atlas gains glyphs while text is laid out (and may be shared by several renderers, each
/// with its own texture): before glyphs are drawn, what it rasterised since this texture was last
/// brought up to date is uploaded, one band of rows (all of it after the bitmap grew).
final class SharedGPUResources {
    let programs: RectGlyphPrograms
    let cornerBuffer: GLuint
    let atlasTexture: GLuint
    /// The glyphs in ``atlasTexture`` (replaced when the renderer's scale changes).
    private(set) var atlas: GlyphAtlas
    /// What of the atlas the texture holds: its packer's count and current shelf then, and its height.
    private var uploadedPlaced = 0
    private var uploadedShelfTop: Int32 = 0
    private var uploadedHeight: Int32 = 0
    /// Uploads to the atlas texture since it was made (whole or in part; for tests).
    private(set) var atlasUploads = 0

    init(atlas: GlyphAtlas, dialect: Shaders.Dialect) throws(GLError) {
        programs = try RectGlyphPrograms(dialect)
        cornerBuffer = GLResources.makeCornerBuffer()
        atlasTexture = GLResources.uploadAtlas(atlas)
        self.atlas = atlas
        recordUpload()
    }

    /// Puts `atlas` into the same texture (its new size and pixels).
    func replaceAtlas(_ atlas: GlyphAtlas) {
        self.atlas = atlas
        glBindTexture(GLenum(GL_TEXTURE_2D), atlasTexture)
        GLResources.uploadAtlasPixels(atlas)
        recordUpload()
    }

    /// Uses the glyph program sampling the atlas (``RectGlyphPrograms/useGlyphs(viewport:depth:transform:atlasSize:atlasTexture:)``),
    /// its texture brought up to date first.
    func useGlyphs(viewport: (Float, Float), depth: (Float, Float), transform: Transform2D = .identity) {
        updateAtlasTexture()
        programs.useGlyphs(
            viewport: viewport, depth: depth, transform: transform, atlasSize: (Float(atlas.width), Float(atlas.height)),
            atlasTexture: atlasTexture)
    }

    /// Uploads the glyphs rasterised since the last upload: the rows from the packer's shelf then
    /// down to what it has used now (everything placed since lies there), or the whole bitmap
    /// when it grew. Nothing when nothing was added (a warm frame).
    func updateAtlasTexture() {
        let packer = atlas.packer
        guard packer.placed != uploadedPlaced || atlas.height != uploadedHeight else { return }
        glBindTexture(GLenum(GL_TEXTURE_2D), atlasTexture)
        if atlas.height != uploadedHeight {
            GLResources.uploadAtlasPixels(atlas)
        } else {
            GLResources.uploadAtlasRows(atlas, from: uploadedShelfTop, to: packer.usedBottom)
        }
        recordUpload()
    }

    private func recordUpload() {
        uploadedPlaced = atlas.packer.placed
        uploadedShelfTop = atlas.packer.shelfTop
        uploadedHeight = atlas.height
        atlasUploads += 1
    }

    deinit {
        var cornerBuffer = cornerBuffer, atlasTexture = atlasTexture
        glDeleteBuffers(1, &cornerBuffer)
        glDeleteTextures(1, &atlasTexture)
        programs.delete()
    }
}

/// A colour texture and a framebuffer that draws into it (a cached layer's; the scroll cache's
/// ring and scratch rows), made the first time it is given storage.
struct RenderTarget {
    private(set) var texture: GLuint = 0
    private(set) var framebuffer: GLuint = 0
    /// A depth renderbuffer attached only so that the driver rasterises as into a window with
    /// a depth buffer (0: none).
    private var depthBuffer: GLuint = 0

    /// Gives the texture storage of `width`×`height` in the first of `formats` (internal format,
    /// format; unsigned bytes) that the driver takes and can render to, nearest and clamped, and
    /// attaches it to the framebuffer. False when no format does. Leaves `GL_FRAMEBUFFER` bound as
    /// it found it (and the texture bound to `GL_TEXTURE_2D`); GL errors pending before are dropped.
    ///
    /// `depth`: also attach a 16-bit depth renderbuffer, never cleared nor tested. Its only use:
    /// llvmpipe rasterises into a colour buffer without depth buffer by another path (its
    /// "linear" rasteriser, 8-bit fixed point, for BGRA targets) whose pixels differ from those
    /// drawn into a window, which has a depth buffer.
    mutating func allocate(width: Int32, height: Int32, formats: [(GLint, GLint)], depth: Bool = false) -> Bool {
        if texture == 0 {
            glGenTextures(1, &texture)
            glGenFramebuffers(1, &framebuffer)
        }
        var previous: GLint = 0
        glGetIntegerv(GLenum(GL_FRAMEBUFFER_BINDING), &previous)
        defer { glBindFramebuffer(GLenum(GL_FRAMEBUFFER), GLuint(previous)) }
        glBindTexture(GLenum(GL_TEXTURE_2D), texture)
        GLResources.setNearestClamped()
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer)
        if depth {
            if depthBuffer == 0 { glGenRenderbuffers(1, &depthBuffer) }
            glBindRenderbuffer(GLenum(GL_RENDERBUFFER), depthBuffer)
            glRenderbufferStorage(GLenum(GL_RENDERBUFFER), GLenum(GL_DEPTH_COMPONENT16), width, height)
            glBindRenderbuffer(GLenum(GL_RENDERBUFFER), 0)
            glFramebufferRenderbuffer(GLenum(GL_FRAMEBUFFER), GLenum(GL_DEPTH_ATTACHMENT), GLenum(GL_RENDERBUFFER), depthBuffer)
        }
        for (internalFormat, format) in formats {
            while glGetError() != GL_NO_ERROR {}
            glTexImage2D(GLenum(GL_TEXTURE_2D), 0, internalFormat, width, height, 0, GLenum(format), GLenum(GL_UNSIGNED_BYTE), nil)
            guard glGetError() == GL_NO_ERROR else { continue }
            glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), texture, 0)
            if glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER)) == GLenum(GL_FRAMEBUFFER_COMPLETE) { return true }
        }
        return false
    }

    /// Deletes the texture and framebuffer (if they were made).
    mutating func delete() {
        if framebuffer != 0 { glDeleteFramebuffers(1, &framebuffer) }
        if texture != 0 { glDeleteTextures(1, &texture) }
        if depthBuffer != 0 { glDeleteRenderbuffers(1, &depthBuffer) }
        framebuffer = 0
        texture = 0
        depthBuffer = 0
    }
}

/// Buffers and textures made alike, and the instanced draw of the unit quad.
enum GLResources {
    /// The unit quad's corners (0,0) (1,0) (0,1) (1,1), a triangle strip, in a static buffer.
    static func makeCornerBuffer() -> GLuint {
        var buffer: GLuint = 0
        let corners: [Float] = [0, 0, 1, 0, 0, 1, 1, 1]
        glGenBuffers(1, &buffer)
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), buffer)
        glBufferData(GLenum(GL_ARRAY_BUFFER), corners.count * 4, corners, GLenum(GL_STATIC_DRAW))
        return buffer
    }

    /// `atlas` uploaded as an alpha texture, nearest and clamped (left bound to `GL_TEXTURE_2D`).
    static func uploadAtlas(_ atlas: GlyphAtlas) -> GLuint {
        var texture: GLuint = 0
        glGenTextures(1, &texture)
        glBindTexture(GLenum(GL_TEXTURE_2D), texture)
        uploadAtlasPixels(atlas)
        setNearestClamped()
        return texture
    }

    /// `atlas`'s pixels into the texture bound to `GL_TEXTURE_2D` (alpha, its size).
    static func uploadAtlasPixels(_ atlas: GlyphAtlas) {
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glTexImage2D(
            GLenum(GL_TEXTURE_2D), 0, GL_ALPHA, atlas.width, atlas.height, 0, GLenum(GL_ALPHA),
            GLenum(GL_UNSIGNED_BYTE), atlas.pixels)
    }

    /// Rows `top` up to `bottom` of `atlas`'s pixels into the texture bound to `GL_TEXTURE_2D`
    /// (whole rows: GLES 2 has no unpack row length).
    static func uploadAtlasRows(_ atlas: GlyphAtlas, from top: Int32, to bottom: Int32) {
        let top = max(0, top), bottom = min(atlas.height, bottom)
        guard bottom > top else { return }
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        atlas.pixels.withUnsafeBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return }
            glTexSubImage2D(
                GLenum(GL_TEXTURE_2D), 0, 0, top, atlas.width, bottom - top, GLenum(GL_ALPHA), GLenum(GL_UNSIGNED_BYTE),
                base + Int(top) * Int(atlas.width))
        }
    }

    /// Nearest filtering and clamping to the edges for the texture bound to `GL_TEXTURE_2D`:
    /// its pixels are sampled as they are.
    static func setNearestClamped() {
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    /// Replaces the bound `GL_ARRAY_BUFFER`'s contents with `data` (streamed: drawn once or a few times).
    @inline(__always)
    static func stream(_ data: ContiguousArray<Float>) {
        data.withUnsafeBytes { raw in
            glBufferData(GLenum(GL_ARRAY_BUFFER), raw.count, raw.baseAddress, GLenum(GL_STREAM_DRAW))
        }
    }

    /// Draws `count` instances of the unit quad from instance `first` on (GLES 3): attribute 0 the corner from
    /// `cornerBuffer`, and each of `attributes` (location, components, first float) per instance
    /// from `instanceBuffer`, `floats` floats an instance; `upload`, when given, is streamed into
    /// `instanceBuffer` first. Leaves the attributes disabled and their divisors 0.
    static func drawInstanced(
        first firstInstance: Int = 0, count: Int, floats: Int, attributes: [(GLuint, GLint, Int)], cornerBuffer: GLuint,
        instanceBuffer: GLuint, upload: ContiguousArray<Float>?
    ) {
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), cornerBuffer)
        glEnableVertexAttribArray(0)
        glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), 0, nil)
        glVertexAttribDivisor(0, 0)
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), instanceBuffer)
        if let upload { stream(upload) }
        let stride = GLsizei(floats * 4)
        for (location, components, first) in attributes {
            glEnableVertexAttribArray(location)
            glVertexAttribPointer(
                location, components, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride,
                UnsafeRawPointer(bitPattern: (firstInstance * floats + first) * 4))
            glVertexAttribDivisor(location, 1)
        }
        glDrawArraysInstanced(GLenum(GL_TRIANGLE_STRIP), 0, 4, GLsizei(count))
        for (location, _, _) in attributes { glVertexAttribDivisor(location, 0) }
        glDisableVertexAttribArray(0)
        for (location, _, _) in attributes { glDisableVertexAttribArray(location) }
    }

    /// The six corners of the two triangles of an expanded (GLES 2) instance.
    private static let triangleCorners: [(Float, Float)] = [(0, 0), (1, 0), (0, 1), (0, 1), (1, 0), (1, 1)]

    /// Draws `count` instances from instance `first` on without instancing (GLES 2): each expanded
    /// to six vertices, a corner (2 floats) followed by the instance's `floats` floats, in `buffer`.
    /// `upload`, when given, is expanded whole into `scratch` (storage reused) and streamed into
    /// `buffer` first.
    /// `attributes` as in ``drawInstanced(first:count:floats:attributes:cornerBuffer:instanceBuffer:upload:)``.
    static func drawExpanded(
        first firstInstance: Int = 0, count: Int, floats: Int, attributes: [(GLuint, GLint, Int)], buffer: GLuint,
        upload: ContiguousArray<Float>?, scratch: inout ContiguousArray<Float>
    ) {
        let vertexFloats = 2 + floats
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), buffer)
        if let data = upload {
            scratch.removeAll(keepingCapacity: true)
            for instance in 0..<data.count / floats {
                let base = instance * floats
                for (cx, cy) in triangleCorners {
                    scratch.append(cx); scratch.append(cy)
                    for k in 0..<floats { scratch.append(data[base + k]) }
                }
            }
            stream(scratch)
        }
        let stride = GLsizei(vertexFloats * 4)
        glEnableVertexAttribArray(0)
        glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride, nil)
        for (location, components, first) in attributes {
            glEnableVertexAttribArray(location)
            glVertexAttribPointer(
                location, components, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride,
                UnsafeRawPointer(bitPattern: (2 + first) * 4))
        }
        glDrawArrays(GLenum(GL_TRIANGLES), GLint(firstInstance * 6), GLsizei(count * 6))
        glDisableVertexAttribArray(0)
        for (location, _, _) in attributes { glDisableVertexAttribArray(location) }
    }
}
