/// The largest of the recent samples over a long window, held as the largest of each of
/// ``blocks`` blocks of ``blockSize`` samples: the window slides a block at a time, so
/// ``largest`` covers the samples of the current block and of the ``blocks`` − 1 before it
/// (between 225 and 256 samples once that many were added).
///
/// A long window sees the rare slow frame of a program whose render times scatter (one in a
/// hundred at twice the median, llvmpipe under emulation), which the last 31 frames mostly do
/// not hold.
///
/// Pure value type: fixed storage, no allocation.
public struct RecentPeak: Sendable {
    public static let blockSize = 32
    public static let blocks = 8
    private typealias Maxima = (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)
    private var maxima: Maxima = (.min, .min, .min, .min, .min, .min, .min, .min)
    /// The block samples go into now, and how many it holds.
    private var block = 0
    private var inBlock = 0

    public init() {}

    /// Adds a sample (at least 0: render times).
    public mutating func append(_ value: Int64) {
        let value = max(0, value)
        withUnsafeMutableBytes(of: &maxima) { raw in
            let m = raw.bindMemory(to: Int64.self)
            if inBlock == RecentPeak.blockSize {
                block = (block + 1) % RecentPeak.blocks
                m[block] = .min
                inBlock = 0
            }
            m[block] = max(m[block], value)
        }
        inBlock += 1
    }

    /// The largest sample in the window (nil: none added).
    public var largest: Int64? {
        let peak = withUnsafeBytes(of: maxima) { raw in raw.bindMemory(to: Int64.self).max() ?? .min }
        return peak == .min ? nil : peak
    }
}
