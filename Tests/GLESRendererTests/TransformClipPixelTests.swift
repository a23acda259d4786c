import GLESRenderer
import Testing

@Suite("Layer transforms and nested clips (offscreen, Mesa llvmpipe)", .serialized)
struct TransformClipPixelTests {
    static let red = RGBA(1, 0, 0), black = RGBA(0, 0, 0)

    /// Whether pixel (x, y) is opaque red.
    static func isRed(_ p: [UInt8], _ x: Int, _ y: Int) -> Bool { p.rgba(x, y, width: 256) == [255, 0, 0, 255] }

    @Test("translate, scale and rotate move a layer's rectangle where the transform says", arguments: [3, 2] as [Int32])
    func transforms(glesVersion: Int32) throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
        let moved = renderer.makeLayer(), scaled = renderer.makeLayer(), turned = renderer.makeLayer()
        renderer.setTransform(moved, .translation(x: 10, y: 20))
        renderer.setTransform(scaled, Transform2D.scale(x: 2, y: 3).concatenating(.translation(x: 100, y: 0)))
        // A quarter turn about (200, 200): (200, 180)–(220, 190) goes to (210, 200)–(220, 220).
        renderer.setTransform(turned, .rotation(radians: .pi / 2, about: Point(x: 200, y: 200)))
        renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
        renderer.addRect(moved, Rect(x: 0, y: 0, width: 10, height: 10), color: Self.red)
        renderer.addRect(scaled, Rect(x: 0, y: 0, width: 10, height: 10), color: Self.red)
        renderer.addRect(turned, Rect(x: 200, y: 180, width: 20, height: 10), color: Self.red)
        renderer.endFrame()
        let p = target.pixels()
        #expect(Self.isRed(p, 10, 20) && Self.isRed(p, 19, 29) && !Self.isRed(p, 9, 20) && !Self.isRed(p, 20, 29))
        // Antialiasing is computed in the layer's own pixels (here 3 a pixel down): the edge pixel is partly covered.
        #expect(Self.isRed(p, 101, 1) && Self.isRed(p, 118, 28) && !Self.isRed(p, 120, 15) && !Self.isRed(p, 110, 30))
        let edge = p.rgba(110, 0, width: 256)[0]
        #expect(edge > 0 && edge < 255, "top edge pixel red \(edge)")
        #expect(Self.isRed(p, 211, 201) && Self.isRed(p, 219, 219) && !Self.isRed(p, 205, 210) && !Self.isRed(p, 215, 185))
    }

    @Test("a layer in a group is clipped by the group's clip and its own, and moved by both transforms")
    func nestedClips() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        // A card at (50, 50) 100×100 whose rows scroll up by 30 inside it.
        let card = renderer.makeLayer()
        renderer.setTransform(card, .translation(x: 50, y: 50))
        renderer.setClip(card, Rect(x: 0, y: 0, width: 100, height: 100))
        let rows = renderer.makeLayer(in: card)
        renderer.setTransform(rows, .translation(x: 0, y: -30))
        let band = renderer.makeLayer(in: card)
        renderer.setClip(band, Rect(x: 0, y: 40, width: 200, height: 10))
        renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
        renderer.addRect(rows, Rect(x: -100, y: 0, width: 400, height: 400), color: Self.red)
        renderer.addRect(band, Rect(x: 0, y: 0, width: 256, height: 256), color: RGBA(0, 1, 0))
        renderer.endFrame()
        let p = target.pixels()
        // Rows: only inside the card.
        #expect(Self.isRed(p, 50, 50) && Self.isRed(p, 149, 149) && Self.isRed(p, 50, 149))
        #expect(!Self.isRed(p, 49, 60) && !Self.isRed(p, 150, 60) && !Self.isRed(p, 60, 49) && !Self.isRed(p, 60, 150))
        // The band: its own clip (card rows 40–50) within the card's (x 50–150).
        #expect(p.rgba(60, 95, width: 256) == [0, 255, 0, 255] && p.rgba(149, 90, width: 256) == [0, 255, 0, 255])
        #expect(p.rgba(150, 95, width: 256) != [0, 255, 0, 255] && p.rgba(60, 89, width: 256) != [0, 255, 0, 255])
        #expect(p.rgba(60, 100, width: 256) != [0, 255, 0, 255])
    }

    @Test("moving a layer damages where it was and where it is; a partial redraw equals a whole one", arguments: [3, 2] as [Int32])
    func damageFollowsTransform(glesVersion: Int32) throws {
        let partial = try OffscreenTarget(), whole = try OffscreenTarget()
        var images: [[UInt8]] = []
        for (target, age) in [(partial, 1), (whole, 0)] {
            let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: min(glesVersion, target.context.glesMajorVersion))
            renderer.partialRedrawMaximumCoverage = 1
            let still = renderer.makeLayer(), moving = renderer.makeLayer()
            for frame in 0..<3 {
                renderer.setTransform(moving, .rotation(radians: Float(frame) * 0.3, about: Point(x: 128, y: 128)))
                renderer.beginFrame(width: 256, height: 256, clearColor: Self.black, bufferAge: frame == 0 ? 0 : age)
                renderer.addRect(still, Rect(x: 0, y: 0, width: 256, height: 40), color: RGBA(0, 0, 1))
                renderer.addRect(moving, Rect(x: 118, y: 60, width: 20, height: 68), color: Self.red, cornerRadius: 4)
                renderer.endFrame()
                if frame > 0 {
                    guard case .region(let r) = renderer.damage else {
                        Issue.record("frame \(frame): damage \(renderer.damage), expected a region")
                        continue
                    }
                    // The hand turns about (128, 128): what it covered lies around there, never in the still band.
                    #expect(r.y >= 40 && r.x < 128 + 70 && r.x + r.width > 128 && r.y + r.height > 128 - 5)
                }
            }
            images.append(target.pixels())
        }
        #expect(images[0] == images[1])
    }

    @Test("a transformed layer neither hides nor is hidden by where its rectangles were laid out (depth pass)")
    func occlusionStepsAside() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        renderer.depthPassMinimumOverdraw = 0
        let back = renderer.makeLayer(), front = renderer.makeLayer()
        // Laid out over the back rectangle, but moved off it.
        renderer.setTransform(front, .translation(x: 150, y: 0))
        renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
        renderer.addRect(back, Rect(x: 10, y: 10, width: 50, height: 50), color: Self.red)
        renderer.addRect(front, Rect(x: 0, y: 0, width: 80, height: 80), color: RGBA(0, 0, 1))
        renderer.endFrame()
        let p = target.pixels()
        #expect(Self.isRed(p, 30, 30))
        #expect(p.rgba(200, 30, width: 256) == [0, 0, 255, 255])
        #expect(renderer.hiddenRects == 0)
    }

    @Test("a transformed layer cached in a texture shows what it shows drawn directly, moved again when only its transform changes")
    func cachedTransformedLayer() throws {
        let target = try OffscreenTarget()
        var pictures: [[UInt8]] = []
        for cached in [false, true] {
            let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
            let layer = renderer.makeLayer()
            renderer.setCached(layer, cached)
            for angle in [Float(0.2), 0.9] {
                renderer.setTransform(layer, .rotation(radians: angle, about: Point(x: 128, y: 128)))
                renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
                if angle == 0.2 || !cached {
                    renderer.addRect(layer, Rect(x: 100, y: 40, width: 56, height: 90), color: Self.red, cornerRadius: 6)
                    renderer.addText(layer, "dial", x: 108, baseline: 70, face: 0, color: RGBA(1, 1, 1))
                }
                renderer.endFrame()
                if cached && angle == 0.9 { #expect(renderer.uploads == 0) }
                pictures.append(target.pixels())
            }
        }
        for (direct, cached) in [(pictures[0], pictures[2]), (pictures[1], pictures[3])] {
            var worst = 0
            for i in direct.indices { worst = max(worst, abs(Int(direct[i]) - Int(cached[i]))) }
            #expect(worst <= 2, "largest difference \(worst)/255")
        }
        #expect(pictures[0] != pictures[1])
    }

    @Test("a retained layer laid out off screen shows what its transform later moves into view")
    func retainedMovedIntoView() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let strip = renderer.makeLayer()
        renderer.setRetained(strip, true)
        renderer.setTransform(strip, .translation(x: -300, y: 0))
        renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
        renderer.addRect(strip, Rect(x: 0, y: 0, width: 20, height: 20), color: Self.red)  // on screen at -300: off
        renderer.addRect(strip, Rect(x: 300, y: 0, width: 20, height: 20), color: RGBA(0, 1, 0))  // at 0: on
        renderer.endFrame()
        #expect(target.pixels().rgba(10, 10, width: 256) == [0, 255, 0, 255])
        renderer.setTransform(strip, .identity)
        renderer.beginFrame(width: 256, height: 256, clearColor: Self.black)
        renderer.endFrame()
        #expect(Self.isRed(target.pixels(), 10, 10))
    }

    @Test("a transform that is not a number, or huge, on a clipped layer draws nothing and does not trap")
    func hostileTransforms() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let layer = renderer.makeLayer()
        renderer.setClip(layer, Rect(x: 10, y: 10, width: 50, height: 50))
        for transform in [Transform2D.rotation(radians: .nan), .scale(x: 1e30, y: 1e30), .translation(x: -.infinity, y: 0)] {
            renderer.setTransform(layer, transform)
            renderer.beginFrame(width: 256, height: 256, clearColor: Self.black, bufferAge: 0)
            renderer.addRect(layer, Rect(x: 20, y: 20, width: 20, height: 20), color: Self.red)
            renderer.endFrame()
            #expect(!Self.isRed(target.pixels(), 30, 30))
        }
    }
}
