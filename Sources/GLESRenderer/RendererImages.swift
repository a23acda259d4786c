internal import CGLES

/// An image uploaded to a ``Renderer`` (``Renderer/makeImage(width:height:rgba:)``): a texture
/// of its own, drawn with ``Renderer/addImage(_:_:in:source:tint:opacity:)``.
public struct ImageID: Sendable, Hashable {
    let slot: Int
    /// The renderer that made it (another renderer's image draws nothing).
    let renderer: ObjectIdentifier
}

/// Why an image could not be made.
public enum ImageError: Error, CustomStringConvertible, Sendable {
    /// The file could not be read or decoded as PNG.
    case unreadable(path: String, reason: String)
    /// The pixels do not fit the size given (`bytes` given, `width`·`height`·4 needed).
    case sizeMismatch(width: Int, height: Int, bytes: Int)
    /// The image is larger than the GL driver's textures (`GL_MAX_TEXTURE_SIZE`).
    case tooLarge(width: Int, height: Int, maximum: Int)
    /// GL refused the texture.
    case gl(GLError)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot use image \(path): \(reason)"
        case .sizeMismatch(let w, let h, let bytes):
            "an image of \(w)×\(h) pixels needs \(ImageError.byteCount(w, h).map(String.init) ?? "more") bytes of RGBA, "
                + "\(bytes) were given"
        case .tooLarge(let w, let h, let maximum):
            "an image of \(w)×\(h) pixels is larger than this GL driver's textures (\(maximum) a side): scale it down first"
        case .gl(let error): "cannot upload an image: \(error)"
        }
    }
}

extension ImageError {
    /// `width`·`height`·4, or nil when that overflows (or a side is negative).
    static func byteCount(_ width: Int, _ height: Int) -> Int? {
        guard width >= 0, height >= 0 else { return nil }
        let (pixels, o1) = width.multipliedReportingOverflow(by: height)
        let (bytes, o2) = pixels.multipliedReportingOverflow(by: 4)
        return o1 || o2 ? nil : bytes
    }
}

/// The renderer's images: each one's texture and size, by slot. Slots are never reused, so a
/// retained layer that still names a deleted image draws nothing for it rather than another image.
struct ImageStore {
    struct Entry {
        var texture: GLuint
        var width: Int
        var height: Int
    }
    var entries: [Entry?] = []

    /// Deletes every texture (in the renderer's GL context).
    mutating func deleteAll() {
        for case let entry? in entries {
            var texture = entry.texture
            glDeleteTextures(1, &texture)
        }
        entries.removeAll()
    }
}
