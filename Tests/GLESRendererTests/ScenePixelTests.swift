import DisplayLinkCore
import GLESRenderer
import Motion
import Scenes
import Testing

@MainActor
@Suite("Scenes drawn offscreen", .serialized)
struct ScenePixelTests {
    /// The colour of a pixel where a label glyph of coverage `c` is drawn over a row card.
    func expectedLabelPixel(coverage c: UInt8, row: Int) -> [Int] {
        let a = Double(c) / 255
        let card = ScrollScene.cardColor(row: row), ink = ScrollScene.labelColor
        return [card.r, card.g, card.b].indices.map { k in
            let channels = ([card.r, card.g, card.b][k], [ink.r, ink.g, ink.b][k])
            return Int((Double(channels.0) * (1 - a) + Double(channels.1) * a) * 255)
        }
    }

    @Test("a list frame at a known offset shows exactly the right row labels", arguments: [0.0, 22_010.0, 43_500.0])
    func rowLabelsAtOffset(offset: Double) throws {
        let target = try OffscreenTarget(width: 320, height: 480)
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let scene = ScrollScene(renderer: renderer, rows: 1000, width: 320, height: 480, duration: 1, curve: .easeInOut)
        scene.setOffset(offset)
        renderer.beginFrame(width: 320, height: 480, clearColor: scene.background)
        scene.draw()
        renderer.endFrame()
        let pixels = target.pixels()

        // Exactly the visible rows were asked for and drawn.
        #expect(scene.preparedRows == scene.layout.visibleRows(at: offset))
        #expect(scene.scrollSample?.firstRow == scene.preparedRows.lowerBound)
        var checkedRows = 0
        for row in scene.preparedRows {
            let origin = scene.labelOrigin(row: row, offset: offset)
            let text = Array("Row \(row)".utf8)
            // Only labels wholly inside the viewport (16…464) are checked.
            guard origin.baseline - 20 >= 16, origin.baseline + 6 <= 464 else { continue }
            var mismatches = 0
            forEachTextPixel(text, x: Int32(origin.x), baseline: Int32(origin.baseline), face: 1) { _, x, y, coverage in
                let got = pixels.rgba(x, y, width: 320).prefix(3).map(Int.init)
                let want = expectedLabelPixel(coverage: coverage, row: row)
                if zip(got, want).contains(where: { abs($0 - $1) > 2 }) { mismatches += 1 }
            }
            #expect(mismatches == 0, "row \(row)'s label differs in \(mismatches) pixels")
            checkedRows += 1
        }
        #expect(checkedRows >= 8)
    }

    @Test("a wrong label would be caught: row 501's glyphs do not match where row 500's label is drawn")
    func labelCheckCanFail() throws {
        let target = try OffscreenTarget(width: 320, height: 480)
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let scene = ScrollScene(renderer: renderer, rows: 1000, width: 320, height: 480, duration: 1, curve: .easeInOut)
        scene.setOffset(500 * ScrollScene.rowHeight)
        renderer.beginFrame(width: 320, height: 480, clearColor: scene.background)
        scene.draw()
        renderer.endFrame()
        let pixels = target.pixels()
        let origin = scene.labelOrigin(row: 500, offset: 500 * ScrollScene.rowHeight)
        // The last glyph of "Row 501" placed where "Row 500" is drawn.
        let prefix = sharedAtlas.measure(Array("Row 50".utf8), face: 1)
        var mismatches = 0
        forEachTextPixel([UInt8(ascii: "1")], x: Int32(origin.x) + prefix, baseline: Int32(origin.baseline), face: 1) { _, x, y, coverage in
            let got = pixels.rgba(x, y, width: 320).prefix(3).map(Int.init)
            if zip(got, expectedLabelPixel(coverage: coverage, row: 500)).contains(where: { abs($0 - $1) > 2 }) { mismatches += 1 }
        }
        #expect(mismatches > 20)
    }

    @Test("the bounce scene draws one rounded view per moving view, at its centre")
    func bounceViewsAtTheirCentres() throws {
        let target = try OffscreenTarget(width: 320, height: 240)
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let scene = BounceScene(renderer: renderer, views: 12, width: 320, height: 240, seed: 3)
        renderer.beginFrame(width: 320, height: 240, clearColor: scene.background)
        scene.draw()
        renderer.endFrame()
        #expect(renderer.drawCalls == 1)
        let pixels = target.pixels()
        let bg = [Int(scene.background.r * 255), Int(scene.background.g * 255), Int(scene.background.b * 255)]
        var visible = 0
        for i in 0..<scene.views.count where scene.views.opacity(i) > 0.99 {
            let x = Int(scene.views.x[i]), y = Int(scene.views.y[i])
            guard (0..<320).contains(x), (0..<240).contains(y) else { continue }
            let got = pixels.rgba(x, y, width: 320).prefix(3).map(Int.init)
            #expect(zip(got, bg).contains { abs($0 - $1) > 8 }, "view \(i) at (\(x), \(y)) not drawn")
            visible += 1
        }
        #expect(visible >= 3)
    }
}
