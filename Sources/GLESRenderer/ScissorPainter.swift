internal import CGLES

/// The smallest possible GLES painter: solid axis-aligned rectangles by scissored clears, no
/// shaders. Used by backend tests and the minimal `quad` client.
public struct ScissorPainter {
    public private(set) var width: Int32 = 0
    public private(set) var height: Int32 = 0

    public init() {}

    /// Starts a frame of `width`×`height` pixels cleared to `background`.
    public mutating func begin(width: Int32, height: Int32, background: RGBA) {
        self.width = width
        self.height = height
        glViewport(0, 0, width, height)
        glDisable(GLenum(GL_SCISSOR_TEST))
        glClearColor(background.r, background.g, background.b, background.a)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
    }

    /// Fills a rectangle given with a top-left origin.
    public func fill(x: Int32, y: Int32, width w: Int32, height h: Int32, color: RGBA) {
        glEnable(GLenum(GL_SCISSOR_TEST))
        glScissor(x, height - y - h, w, h)
        glClearColor(color.r, color.g, color.b, color.a)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
        glDisable(GLenum(GL_SCISSOR_TEST))
    }
}
