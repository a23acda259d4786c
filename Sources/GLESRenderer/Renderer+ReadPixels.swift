internal import CGLES

extension Renderer {
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
