/// What a DRM driver does differently from the rest, each a named flag with the reason the
/// display acts on it (the way weston names its workarounds). Found when the device is opened
/// (`DRMDevice`) and, for some, while frames run.
public struct DRMQuirks: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The driver refuses vblank queries or queued vblank events (EOPNOTSUPP), or two page flips
    /// complete at one vblank count: refreshes are paced by a timer at the mode's exact period.
    public static let noVblankEvents = DRMQuirks(rawValue: 1 << 0)
    /// No `DRM_CAP_CRTC_IN_VBLANK_EVENT`: page flips are reported by `page_flip_handler`, which
    /// carries no CRTC id.
    public static let noCRTCInVblankEvent = DRMQuirks(rawValue: 1 << 1)
    /// No atomic modesetting (`DRM_CLIENT_CAP_ATOMIC` refused, no primary plane listed, or the
    /// first frame's `TEST_ONLY` commit refused): the legacy API drives the display.
    public static let legacyOnly = DRMQuirks(rawValue: 1 << 2)
    /// The GL driver rasterises in software: each scan-out buffer stays mapped for its lifetime,
    /// since Mesa's software rasteriser maps a buffer for every frame it draws and unmaps it after
    /// when no other mapping is open, faulting every page in again the next frame.
    public static let softwareRendering = DRMQuirks(rawValue: 1 << 3)

    /// Each quirk with its name and what the display does about it.
    public static let table: [(quirk: DRMQuirks, name: String, consequence: String)] = [
        (.noVblankEvents, "no-vblank-events", "refreshes paced by a timer at the mode's period"),
        (.noCRTCInVblankEvent, "no-crtc-in-vblank-event", "flips read through page_flip_handler"),
        (.legacyOnly, "legacy-only", "drmModeSetCrtc and drmModePageFlip instead of atomic commits"),
        (.softwareRendering, "software-rendering", "scan-out buffers kept mapped")
    ]

    /// The names of the quirks present, e.g. `no-vblank-events, legacy-only` (`none` without any).
    public var description: String {
        let names = DRMQuirks.table.filter { contains($0.quirk) }.map(\.name)
        return names.isEmpty ? "none" : names.joined(separator: ", ")
    }

    /// Each quirk present with what the display does about it, for a log line.
    public var explained: String {
        let lines = DRMQuirks.table.filter { contains($0.quirk) }.map { "\($0.name): \($0.consequence)" }
        return lines.isEmpty ? "none" : lines.joined(separator: "; ")
    }
}
