import FrameSchedulers
import Testing

@Suite("SurfaceScale: which scale a surface takes and the buffer size it gives")
struct SurfaceScaleTests {
    @Test("Wayland: fractional scale (with a viewporter) over the preferred buffer scale over the outputs' largest scale")
    func waylandPrecedence() {
        let all = SurfaceScale.wayland(fractional120: 180, hasViewporter: true, preferredBufferScale: 2, outputScales: [1, 3])
        #expect(all == SurfaceScale(factor: 1.5, source: .fractionalScale))
        #expect(all.presentation == .viewport)
        let noViewporter = SurfaceScale.wayland(fractional120: 180, hasViewporter: false, preferredBufferScale: 2, outputScales: [3])
        #expect(noViewporter == SurfaceScale(factor: 2, source: .preferredBufferScale))
        #expect(noViewporter.presentation == .bufferScale(2))
        let outputs = SurfaceScale.wayland(fractional120: nil, hasViewporter: true, preferredBufferScale: nil, outputScales: [1, 3, 2])
        #expect(outputs == SurfaceScale(factor: 3, source: .outputs))
        #expect(outputs.presentation == .bufferScale(3))
        #expect(SurfaceScale.wayland(fractional120: nil, hasViewporter: true, preferredBufferScale: nil, outputScales: []) == .one)
    }

    @Test("Wayland: an integer fractional scale is a buffer scale; zero and out-of-range figures count as not said")
    func waylandEdges() {
        let two = SurfaceScale.wayland(fractional120: 240, hasViewporter: true, preferredBufferScale: nil, outputScales: [1])
        #expect(two.factor == 2 && two.source == .fractionalScale && two.presentation == .bufferScale(2))
        let zero = SurfaceScale.wayland(fractional120: 0, hasViewporter: true, preferredBufferScale: 0, outputScales: [0, -1])
        #expect(zero == .one)
        let huge = SurfaceScale.wayland(fractional120: 120 * 100, hasViewporter: true, preferredBufferScale: 100, outputScales: [2, 100])
        #expect(huge == SurfaceScale(factor: 2, source: .outputs))
    }

    @Test("Buffer size: points × scale, each side rounded halfway away from zero, at least 1")
    func pixelSize() {
        #expect(SurfaceScale(factor: 2, source: .outputs).pixelSize(points: 200, 150) == (400, 300))
        #expect(SurfaceScale(factor: 1.5, source: .fractionalScale).pixelSize(points: 101, 33) == (152, 50))  // 151.5, 49.5
        #expect(SurfaceScale(factor: 1.25, source: .fractionalScale).pixelSize(points: 10, 2) == (13, 3))  // 12.5, 2.5
        #expect(SurfaceScale(factor: 1.75, source: .fractionalScale).pixelSize(points: 3, 1) == (5, 2))  // 5.25, 1.75
        #expect(SurfaceScale(factor: 0.5, source: .option).pixelSize(points: 1, 3) == (1, 2))  // 0.5 → 1, 1.5 → 2
        #expect(SurfaceScale.one.pixelSize(points: 640, 480) == (640, 480))
        #expect(SurfaceScale(factor: 2, source: .option).pointSize(pixels: 1920, 1081) == (960, 540.5))
    }

    @Test("KMS: whole 96-DPI steps of the lower density; an unknown or impossible physical size is scale 1")
    func physical() {
        // A 13.3" 2560×1600 panel (286×179 mm): 227 DPI.
        #expect(
            SurfaceScale.physical(pixelWidth: 2560, pixelHeight: 1600, millimetreWidth: 286, millimetreHeight: 179)
                == SurfaceScale(factor: 2, source: .physicalSize))
        // A 24" 1920×1080 monitor (531×299 mm): 92 DPI.
        #expect(
            SurfaceScale.physical(pixelWidth: 1920, pixelHeight: 1080, millimetreWidth: 531, millimetreHeight: 299)
                == SurfaceScale(factor: 1, source: .physicalSize))
        // Exactly 192 DPI (254 mm for 1920 pixels): 2; just under: 1.
        #expect(SurfaceScale.physical(pixelWidth: 1920, pixelHeight: 1920, millimetreWidth: 254, millimetreHeight: 254).factor == 2)
        #expect(SurfaceScale.physical(pixelWidth: 1919, pixelHeight: 1920, millimetreWidth: 254, millimetreHeight: 254).factor == 1)
        // 288 DPI: 3. The lower density of the two sides counts.
        #expect(SurfaceScale.physical(pixelWidth: 2880, pixelHeight: 2880, millimetreWidth: 254, millimetreHeight: 254).factor == 3)
        #expect(SurfaceScale.physical(pixelWidth: 2880, pixelHeight: 1000, millimetreWidth: 254, millimetreHeight: 254).factor == 1)
        // vkms and bochs-display report 0 mm; an EDID's aspect ratio in place of a size is no screen.
        #expect(SurfaceScale.physical(pixelWidth: 1024, pixelHeight: 768, millimetreWidth: 0, millimetreHeight: 0) == .one)
        #expect(SurfaceScale.physical(pixelWidth: 3840, pixelHeight: 2160, millimetreWidth: 16, millimetreHeight: 9) == .one)
    }

    @Test("Option: above 0 up to 8; an integer one is a buffer scale, another a viewport")
    func option() {
        #expect(SurfaceScale.option(2) == SurfaceScale(factor: 2, source: .option))
        #expect(SurfaceScale.option(2)?.presentation == .bufferScale(2))
        #expect(SurfaceScale.option(1.5)?.presentation == .viewport)
        #expect(SurfaceScale.option(0) == nil)
        #expect(SurfaceScale.option(-1) == nil)
        #expect(SurfaceScale.option(.nan) == nil)
        #expect(SurfaceScale.option(.infinity) == nil)
        #expect(SurfaceScale.option(9) == nil)
    }
}
