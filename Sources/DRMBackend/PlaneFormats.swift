/// The formats and modifiers a plane can scan out, from its `IN_FORMATS` property blob
/// (`struct drm_format_modifier_blob`), or from its plain format list when the driver has no
/// `IN_FORMATS` (then every format is listed with the implicit modifier only).
public struct PlaneFormats: Sendable, Hashable, CustomStringConvertible {
    /// Each format (a fourcc code) with the modifiers it is offered with.
    public private(set) var modifiers: [UInt32: [UInt64]]
    /// The formats in the order the plane lists them.
    public private(set) var formats: [UInt32]
    /// Whether the list came from `IN_FORMATS` (false: the plane's plain format list).
    public let fromInFormats: Bool

    public static let linear: UInt64 = 0
    public static let invalidModifier: UInt64 = 0x00FF_FFFF_FFFF_FFFF

    /// A plain format list: each with the implicit modifier (DRM_FORMAT_MOD_INVALID).
    public init(formats: [UInt32]) {
        var table: [UInt32: [UInt64]] = [:]
        for f in formats { table[f] = [PlaneFormats.invalidModifier] }
        modifiers = table
        self.formats = formats
        fromInFormats = false
    }

    /// Reads an `IN_FORMATS` blob; nil if it is malformed (short, offsets or counts out of range).
    public init?(inFormatsBlob bytes: [UInt8]) {
        func u32(_ at: Int) -> UInt32? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u64(_ at: Int) -> UInt64? {
            guard let low = u32(at), let high = u32(at + 4) else { return nil }
            return UInt64(low) | UInt64(high) << 32
        }
        guard let version = u32(0), version >= 1, let countFormats = u32(8), let formatsOffset = u32(12),
            let countModifiers = u32(16), let modifiersOffset = u32(20),
            Int(formatsOffset) + Int(countFormats) * 4 <= bytes.count,
            Int(modifiersOffset) + Int(countModifiers) * 24 <= bytes.count
        else { return nil }
        var formats: [UInt32] = []
        for i in 0..<Int(countFormats) {
            guard let f = u32(Int(formatsOffset) + i * 4) else { return nil }
            formats.append(f)
        }
        var table: [UInt32: [UInt64]] = [:]
        for m in 0..<Int(countModifiers) {
            let at = Int(modifiersOffset) + m * 24
            guard let mask = u64(at), let offset = u32(at + 8), let modifier = u64(at + 16) else { return nil }
            for bit in 0..<64 where mask & (1 << UInt64(bit)) != 0 {
                let index = Int(offset) + bit
                guard index < formats.count else { continue }
                table[formats[index], default: []].append(modifier)
            }
        }
        // A format listed without any modifier entry is offered with the implicit one.
        for f in formats where table[f] == nil { table[f] = [PlaneFormats.invalidModifier] }
        modifiers = table
        self.formats = formats
        fromInFormats = true
    }

    /// Whether `format` can be scanned out with `modifier` (the implicit modifier,
    /// DRM_FORMAT_MOD_INVALID, is accepted for any listed format: the driver picks the layout).
    public func supports(format: UInt32, modifier: UInt64) -> Bool {
        guard let offered = modifiers[format] else { return false }
        return modifier == PlaneFormats.invalidModifier || offered.contains(modifier)
    }

    /// A fourcc code as text, e.g. `XR24`.
    public static func name(_ format: UInt32) -> String {
        String(
            decoding: (0..<4).map { UInt8(truncatingIfNeeded: format >> ($0 * 8)) }.map { $0 >= 32 && $0 < 127 ? $0 : UInt8(ascii: "?") },
            as: UTF8.self)
    }

    /// A modifier as text: `linear`, `implicit`, or hex.
    public static func modifierName(_ modifier: UInt64) -> String {
        switch modifier {
        case linear: "linear"
        case invalidModifier: "implicit"
        default: "0x" + String(modifier, radix: 16)
        }
    }

    public var description: String {
        formats.map { f in
            "\(PlaneFormats.name(f))(\((modifiers[f] ?? []).map(PlaneFormats.modifierName).joined(separator: ",")))"
        }.joined(separator: " ")
    }
}
