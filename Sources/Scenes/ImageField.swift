import Foundation
import GLESRenderer
import Motion

/// Where the images scene's images are at a time: a pure function of the time since the scene
/// started and of the bounds, so that a frame's picture depends on its time alone, whatever the
/// frame rate (or the demo's virtual clock) that led to it. Each image drifts at its own constant
/// velocity and turns at the bounds' edges; some pulse in size or opacity, some show a crop of
/// their picture, some are tinted. The drawing in the scene is ``ImagesScene``; this is the layout.
public struct ImageField: Sendable {
    /// One image's fixed parameters, chosen from the seed at set-up.
    public struct Sprite: Sendable, Hashable {
        /// Which picture (0..<``ImagePatterns/count``).
        public var image: Int
        /// Width and height in points before the pulse.
        public var width: Float, height: Float
        /// The starting place, as fractions of the room to move in (0…1).
        public var startX: Double, startY: Double
        /// Points per second.
        public var velocityX: Double, velocityY: Double
        /// The part of the picture shown (its pixels; nil: all of it).
        public var source: Rect?
        public var tint: RGBA
        /// How far the size swings (fraction, 0: steady) and the opacity (0: opaque), and how fast (radians per second).
        public var sizePulse: Float, opacityPulse: Float, pulseRate: Double, pulsePhase: Double
    }

    /// What to draw for one image at a time (the arguments of ``Renderer/addImage(_:_:in:source:tint:opacity:)``).
    public struct Placement: Sendable, Hashable {
        public var image: Int
        public var rect: Rect
        public var source: Rect?
        public var tint: RGBA
        public var opacity: Float
    }

    public let sprites: [Sprite]
    /// The room the images move in (points).
    public var bounds: (width: Float, height: Float)

    /// `count` images in `width`×`height` points, the same for the same seed. The sprites are in
    /// blocks of the same picture (all of picture 0 first, then 1…): the renderer draws a run of
    /// one image in one draw call, so the scene costs ``ImagePatterns/count`` draw calls, not one
    /// per image.
    public init(count: Int, width: Float, height: Float, seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let side = Float(ImagePatterns.side)
        let cells = ImagePatterns.side / 2
        var sprites: [Sprite] = []
        sprites.reserveCapacity(count)
        for i in 0..<count {
            let size = Float(random.uniform(14...56))
            let aspect = Float(random.uniform(0.7...1.4))
            let angle = random.uniform(0...(2 * Double.pi))
            let speed = random.uniform(30...140)
            // Every third shows one quadrant of its picture; every fourth is tinted.
            let source =
                i % 3 == 1 ? Rect(x: Float(i / 3 % 2 * cells), y: Float(i / 6 % 2 * cells), width: side / 2, height: side / 2) : nil
            let tint = i % 4 == 2 ? Palette.colors[i / 4 % Palette.colors.count] : RGBA(1, 1, 1)
            sprites.append(
                Sprite(
                    image: i * ImagePatterns.count / max(count, 1), width: size * aspect, height: size,
                    startX: random.uniform(0...1), startY: random.uniform(0...1), velocityX: speed * cos(angle),
                    velocityY: speed * sin(angle),
                    source: source, tint: tint, sizePulse: i % 2 == 0 ? 0.25 : 0, opacityPulse: i % 5 == 0 ? 0.6 : 0,
                    pulseRate: random.uniform(1...4), pulsePhase: random.uniform(0...(2 * Double.pi))))
        }
        self.sprites = sprites
        bounds = (width, height)
    }

    /// Where image `i` is `time` seconds after the start.
    public func placement(_ i: Int, at time: Double) -> Placement {
        let s = sprites[i]
        let wave = Float(sin(s.pulseRate * time + s.pulsePhase))
        let grow = 1 + s.sizePulse * wave
        let (w, h) = (s.width * grow, s.height * grow)
        let x = ImageField.bouncing(start: s.startX, speed: s.velocityX, time: time, room: bounds.width - w)
        let y = ImageField.bouncing(start: s.startY, speed: s.velocityY, time: time, room: bounds.height - h)
        let opacity = 1 - s.opacityPulse * (0.5 + 0.5 * wave)
        return Placement(image: s.image, rect: Rect(x: x, y: y, width: w, height: h), source: s.source, tint: s.tint, opacity: opacity)
    }

    /// A coordinate that starts at `start` (a fraction of `room`) and moves at `speed` points a
    /// second back and forth across `room` points, turning at either end: a triangle wave of time.
    static func bouncing(start: Double, speed: Double, time: Double, room: Float) -> Float {
        let span = Double(max(1, room))
        let period = 2 * span
        var phase = (start * span + speed * time).truncatingRemainder(dividingBy: period)
        if phase < 0 { phase += period }
        return Float(phase < span ? phase : period - phase)
    }
}
