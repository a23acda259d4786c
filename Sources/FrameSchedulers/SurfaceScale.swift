/// A surface's scale: how many pixels one point spans, where the figure comes from, and how a
/// buffer of that many pixels is shown at the size in points. Decided from what the display says
/// (no C, no I/O): the Wayland backend feeds it the compositor's events, the KMS backend the
/// connector's physical size, and `DisplaySurface.Options.scale` overrides both.
///
/// Sizes in points are what programs lay out in (a Wayland surface's surface-local size, a KMS
/// mode's pixels divided by the scale); a buffer is points × scale pixels, each side rounded
/// halfway away from zero (what `wp_fractional_scale_v1` asks of toplevels).
public struct SurfaceScale: Sendable, Hashable, CustomStringConvertible {
    /// How a buffer of ``pixelSize(points:_:)`` pixels is shown at the size in points.
    public enum Presentation: Sendable, Hashable {
        /// `wl_surface.set_buffer_scale` with this integer (1: the default, nothing to set).
        case bufferScale(Int32)
        /// Buffer scale 1 and a `wp_viewport` whose destination is the size in points.
        case viewport
    }

    /// What the scale rests on.
    public enum Source: String, Sendable, Hashable {
        /// `wp_fractional_scale_v1.preferred_scale` (with `wp_viewporter` to show it).
        case fractionalScale = "fractional_scale"
        /// `wl_surface.preferred_buffer_scale` (`wl_compositor` version 6).
        case preferredBufferScale = "preferred_buffer_scale"
        /// The largest `wl_output.scale` of the outputs the surface is on.
        case outputs
        /// The output's pixels per inch (the connector's physical size, DRM/KMS).
        case physicalSize = "physical_size"
        /// `DisplaySurface.Options.scale`.
        case option
        /// Nothing said otherwise: 1.
        case unknown
    }

    /// Pixels per point (1, 2, 1.25, …).
    public var factor: Double
    public var presentation: Presentation
    public var source: Source

    /// A scale of `factor` (finite, > 0): an integer one as a buffer scale, another through a
    /// viewport.
    public init(factor: Double, source: Source) {
        self.factor = factor
        self.source = source
        let whole = factor.rounded()
        presentation = whole == factor && whole >= 1 && whole <= Double(Int32.max) ? .bufferScale(Int32(whole)) : .viewport
    }

    /// Scale 1, from nothing.
    public static let one = SurfaceScale(factor: 1, source: .unknown)

    /// `wp_fractional_scale_v1` sends the scale as a numerator over this.
    public static let fractionalDenominator: UInt32 = 120
    /// The largest scale taken from a display (a larger figure is a broken report).
    public static let largest = 8.0

    public var description: String { "\(factor) (\(source.rawValue))" }

    /// The scale on Wayland, from what the compositor said, best first: the surface's
    /// fractional preferred scale (`fractional120`, in 120ths; used only with a viewporter to show
    /// it), its preferred buffer scale, the largest integer scale of the outputs it is on, else 1.
    /// Zero or out-of-range figures count as not said.
    public static func wayland(
        fractional120: UInt32?, hasViewporter: Bool, preferredBufferScale: Int32?, outputScales: [Int32]
    ) -> SurfaceScale {
        if hasViewporter, let fractional120, fractional120 > 0 {
            let factor = Double(fractional120) / Double(fractionalDenominator)
            if factor <= largest { return SurfaceScale(factor: factor, source: .fractionalScale) }
        }
        if let preferredBufferScale, preferredBufferScale >= 1, Double(preferredBufferScale) <= largest {
            return SurfaceScale(factor: Double(preferredBufferScale), source: .preferredBufferScale)
        }
        let usable = outputScales.filter { $0 >= 1 && Double($0) <= largest }
        if let scale = usable.max() { return SurfaceScale(factor: Double(scale), source: .outputs) }
        return .one
    }

    /// The points of one inch: the density at which the scale is 1.
    public static let pointsPerInch = 96.0

    /// The scale of a DRM/KMS output from its size in pixels and millimetres (the connector's
    /// `mmWidth`/`mmHeight`): the whole number of 96-DPI points its density holds, at least 1
    /// (≥ 192 DPI: 2, ≥ 288 DPI: 3). An unknown physical size (0 mm, as virtual outputs report),
    /// or a density no screen has, gives 1.
    public static func physical(pixelWidth: Int32, pixelHeight: Int32, millimetreWidth: UInt32, millimetreHeight: UInt32) -> SurfaceScale {
        guard pixelWidth > 0, pixelHeight > 0, millimetreWidth > 0, millimetreHeight > 0 else { return .one }
        // The lower of the two densities: EDIDs round each side to whole millimetres (or store
        // centimetres), so one side can claim more than the panel has.
        let dpi = min(
            Double(pixelWidth) * 25.4 / Double(millimetreWidth),
            Double(pixelHeight) * 25.4 / Double(millimetreHeight))
        let whole = (dpi / pointsPerInch).rounded(.down)
        guard whole <= largest else { return .one }
        return SurfaceScale(factor: max(1, whole), source: .physicalSize)
    }

    /// The scale an option asks for, or nil when it is no scale (not finite, not above 0, or
    /// above ``largest``).
    public static func option(_ factor: Double) -> SurfaceScale? {
        guard factor.isFinite, factor > 0, factor <= largest else { return nil }
        return SurfaceScale(factor: factor, source: .option)
    }

    /// A buffer's size in pixels for a size in points: each side × ``factor`` rounded halfway away
    /// from zero, at least 1.
    public func pixelSize(points width: Int32, _ height: Int32) -> (width: Int32, height: Int32) {
        (SurfaceScale.pixels(width, factor), SurfaceScale.pixels(height, factor))
    }

    /// A size in points for a buffer of this many pixels (a KMS mode): pixels ÷ ``factor``.
    public func pointSize(pixels width: Int32, _ height: Int32) -> (width: Double, height: Double) {
        (Double(width) / factor, Double(height) / factor)
    }

    private static func pixels(_ points: Int32, _ factor: Double) -> Int32 {
        let scaled = (Double(points) * factor).rounded(.toNearestOrAwayFromZero)
        return Int32(clamping: Int64(max(1, min(scaled, Double(Int32.max)))))
    }
}
