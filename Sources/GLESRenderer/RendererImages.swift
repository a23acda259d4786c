internal import CGLES

/// An image uploaded to a ``Renderer`` (``Renderer/makeImage(width:height:rgba:)``): a texture
/// of its own, drawn with ``Renderer/addImage(_:_:in:source:tint:opacity:)``.
public struct ImageID: Sendable, Hashable {
    let slot: Int
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
            "an image of \(w)×\(h) pixels needs \(w * h * 4) bytes of RGBA, \(bytes) were given"
        case .tooLarge(let w, let h, let maximum):
            "an image of \(w)×\(h) pixels is larger than this GL driver's textures (\(maximum) a side): scale it down first"
        case .gl(let error): "cannot upload an image: \(error)"
        }
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
