internal import CPNG

/// Writes 8-bit RGBA images as PNG files with libpng's simplified API.
public enum PNGImage {
    public struct WriteError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write PNG \(path): \(reason)" }
    }

    /// Writes `pixels` (RGBA, rows top to bottom, `width*4` bytes per row).
    public static func write(path: String, width: Int, height: Int, rgba pixels: [UInt8]) throws(WriteError) {
        guard width > 0, height > 0, pixels.count >= width * height * 4 else {
            throw WriteError(path: path, reason: "bad image size \(width)×\(height) for \(pixels.count) bytes")
        }
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)  // PNG_FORMAT_RGBA
        let ok = pixels.withUnsafeBytes { raw in
            png_image_write_to_file(&image, path, 0, raw.baseAddress, Int32(width * 4), nil)
        }
        guard ok != 0 else {
            let message = withUnsafeBytes(of: image.message) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw WriteError(path: path, reason: message.isEmpty ? "libpng failed" : message)
        }
    }
}
