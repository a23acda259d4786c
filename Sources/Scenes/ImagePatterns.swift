/// The images scene's pictures, made in code so that the demo reads no file: small RGBA squares
/// (straight alpha, rows top to bottom) of four kinds, distinct enough to tell apart when scaled,
/// cropped and tinted.
public enum ImagePatterns {
    /// Each image's width and height in pixels.
    public static let side = 32
    /// How many kinds there are (``rgba(_:)`` takes 0..<count).
    public static let count = 4

    /// The pixels of kind `kind % count`: 0 a diagonal colour gradient, 1 a checkerboard of 4×4
    /// cells, 2 a disc fading to transparent at its rim, 3 rings with
    /// transparent gaps (the alpha shows the blending).
    public static func rgba(_ kind: Int) -> [UInt8] {
        let n = side
        var pixels = [UInt8](repeating: 0, count: n * n * 4)
        let last = Float(n - 1)
        for y in 0..<n {
            for x in 0..<n {
                let (u, v) = (Float(x) / last, Float(y) / last)
                let (dx, dy) = (u - 0.5, v - 0.5)
                let r = (dx * dx + dy * dy).squareRoot() * 2  // 0 at the centre, 1 at the edges' middles
                var p: (Float, Float, Float, Float)
                switch kind % count {
                case 0: p = (u, 0.35 + 0.5 * v, 1 - u, 1)
                case 1: p = (x / 4 + y / 4) % 2 == 0 ? (0.95, 0.95, 0.92, 1) : (0.15, 0.20, 0.30, 1)
                case 2: p = (1, 0.75 - 0.4 * r, 0.2, max(0, min(1, (1 - r) * 3)))
                default: p = Int(r * 6) % 2 == 0 && r < 1 ? (0.3, 0.8, 0.9, 1) : (0, 0, 0, 0)
                }
                let i = (y * n + x) * 4
                pixels[i] = UInt8(p.0 * 255)
                pixels[i + 1] = UInt8(p.1 * 255)
                pixels[i + 2] = UInt8(p.2 * 255)
                pixels[i + 3] = UInt8(p.3 * 255)
            }
        }
        return pixels
    }
}
