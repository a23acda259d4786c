/// A display mode asked for: a size and, optionally, a refresh rate, written `WxH` or `WxH@Hz`
/// (e.g. `640x480`, `640x480@144`). The DRM backend's `--mode` (parsed and matched against a
/// connector's modes there) and a headless compositor's virtual monitor are this one type.
public struct ModeRequest: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Hz; nil: whatever the display takes by default (on DRM, the preferred or first mode of
    /// that size; on a headless mutter, 60 Hz).
    public var refreshRate: Int?

    public init(width: Int, height: Int, refreshRate: Int? = nil) {
        self.width = width
        self.height = height
        self.refreshRate = refreshRate
    }

    /// `WxH` or `WxH@Hz`.
    public var description: String { "\(width)x\(height)" + (refreshRate.map { "@\($0)" } ?? "") }
}
