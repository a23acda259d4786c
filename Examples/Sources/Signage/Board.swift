// The signage board: what is on screen at a given time, drawn with the renderer's images,
// strokes, clips and transforms. Everything that moves is a function of the time it is drawn
// for (the display link's targetTimestamp), and moves by a layer's transform, set before the
// layer's contents are added: sliding the carousel, scrolling the ticker and turning the hand
// upload nothing to the GPU.
import DisplaySurface
import GLESRenderer
import Glibc

@MainActor
final class Board {
    static let posterSize = (width: Float(240), height: Float(150)), gap = Float(20)
    static let posterCount = 4
    /// The carousel shows each poster for `hold` seconds, then slides to the next over `slide`.
    static let hold = 2.4, slide = 0.6
    static let tickerSpeed = 90.0  // points a second
    static let tickerText = "DisplayLink signage  ·  frames timed by the display's real vblank  ·  weston, mutter, kwin, KMS  ·  "
    /// The hand turns once a minute, as a clock's second hand sweeps.
    static let handPeriod = 60.0

    let renderer: Renderer
    let size: (width: Float, height: Float)
    let posters: [ImageID]
    // Layers, in drawing order. The carousel and the ticker are groups: the group clips, the
    // layer in it moves.
    let background: Renderer.LayerID
    let carousel: Renderer.LayerID, strip: Renderer.LayerID
    let band: Renderer.LayerID, ticker: Renderer.LayerID
    let dial: Renderer.LayerID, hand: Renderer.LayerID
    let field: Renderer.LayerID
    var ring = Stroke(width: 3, color: RGBA(0.85, 0.88, 0.95), join: .round, cap: .round)
    var handStroke = Stroke(width: 4, color: RGBA(0.96, 0.36, 0.27), join: .round, cap: .round)
    var tickerWidth: Float = 0

    /// Where things are, in points.
    var carouselFrame: Rect { Rect(x: 30, y: 40, width: Board.posterSize.width, height: Board.posterSize.height) }
    var bandFrame: Rect { Rect(x: 0, y: size.height - 44, width: size.width, height: 32) }
    var dialCentre: Point { Point(x: size.width - 110, y: 115) }
    var fieldFrame: Rect { Rect(x: 30, y: 230, width: size.width - 60, height: 40) }

    init(renderer: Renderer, width: Float, height: Float) throws {
        self.renderer = renderer
        size = (width, height)
        posters = try (0..<Board.posterCount).map { try renderer.makeImage(width: 120, height: 75, rgba: Board.poster($0)) }
        background = renderer.makeLayer(reserving: 8)
        carousel = renderer.makeLayer(reserving: 1)
        strip = renderer.makeLayer(reserving: 8, in: carousel)
        band = renderer.makeLayer(reserving: 1)
        ticker = renderer.makeLayer(reserving: 256, in: band)
        dial = renderer.makeLayer(reserving: 16)
        hand = renderer.makeLayer(reserving: 4)
        field = renderer.makeLayer(reserving: 64)
        renderer.setClip(carousel, carouselFrame)
        renderer.setClip(band, bandFrame)
        // The dial's ring: a closed polyline of 72 points.
        for k in 0...72 {
            let a = Float(k) / 72 * 2 * .pi
            ring.append(Point(x: dialCentre.x + 70 * cos(a), y: dialCentre.y + 70 * sin(a)))
        }
        // The hand points up from the centre; its layer's rotation turns it.
        handStroke.append(Point(x: dialCentre.x, y: dialCentre.y + 12))
        handStroke.append(Point(x: dialCentre.x, y: dialCentre.y - 60))
        tickerWidth = renderer.measure(Board.tickerText, face: 0)
    }

    /// Poster `i`: a 120×75 gradient with a band and a disc, each in its own colours.
    static func poster(_ i: Int) -> [UInt8] {
        let hues: [(Float, Float, Float)] = [(0.96, 0.36, 0.27), (0.25, 0.55, 0.95), (0.55, 0.80, 0.30), (0.56, 0.40, 0.90)]
        let (r, g, b) = hues[i % hues.count]
        var pixels = [UInt8](repeating: 255, count: 120 * 75 * 4)
        for y in 0..<75 {
            for x in 0..<120 {
                let shade = 0.45 + 0.55 * Float(x + y) / Float(120 + 75)
                let inDisc = (x - 85) * (x - 85) + (y - 37) * (y - 37) < 18 * 18
                let inBand = y > 50 && y < 60
                let k = (y * 120 + x) * 4
                let (pr, pg, pb): (Float, Float, Float) =
                    inDisc ? (1, 1, 1) : inBand ? (0.1, 0.1, 0.12) : (r * shade, g * shade, b * shade)
                pixels[k] = UInt8(pr * 255); pixels[k + 1] = UInt8(pg * 255); pixels[k + 2] = UInt8(pb * 255)
            }
        }
        return pixels
    }

