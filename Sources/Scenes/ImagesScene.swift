import DisplayLinkCore
import GLESRenderer

/// Many images moving: a few small pictures made in code (``ImagePatterns``), uploaded once at
/// set-up, and drawn as `count` images placed, scaled, some cropped, tinted or fading, each frame
/// where ``ImageField`` puts them at the frame's time. The time is the sum of the frames' deltas
/// (on the demo's virtual clock with --fixed-step), so the motion is the same at any frame rate.
/// A frame adds only instances to one layer: it uploads no pixels and allocates nothing.
@MainActor
public final class ImagesScene: Scene {
    public let name = "images"
    public var sizeField: (name: String, value: Int) { ("images", field.sprites.count) }
    public let background = RGBA(0.09, 0.08, 0.11)
    public private(set) var field: ImageField
    /// Seconds since the first frame.
    public private(set) var time = 0.0
    private let renderer: Renderer
    private let layer: Renderer.LayerID
    private let images: [ImageID]

    /// Uploads the pictures (throws if GL refuses one) and lays out `count` images in
    /// `width`×`height` points.
    public init(renderer: Renderer, images count: Int, width: Int32, height: Int32, seed: UInt64) throws(ImageError) {
        self.renderer = renderer
        var images: [ImageID] = []
        for kind in 0..<ImagePatterns.count {
            images.append(try renderer.makeImage(width: ImagePatterns.side, height: ImagePatterns.side, rgba: ImagePatterns.rgba(kind)))
        }
        self.images = images
        field = ImageField(count: count, width: Float(width), height: Float(height), seed: seed)
        layer = renderer.makeLayer(reserving: count)
    }

    public func resize(width: Int32, height: Int32) {
        field.bounds = (Float(width), Float(height))
    }

    public func update(_ frame: DisplayFrame) {
        time += frame.deltaTime
    }

    public func draw() {
        for i in field.sprites.indices {
            let p = field.placement(i, at: time)
            renderer.addImage(layer, images[p.image], in: p.rect, source: p.source, tint: p.tint, opacity: p.opacity)
        }
    }
}
