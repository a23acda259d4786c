internal import CGLES
internal import PNGImage

/// Images in a layer: RGBA pixels or PNG files uploaded once as textures of their own, drawn as
/// instances (one draw call per run of the same image in a layer).
extension Renderer {
    /// Floats per image instance: x y w h (pixels), tint r g b a, source u v w h (0…1), slot.
    static let imageFloats = 13
    static let imageAttributes: [(GLuint, GLint, Int)] = [(1, 4, 0), (2, 4, 4), (4, 4, 8)]

    /// Uploads RGBA pixels (straight alpha, rows top to bottom, `width*4` bytes each) as an
    /// image, once; drawn with ``addImage(_:_:in:source:tint:opacity:)`` as often as wanted.
    public func makeImage(width: Int, height: Int, rgba pixels: [UInt8]) throws(ImageError) -> ImageID {
        guard width > 0, height > 0, pixels.count == ImageError.byteCount(width, height) else {
            throw .sizeMismatch(width: width, height: height, bytes: pixels.count)
        }
        let maximum = maximumImageSide
        guard width <= maximum, height <= maximum else {
            throw .tooLarge(width: width, height: height, maximum: maximum)
        }
        // Premultiplied, as everything the renderer blends.
        var premultiplied = pixels
        for i in stride(from: 0, to: premultiplied.count, by: 4) {
            let a = UInt16(premultiplied[i + 3])
            for k in 0..<3 { premultiplied[i + k] = UInt8((UInt16(premultiplied[i + k]) * a + 127) / 255) }
        }
        _ = glGetError()
        var texture: GLuint = 0
        glGenTextures(1, &texture)
        glBindTexture(GLenum(GL_TEXTURE_2D), texture)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 4)
        glTexImage2D(
            GLenum(GL_TEXTURE_2D), 0, GL_RGBA, GLsizei(width), GLsizei(height), 0, GLenum(GL_RGBA),
            GLenum(GL_UNSIGNED_BYTE), premultiplied)
        // Linear: images are placed scaled; clamped: a crop's edge does not wrap around.
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_LINEAR)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
        let status = glGetError()
        guard status == GL_NO_ERROR else {
            glDeleteTextures(1, &texture)
            throw .gl(GLError(message: "glTexImage2D of \(width)×\(height) failed (GL error 0x\(String(status, radix: 16)))"))
        }
        imageStore.entries.append(.init(texture: texture, width: width, height: height))
        return ImageID(slot: imageStore.entries.count - 1, renderer: ObjectIdentifier(self))
    }

    /// The largest image side this GL driver takes (`GL_MAX_TEXTURE_SIZE`).
    public var maximumImageSide: Int {
        var maximum: GLint = 0
        glGetIntegerv(GLenum(GL_MAX_TEXTURE_SIZE), &maximum)
        return Int(maximum)
    }

    /// Reads a PNG file (any colour type) and uploads it as ``makeImage(width:height:rgba:)`` does.
    public func makeImage(contentsOfPNG path: String) throws(ImageError) -> ImageID {
        let image: (width: Int, height: Int, rgba: [UInt8])
        do {
            // No larger than the driver takes: a small file cannot make the reader decode more.
            image = try PNGImage.read(path: path, maximumSide: min(PNGImage.maximumSide, maximumImageSide))
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        return try makeImage(width: image.width, height: image.height, rgba: image.rgba)
    }

    /// An image's size in pixels (nil once deleted).
    public func imageSize(_ image: ImageID) -> (width: Int, height: Int)? {
        guard image.renderer == ObjectIdentifier(self), imageStore.entries.indices.contains(image.slot),
            let entry = imageStore.entries[image.slot]
        else { return nil }
        return (entry.width, entry.height)
    }

    /// Deletes an image's texture. Layers that still name it draw nothing for it.
    public func deleteImage(_ image: ImageID) {
        guard imageSize(image) != nil, let entry = imageStore.entries[image.slot] else { return }
        var texture = entry.texture
        glDeleteTextures(1, &texture)
        imageStore.entries[image.slot] = nil
        // Where a layer showed it changes (retained and cached layers hold it on).
        let slot = Float(image.slot)
        for i in layers.indices where RendererLayer.holds(slot, layers[i].images) || RendererLayer.holds(slot, layers[i].previousImages) {
            layers[i].imagesDeleted = true
            layers[i].imagesStale = true
        }
    }

    /// An image drawn into `rect` (points, scaled to fit), cropped to `source` (the image's
    /// pixels, top-left origin; nil: all of it), its colours multiplied by `tint` and its alpha
    /// by `opacity` (and the tint's alpha). Within a layer, images are drawn over its rectangles
    /// and under its strokes and text.
    public func addImage(
        _ layer: LayerID, _ image: ImageID, in rect: Rect, source: Rect? = nil, tint: RGBA = RGBA(1, 1, 1), opacity: Float = 1
    ) {
        guard let size = imageSize(image) else { return }
        let s = scale
        let x = rect.x * s, y = rect.y * s, w = rect.width * s, h = rect.height * s
        guard isVisible(layer, x, y, w, h) else { return }
        let iw = Float(size.width), ih = Float(size.height)
        let crop = source ?? Rect(x: 0, y: 0, width: iw, height: ih)
        InstanceEncoder.appendRect(
            x: x, y: y, width: w, height: h, color: RGBA(tint.r, tint.g, tint.b, tint.a * opacity),
            cornerRadius: crop.x / iw, to: &layers[layer].images)
        layers[layer].images.append(crop.y / ih)
        layers[layer].images.append(crop.width / iw)
        layers[layer].images.append(crop.height / ih)
        layers[layer].images.append(Float(image.slot))
        layers[layer].bounds.add(x, y, w, h)
    }

    /// Draws layer `i`'s images: one draw call per run of the same image, the buffer uploaded
    /// once when they changed. `first`: the depth index of the layer's first image.
    func drawImages(layer i: Int, first: Int, depthStep: Float) {
        let data = layers[i].images
        let count = data.count / Renderer.imageFloats
        guard count > 0 else { layers[i].imagesStale = false; return }
        var upload = layers[i].imagesStale
        var start = 0
        while start < count {
            let slot = Int(data[start * Renderer.imageFloats + 12])
            var end = start + 1
            while end < count, Int(data[end * Renderer.imageFloats + 12]) == slot { end += 1 }
            if let entry = imageStore.entries[slot] {
                imageProgram.use(
                    viewport: (Float(width), Float(height)), depth: (Float(first + start), depthStep),
                    transform: layers[i].drawTransform)
                glActiveTexture(GLenum(GL_TEXTURE0))
                glBindTexture(GLenum(GL_TEXTURE_2D), entry.texture)
                glUniform1i(imageSampler, 0)
                glUniform2f(imageTexel, 1 / Float(entry.width), 1 / Float(entry.height))
                draw(
                    data: data, first: start, count: end - start, floats: Renderer.imageFloats, buffer: layers[i].imageBuffer,
                    upload: upload, attributes: Renderer.imageAttributes)
                upload = false
            }
            start = end
        }
        layers[i].imagesStale = upload && layers[i].imagesStale
    }
}
