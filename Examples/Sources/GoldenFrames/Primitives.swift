// GoldenFrames --primitives DIR: one frame per primitive of the renderer (images, strokes, clips,
// transforms), drawn through the offscreen backend and written as DIR/<primitive>.png.
// Scripts/check-golden-frames compares two runs byte for byte and each file with the one in
// Examples/Golden/, made by this program and looked at by a person.
import DisplaySurface
import GLESRenderer
import Glibc

@MainActor
enum Primitives {
    static let names = ["images", "strokes", "clips", "transforms"]

    static func write(to directory: String) throws {
        var options = DisplaySurface.Options(title: "GoldenFrames", width: 256, height: 256, backend: .offscreen)
        options.offscreen = .init(refreshRate: .hertz(60))
        let surface = try DisplaySurface(options: options)
        defer { surface.close() }
        try surface.beginFrame()
        let renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14, 22]), glesMajorVersion: surface.glesMajorVersion)
        let scene = try Scene(renderer)
        for name in names {
            try surface.beginFrame()
            renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0.07, 0.08, 0.11), bufferAge: 0)
            scene.draw(name)
            renderer.endFrame()
            try surface.screenshot(to: "\(directory)/\(name).png")
            try surface.present()
        }
    }

    /// The layers and images the four frames are drawn with (each frame uses some of them; the
    /// others stay empty).
    @MainActor
    final class Scene {
        let renderer: Renderer
        let quadrants: ImageID, gradient: ImageID
        let plain: Renderer.LayerID
        let card: Renderer.LayerID, rows: Renderer.LayerID, band: Renderer.LayerID
        let dial: Renderer.LayerID, spinner: Renderer.LayerID, spinnerArm: Renderer.LayerID

        init(_ renderer: Renderer) throws {
            self.renderer = renderer
            // Four 2×2 quadrants: red, green / blue, white.
            quadrants = try renderer.makeImage(
                width: 4, height: 4,
                rgba: (0..<16).flatMap { i -> [UInt8] in
                    switch (i % 4 < 2, i / 4 < 2) {
                    case (true, true): [255, 0, 0, 255]
                    case (false, true): [0, 255, 0, 255]
                    case (true, false): [0, 0, 255, 255]
                    case (false, false): [255, 255, 255, 255]
                    }
                })
            // 64×64: red across, green down, alpha fading to the right.
            gradient = try renderer.makeImage(
                width: 64, height: 64,
                rgba: (0..<64 * 64).flatMap { i -> [UInt8] in
                    let (x, y) = (i % 64, i / 64)
                    return [UInt8(x * 4), UInt8(y * 4), 160, UInt8(255 - x * 2)]
                })
            plain = renderer.makeLayer()
            card = renderer.makeLayer()
            rows = renderer.makeLayer(in: card)
            band = renderer.makeLayer(in: card)
            dial = renderer.makeLayer()
            spinner = renderer.makeLayer()
            spinnerArm = renderer.makeLayer(in: spinner)
        }

        func draw(_ name: String) {
            for layer in [card, rows, band, dial, spinner, spinnerArm] {
                renderer.setTransform(layer, .identity)
                renderer.setClip(layer, nil)
            }
            switch name {
            case "images": images()
            case "strokes": strokes()
            case "clips": clips()
            default: transforms()
            }
        }

        /// At its size; a quadrant cropped and scaled up; scaled, tinted and translucent over stripes.
        func images() {
            renderer.addImage(plain, quadrants, in: Rect(x: 16, y: 16, width: 4, height: 4))
            renderer.addImage(plain, quadrants, in: Rect(x: 32, y: 16, width: 64, height: 64))
            renderer.addImage(
                plain, quadrants, in: Rect(x: 112, y: 16, width: 48, height: 48), source: Rect(x: 2, y: 2, width: 2, height: 2))
            for k in 0..<8 {
                renderer.addRect(plain, Rect(x: 16 + Float(k) * 28, y: 112, width: 14, height: 128), color: RGBA(0.9, 0.8, 0.2))
            }
            renderer.addImage(plain, gradient, in: Rect(x: 16, y: 120, width: 96, height: 48))
            renderer.addImage(plain, gradient, in: Rect(x: 128, y: 120, width: 96, height: 48), tint: RGBA(0.4, 0.8, 1))
            renderer.addImage(plain, gradient, in: Rect(x: 16, y: 184, width: 208, height: 48), opacity: 0.5)
        }

        /// Butt caps and miter joins, round caps and joins, a translucent sharp zigzag, hairlines
        /// at many angles, and a 1,000-point wave.
        func strokes() {
            var zigzag = Stroke(width: 8, color: RGBA(0.96, 0.36, 0.27), join: .miter, cap: .butt)
            zigzag.append(contentsOf: [Point(x: 16, y: 60), Point(x: 46, y: 20), Point(x: 76, y: 60), Point(x: 106, y: 20)])
            renderer.addStroke(plain, zigzag)
            var rounded = Stroke(width: 10, color: RGBA(0.25, 0.55, 0.95), join: .round, cap: .round)
            rounded.append(contentsOf: [Point(x: 136, y: 60), Point(x: 166, y: 20), Point(x: 196, y: 60), Point(x: 236, y: 30)])
            renderer.addStroke(plain, rounded)
            var translucent = Stroke(width: 14, color: RGBA(0.55, 0.8, 0.3, 0.5), join: .round, cap: .butt)
            translucent.append(contentsOf: [Point(x: 20, y: 90), Point(x: 120, y: 100), Point(x: 30, y: 120), Point(x: 120, y: 140)])
            renderer.addStroke(plain, translucent)
            for k in 0..<16 {
                let a = Float(k) / 16 * .pi
                renderer.addLine(
                    plain, from: Point(x: 190 + 10 * cos(a), y: 120 + 10 * sin(a)),
                    to: Point(x: 190 + 50 * cos(a), y: 120 + 50 * sin(a)), width: 1, color: RGBA(0.95, 0.95, 0.95))
            }
            var wave = Stroke(width: 2, color: RGBA(0.98, 0.69, 0.2))
            for k in 0..<1000 {
                let x = 16 + Float(k) * 0.224
                wave.append(Point(x: x, y: 210 + 24 * sin(Float(k) / 1000 * 6 * .pi) * cos(Float(k) / 1000 * 23 * .pi)))
            }
            renderer.addStroke(plain, wave)
        }

        /// A card's rows scrolled inside its clip, a band clipped within the card, text cut by both.
        func clips() {
            renderer.setTransform(card, .translation(x: 40, y: 40))
            renderer.setClip(card, Rect(x: 0, y: 0, width: 176, height: 176))
            renderer.addRect(plain, Rect(x: 36, y: 36, width: 184, height: 184), color: RGBA(0.3, 0.32, 0.38), cornerRadius: 10)
            renderer.setTransform(rows, .translation(x: 0, y: -13))
            for k in 0..<8 {
                let y = Float(k) * 30
                renderer.addRect(rows, Rect(x: -8, y: y, width: 192, height: 26), color: Palette.colors[k % 8], cornerRadius: 6)
                renderer.addText(rows, "Row \(k) — clipped", x: 8, baseline: y + 19, face: 0, color: RGBA(0.05, 0.05, 0.08))
            }
            renderer.setClip(band, Rect(x: 60, y: 70, width: 200, height: 40))
            renderer.addRect(band, Rect(x: 0, y: 0, width: 256, height: 256), color: RGBA(1, 1, 1, 0.35))
            renderer.addText(band, "BAND", x: 100, baseline: 100, face: 1, color: RGBA(0, 0, 0))
        }

        /// Twelve rectangles turned about a centre, a rotated image and text, a stroke in a
        /// layer turned inside a translated group.
        func transforms() {
            let centre = Point(x: 70, y: 70)
            for k in 0..<12 {
                let t = Transform2D.rotation(radians: Float(k) / 12 * 2 * .pi, about: centre)
                // Each tick laid out already turned (the layer's transform is per layer).
                let p = t.apply(Point(x: 70, y: 22))
                renderer.addRect(plain, Rect(x: p.x - 3, y: p.y - 3, width: 6, height: 6), color: Palette.colors[k % 8], cornerRadius: 3)
            }
            renderer.setTransform(dial, .rotation(radians: .pi / 6, about: centre))
            renderer.addRect(dial, Rect(x: 40, y: 60, width: 60, height: 20), color: RGBA(0.95, 0.95, 0.95), cornerRadius: 6)
            renderer.addImage(dial, gradient, in: Rect(x: 150, y: 20, width: 80, height: 80))
            renderer.addText(dial, "turned", x: 140, baseline: 130, face: 1, color: RGBA(0.98, 0.69, 0.2))
            renderer.setTransform(spinner, Transform2D.scale(x: 1.5, y: 1.5).concatenating(.translation(x: 60, y: 150)))
            renderer.setTransform(spinnerArm, .rotation(radians: -.pi / 4, about: Point(x: 30, y: 30)))
            var arm = Stroke(width: 5, color: RGBA(0.56, 0.4, 0.9), join: .round, cap: .round)
            arm.append(contentsOf: [Point(x: 30, y: 30), Point(x: 30, y: 0), Point(x: 50, y: 5)])
            renderer.addStroke(spinnerArm, arm)
            renderer.addRect(spinner, Rect(x: 0, y: 0, width: 60, height: 60), color: RGBA(1, 1, 1, 0.15), cornerRadius: 12)
        }
    }

    enum Palette {
        static let colors: [RGBA] = [
            RGBA(0.96, 0.36, 0.27), RGBA(0.98, 0.69, 0.20), RGBA(0.55, 0.80, 0.30), RGBA(0.20, 0.72, 0.66),
            RGBA(0.25, 0.55, 0.95), RGBA(0.56, 0.40, 0.90), RGBA(0.90, 0.35, 0.70), RGBA(0.95, 0.95, 0.95)
        ]
    }
}
