import DisplayLinkCore

/// The kernel's sequence counters: page-flip events carry 32 bits, vblank counts 64.
extension KMSFrameScheduler {
    /// Extends a 32-bit flip sequence to the 64-bit value nearest `last` (within 2³¹ either way):
    /// forward across a wrap, or back for a late event from before it. Never below 0.
    public static func extend(_ sequence32: UInt32, after last: UInt64) -> UInt64 {
        let step = Int32(bitPattern: sequence32 &- UInt32(truncatingIfNeeded: last))
        if step < 0 && UInt64(step.magnitude) > last { return UInt64(sequence32) }
        return last &+ UInt64(bitPattern: Int64(step))
    }
}
