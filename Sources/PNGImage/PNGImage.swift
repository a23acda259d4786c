internal import CPNG

/// Reads and writes 8-bit RGBA images as PNG files with libpng's simplified API.
public enum PNGImage {
    public struct ReadError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot read PNG \(path): \(reason)" }
    }

    /// The largest image read, in pixels a side: a file cannot make the reader allocate more.
    public static let maximumSide = 16384

    /// Reads a PNG file of any colour type and depth as 8-bit RGBA (straight alpha, rows top to
    /// bottom, `width*4` bytes per row), refusing one wider or taller than `maximumSide` before
    /// decoding it.
    public static func read(path: String, maximumSide: Int = maximumSide) throws(ReadError) -> (width: Int, height: Int, rgba: [UInt8]) {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_file(&image, path) != 0 else {
            throw ReadError(path: path, reason: message(image, or: "not a PNG file, or it cannot be opened"))
        }
        let width = Int(image.width), height = Int(image.height)
        let maximumSide = min(maximumSide, PNGImage.maximumSide)
        guard width > 0, height > 0, width <= maximumSide, height <= maximumSide else {
            png_image_free(&image)
            throw ReadError(path: path, reason: "\(width)×\(height) pixels is beyond \(maximumSide) a side")
        }
        image.format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)  // PNG_FORMAT_RGBA
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let ok = pixels.withUnsafeMutableBytes { raw in
            png_image_finish_read(&image, nil, raw.baseAddress, Int32(width * 4), nil)
        }
        guard ok != 0 else {
            let reason = message(image, or: "libpng could not decode it")
            png_image_free(&image)
            throw ReadError(path: path, reason: reason)
        }
        return (width, height, pixels)
    }

    private static func message(_ image: png_image, or fallback: String) -> String {
        let text = withUnsafeBytes(of: image.message) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return text.isEmpty ? fallback : text
    }

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
