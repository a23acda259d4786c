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

extension ModeRequest {
    /// A mode written other than `WxH` or `WxH@Hz`, or out of range (sizes 16…16384, rates 1…1000 Hz).
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text that could not be read.
        public var text: String

        public init(text: String) { self.text = text }

        public var description: String {
            "Cannot read the mode '\(text)': write it as WxH or WxH@Hz, e.g. 1024x768 or 640x480@144."
        }
    }

    /// Parses `WxH` or `WxH@Hz` (e.g. `640x480`, `640x480@144`).
    public init(parsing text: String) throws(SyntaxError) {
        let parts = text.lowercased().split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw SyntaxError(text: text) }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), (16...16384).contains(w), (16...16384).contains(h)
        else { throw SyntaxError(text: text) }
        var rate: Int?
        if parts.count == 2 {
            guard let hz = Int(parts[1]), (1...1000).contains(hz) else { throw SyntaxError(text: text) }
            rate = hz
        }
        self.init(width: w, height: h, refreshRate: rate)
    }
}
