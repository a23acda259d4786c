import DisplayLinkCore
import GLESRenderer
import Scenes
import Testing

@MainActor
@Suite("HUD", .serialized)
struct HUDTests {
    /// Frame `i` of a 60 Hz run (16 ms apart, for exact sums), with `missed` refreshes missed.
    func frame(_ i: Int, missed: Int = 0, delta: Int64 = 16_000_000) -> DisplayFrame {
        DisplayFrame(
            timestamp: MonotonicInstant(nanoseconds: 1_000_000_000 + Int64(i) * 16_000_000),
            targetTimestamp: MonotonicInstant(nanoseconds: 1_016_000_000 + Int64(i) * 16_000_000),
            duration: Nanoseconds(16_000_000), delta: Nanoseconds(i == 0 ? 0 : delta),
            sequence: UInt64(i), missedFrames: missed, provenance: .hardwareVBlank,
            refreshIndex: UInt64(i), frameInterval: 1)
    }

    @Test("what the panel shows changes on the first frame and then once per half-second window")
    func shownValuesChangeTwiceASecond() {
        var values = HUDValues()
        values.record(frame(0))
        #expect(values.shown.provenance == .hardwareVBlank)
        #expect(values.shown.fps == 0)
        let first = values.shown
        var changes: [Int] = []
        var previous = first
        for i in 1...70 {
            values.record(frame(i, missed: i == 10 ? 2 : 0, delta: i == 10 ? 48_000_000 : 16_000_000))
            if values.shown != previous { changes.append(i); previous = values.shown }
        }
        // Windows end when 0.5 s has passed since the window began: frames 32 (512 ms) and 64.
        #expect(changes == [32, 64])
        #expect(values.shown.fps == 32 / 0.512)
        #expect(values.missed == 2)
        #expect(values.shown.missed == 2)
        values.record(frame(71))
        #expect(values.shown.maxDeltaMilliseconds == 16)
    }

    @Test("the overlay is laid out and uploaded only when what it shows changes")
    func overlayUploadsOnlyOnChange() throws {
        let target = try OffscreenTarget()
        let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: target.context.glesMajorVersion)
        let hud = HUDOverlay(renderer: renderer)
        var values = HUDValues()
        var uploads: [Int] = []
        for i in 0..<40 {
            values.record(frame(i))
            renderer.beginFrame(width: 256, height: 256, clearColor: RGBA(0, 0, 1, 1))
            hud.draw(values)
            renderer.endFrame()
            uploads.append(renderer.uploads)
        }
        // Frame 0 lays out text and bands, frame 32 (the first window's end) again (the fps line's
        // text and band changed width).
        #expect(uploads.enumerated().filter { $0.element > 0 }.map(\.offset) == [0, 32])
        #expect(uploads[0] == 2 && uploads[32] == 2)
        #expect(renderer.rectCount(0) == 4)
        // In a frame that laid nothing out the text is on screen: white glyph pixels, and band
        // pixels (darker than the blue background) around them.
        let pixels = target.pixels()
        var white = 0, shadow = 0
        for y in 0..<80 {
            for x in 0..<200 {
                let p = pixels.rgba(x, y, width: 256)
                if p == [255, 255, 255, 255] { white += 1 }
                if p[0] == 0 && p[1] == 0 && p[2] < 128 { shadow += 1 }
            }
        }
        #expect(white > 50 && shadow > 50, "white \(white), shadow \(shadow)")
    }
}
