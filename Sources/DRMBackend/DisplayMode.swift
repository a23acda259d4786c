import DisplayLinkCore

/// A display mode's timings (the fields of `drmModeModeInfo` that decide the refresh).
public struct DisplayMode: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var htotal: Int
    public var vtotal: Int
    /// Pixel clock in kHz.
    public var clock: Int
    public var interlaced: Bool
    public var doubleScan: Bool
    /// The rounded rate the kernel reports (never used for timing).
    public var vrefresh: Int
    public var isPreferred: Bool

    public init(
        width: Int, height: Int, htotal: Int, vtotal: Int, clock: Int, interlaced: Bool = false,
        doubleScan: Bool = false, vrefresh: Int = 0, isPreferred: Bool = false
    ) {
        self.width = width; self.height = height; self.htotal = htotal; self.vtotal = vtotal; self.clock = clock
        self.interlaced = interlaced; self.doubleScan = doubleScan; self.vrefresh = vrefresh; self.isPreferred = isPreferred
    }

    /// The exact refresh period: htotal·vtotal / clock, doubled for doublescan, halved for
    /// interlace (a field per vblank), rounded to the nanosecond.
    public var period: Nanoseconds {
        guard clock > 0 else { return .zero }
        var pixels = Int64(htotal) * Int64(vtotal) * 1_000_000  // clock is in kHz: ns = pixels·1e6/clock
        if doubleScan { pixels *= 2 }
        var divisor = Int64(clock)
        if interlaced { divisor *= 2 }
        return Nanoseconds((pixels + divisor / 2) / divisor)
    }

    /// The exact refresh rate in Hz.
    public var refreshRate: Double {
        var rate = Double(clock) * 1000 / (Double(htotal) * Double(vtotal))
        if doubleScan { rate /= 2 }
        if interlaced { rate *= 2 }
        return rate
    }

    public var description: String {
        let rate = (refreshRate * 100).rounded() / 100
        return "\(width)x\(height)@\(rate)"
    }

    /// A mode of the same size and blanking at exactly `hz`: the vertical total is stretched until
    /// the pixel clock (whole kHz) gives the rate exactly, so the period is exact to the nanosecond
    /// rounding (e.g. 640x480 at 144 Hz: 800×525 at 60480 kHz).
    public func retimed(to hz: Int) -> DisplayMode {
        var mode = self
        mode.isPreferred = false
        mode.vrefresh = hz
        var vtotal = self.vtotal
        while (Int64(htotal) * Int64(vtotal) * Int64(hz)) % 1000 != 0 && vtotal < self.vtotal + 1000 { vtotal += 1 }
        mode.vtotal = vtotal
        mode.clock = Int(Int64(htotal) * Int64(vtotal) * Int64(hz) / 1000)
        return mode
    }

    /// A mode made from nothing (no listed mode of that size): reduced-blanking-like timings.
    public static func generated(width: Int, height: Int, hz: Int) -> DisplayMode {
        DisplayMode(width: width, height: height, htotal: width + 160, vtotal: height + 35, clock: 0).retimed(to: hz)
    }
}

/// A mode asked for (the type is DisplayLinkCore's, shared with the headless compositors' virtual
/// monitors): choosing a connector's mode by it.
extension ModeRequest {
    /// Picks from the connector's modes: an exact match; else a listed mode of that size retimed
    /// to the rate asked for; without a rate, the preferred (or first) mode of that size.
    public func select(from modes: [DisplayMode]) throws(DRMError) -> DisplayMode {
        let sameSize = modes.filter { $0.width == width && $0.height == height && !$0.interlaced }
        guard let base = sameSize.first(where: \.isPreferred) ?? sameSize.first else {
            var sizes: [String] = []
            for m in modes where !sizes.contains("\(m.width)x\(m.height)") { sizes.append("\(m.width)x\(m.height)") }
            throw .modeNotFound(requested: description, available: sizes)
        }
        guard let hz = refreshRate else { return base }
        if let exact = sameSize.first(where: { abs($0.refreshRate - Double(hz)) < 0.01 }) { return exact }
        return base.retimed(to: hz)
    }
}
