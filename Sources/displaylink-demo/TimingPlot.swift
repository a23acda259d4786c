import GLESRenderer

/// The report's timing drawn as a picture: presentation intervals and callback deltas over the
/// run (top), and the prediction error targetTimestamp − presented (bottom).
struct TimingPlot {
    let width = 960
    let height = 560
    let report: FrameReport
    let atlas: GlyphAtlas

    private struct Canvas {
        var width: Int, height: Int
        var pixels: [UInt8]
        init(width: Int, height: Int, background: (UInt8, UInt8, UInt8)) {
            self.width = width; self.height = height
            pixels = [UInt8](repeating: 255, count: width * height * 4)
            for i in 0..<(width * height) {
                pixels[i * 4] = background.0; pixels[i * 4 + 1] = background.1; pixels[i * 4 + 2] = background.2
            }
        }
        mutating func blend(_ x: Int, _ y: Int, _ c: (UInt8, UInt8, UInt8), _ alpha: Double) {
            guard x >= 0, y >= 0, x < width, y < height, alpha > 0 else { return }
            let i = (y * width + x) * 4, a = min(1, alpha)
            pixels[i] = UInt8(Double(pixels[i]) * (1 - a) + Double(c.0) * a)
            pixels[i + 1] = UInt8(Double(pixels[i + 1]) * (1 - a) + Double(c.1) * a)
            pixels[i + 2] = UInt8(Double(pixels[i + 2]) * (1 - a) + Double(c.2) * a)
        }
        mutating func fill(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ c: (UInt8, UInt8, UInt8), _ alpha: Double = 1) {
            for yy in max(0, y)..<min(height, y + h) { for xx in max(0, x)..<min(width, x + w) { blend(xx, yy, c, alpha) } }
        }
        mutating func line(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, _ c: (UInt8, UInt8, UInt8), _ alpha: Double = 1) {
            let steps = max(1, Int(max(abs(x1 - x0), abs(y1 - y0)).rounded(.up)))
            for s in 0...steps {
                let t = Double(s) / Double(steps)
                blend(Int((x0 + (x1 - x0) * t).rounded()), Int((y0 + (y1 - y0) * t).rounded()), c, alpha)
            }
        }
        mutating func text(_ s: String, _ x: Int, _ baseline: Int, _ atlas: GlyphAtlas, _ c: (UInt8, UInt8, UInt8)) {
            var pen = x
            for scalar in s.unicodeScalars {
                let g = atlas.glyph(scalar, face: 0)
                for gy in 0..<Int(g.height) {
                    for gx in 0..<Int(g.width) {
                        let coverage = atlas.pixels[(Int(g.atlasY) + gy) * Int(atlas.width) + Int(g.atlasX) + gx]
                        blend(pen + Int(g.bearingX) + gx, baseline - Int(g.bearingY) + gy, c, Double(coverage) / 255)
                    }
                }
                pen += Int(g.advance)
            }
        }
    }

    func render() -> [UInt8] {
        var canvas = Canvas(width: width, height: height, background: (250, 250, 252))
        let ink: (UInt8, UInt8, UInt8) = (40, 42, 48)
        let grid: (UInt8, UInt8, UInt8) = (215, 218, 225)
        let blue: (UInt8, UInt8, UInt8) = (40, 110, 230)
        let orange: (UInt8, UInt8, UInt8) = (240, 140, 30)
        let red: (UInt8, UInt8, UInt8) = (220, 50, 60)
        let records = report.records
        let s = report.summary
        canvas.text(
            "\(report.scene) on \(report.backend): \(s.frames) frames, \(s.presented) presented, "
                + "median interval \(ms(s.medianInterval)) ms, p99 \(ms(s.p99Interval)) ms, "
                + "median |target - presented| \(ms(s.medianPredictionError)) ms", 16, 24, atlas, ink)

        // Series over frame index.
        var intervals: [(Int, Double)] = []
        var previousPresented: Double?
        for (i, r) in records.enumerated() {
            if let p = r.presented?.seconds {
                if let q = previousPresented { intervals.append((i, (p - q) * 1000)) }
                previousPresented = p
            }
        }
        let deltas = records.enumerated().dropFirst().map { ($0.offset, $0.element.frame.deltaTime * 1000) }
        let errors = records.enumerated().compactMap { i, r in
            r.presented.map { (i, (r.frame.targetTimestamp.seconds - $0.seconds) * 1000) }
        }
        let n = max(records.count - 1, 1)
        let left = 70, right = width - 20

        func panel(
            top: Int, bottom: Int, title: String, low: Double, high: Double,
            series: [([(Int, Double)], (UInt8, UInt8, UInt8), String)]
        ) {
            canvas.text(title, left, top - 8, atlas, ink)
            let span = max(high - low, 1e-6)
            func yOf(_ v: Double) -> Double { Double(bottom) - (min(max(v, low), high) - low) / span * Double(bottom - top) }
            func xOf(_ i: Int) -> Double { Double(left) + Double(i) / Double(n) * Double(right - left) }
            for k in 0...4 {
                let v = low + span * Double(k) / 4
                let y = Int(yOf(v).rounded())
                canvas.fill(left, y, right - left, 1, grid)
                canvas.text(String((v * 100).rounded() / 100), 8, y + 5, atlas, ink)
            }
            if low < 0 && high > 0 { canvas.fill(left, Int(yOf(0)), right - left, 1, ink, 0.6) }
            canvas.fill(left, top, 1, bottom - top, ink)
            canvas.fill(left, bottom, right - left, 1, ink)
            var legendX = right - 10
            for (points, color, name) in series.reversed() {
                for (a, b) in zip(points, points.dropFirst()) {
                    canvas.line(xOf(a.0), yOf(a.1), xOf(b.0), yOf(b.1), color, 0.9)
                }
                for p in points { canvas.fill(Int(xOf(p.0)) - 1, Int(yOf(p.1)) - 1, 3, 3, color) }
                legendX -= 8 * name.count + 24
                canvas.fill(legendX, top - 18, 12, 12, color)
                canvas.text(name, legendX + 16, top - 8, atlas, ink)
            }
        }

        let allIntervals = intervals.map(\.1) + deltas.map(\.1)
        let high = max((Statistics.percentile(allIntervals, 0.99) ?? 20) * 1.25, 5)
        panel(
            top: 70, bottom: 300, title: "frame interval (ms) by frame", low: 0, high: high,
            series: [(deltas, orange, "callback delta"), (intervals, blue, "presentation interval")])
        let errorValues = errors.map(\.1)
        // Scaled to the steady state (start-up frames, before the pipeline depth is learned, are clamped).
        let bound = max((Statistics.percentile(errorValues.map(abs), 0.9) ?? 1) * 3, 0.5)
        panel(
            top: 360, bottom: 520, title: "prediction error: targetTimestamp - presented (ms)", low: -bound, high: bound,
            series: [(errors, red, "target - presented")])
        canvas.text("frame index 0 ... \(records.count - 1)", left, 548, atlas, ink)
        return canvas.pixels
    }
}
