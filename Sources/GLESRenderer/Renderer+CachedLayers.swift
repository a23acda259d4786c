internal import CGLES

/// Cached layers (``Renderer/setCached(_:_:)``): drawn into a texture of their own when they
/// change, composited from it as one quad every frame.
extension Renderer {
    /// A cached layer's texture format (internal format, format): unsized RGBA, which GLES 2 takes too.
    static let cacheFormats: [(GLint, GLint)] = [(GL_RGBA, GL_RGBA)]

    /// Gives each cached layer a texture and framebuffer of the viewport's size (made, or remade
    /// when the size changed). A layer whose framebuffer the driver cannot use is drawn directly.
    func prepareCacheTargets() {
        for i in layers.indices where layers[i].cached && layers[i].cacheSize != (width, height) {
            let complete = layers[i].cache.allocate(width: width, height: height, formats: Renderer.cacheFormats)
            layers[i].cacheSize = (width, height)
            layers[i].cacheValid = false
            if !complete { layers[i].cached = false }
        }
    }

    /// Draws layer `i` into its texture: over transparent black, whole, in its clip.
    func renderCache(layer i: Int) {
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
            drawStrokes(layer: i, depthStep: 0)
            drawGlyphs(layer: i, depthStep: 0)
        }
        glDisable(GLenum(GL_SCISSOR_TEST))
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), GLuint(previous))
        layers[i].cacheValid = true
    }

    /// Composites cached layer `i` from its texture: one quad over its bounds (whole pixels).
    func drawComposite(layer i: Int, depthStep: Float) {
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
}