    /// The carousel's position at `t` seconds: the poster shown plus how far the slide to the
    /// next one has gone (0…1, smoothstep), never decreasing in `t`.
    static func carouselPosition(at t: Double) -> Double {
        let period = hold + slide
        let shown = (t / period).rounded(.down)
        let phase = t - shown * period
        let s = phase <= hold ? 0 : (phase - hold) / slide
        return shown + s * s * (3 - 2 * s)
    }

    /// The hand's angle at `t` seconds (radians, clockwise from 12 o'clock).
    static func handAngle(at t: Double) -> Double { t / handPeriod * 2 * .pi }

    /// Adds the board as it is `t` seconds after the start (between beginFrame and endFrame).
    func draw(at t: Double, text: String, caretOn: Bool) {
        // The board's own colour is the frame's clear colour: no rectangle over the whole screen
        // (a software rasteriser shades every pixel of it).
        renderer.addRect(background, Rect(x: 20, y: 30, width: 260, height: 170), color: RGBA(0.13, 0.15, 0.2), cornerRadius: 12)
        renderer.addRect(background, bandFrame, color: RGBA(0.13, 0.15, 0.2))

        // The carousel: every poster side by side (the first once more, to wrap), slid by the
        // strip's transform inside the carousel's clip.
        let frame = carouselFrame, step = Board.posterSize.width + Board.gap
        let position = Board.carouselPosition(at: t).truncatingRemainder(dividingBy: Double(Board.posterCount))
        renderer.setTransform(strip, .translation(x: -Float(position) * step, y: 0))
        for k in 0...Board.posterCount {
            renderer.addImage(
                strip, posters[k % Board.posterCount],
                in: Rect(x: frame.x + Float(k) * step, y: frame.y, width: Board.posterSize.width, height: Board.posterSize.height))
        }

        // The ticker: the text twice, scrolled left by its transform inside the band's clip.
        let scrolled = (t * Board.tickerSpeed).truncatingRemainder(dividingBy: Double(tickerWidth))
        renderer.setTransform(ticker, .translation(x: -Float(scrolled), y: 0))
        let baseline = bandFrame.y + 22
        renderer.addText(ticker, Board.tickerText, x: 0, baseline: baseline, face: 0, color: RGBA(0.95, 0.95, 0.95))
        renderer.addText(ticker, Board.tickerText, x: tickerWidth, baseline: baseline, face: 0, color: RGBA(0.95, 0.95, 0.95))

        // The dial and its hand, turned about the centre.
        renderer.addStroke(dial, ring)
        for k in 0..<12 {
            let a = Float(k) / 12 * 2 * .pi, c = dialCentre
            renderer.addLine(
                dial, from: Point(x: c.x + 58 * sin(a), y: c.y - 58 * cos(a)),
                to: Point(x: c.x + 66 * sin(a), y: c.y - 66 * cos(a)), width: 2, color: RGBA(0.6, 0.64, 0.72))
        }
        renderer.setTransform(hand, .rotation(radians: Float(Board.handAngle(at: t)), about: dialCentre))
        renderer.addStroke(hand, handStroke)

        // The text field and its caret.
        let box = fieldFrame
        renderer.addRect(field, box, color: RGBA(0.95, 0.95, 0.97), cornerRadius: 8)
        let shown = text.isEmpty ? "Type a message…" : text
        let advance = renderer.addText(
            field, shown, x: box.x + 12, baseline: box.y + 26, face: 1,
            color: text.isEmpty ? RGBA(0.55, 0.57, 0.62) : RGBA(0.1, 0.1, 0.12))
        if caretOn {
            let x = box.x + 12 + (text.isEmpty ? 0 : advance) + 1
            renderer.addRect(field, Rect(x: x, y: box.y + 9, width: 2, height: 22), color: RGBA(0.25, 0.55, 0.95))
        }
    }
}
