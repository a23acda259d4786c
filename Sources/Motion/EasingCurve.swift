// Math functions (exp, sin, cos) come from the C library the Swift toolchain always ships; this
// module imports no project C module.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Easing curves: pure functions from progress in 0…1 to eased progress (0 at 0, 1 at 1).
public enum EasingCurve: String, Sendable, Hashable, CaseIterable {
    case linear
    /// The seeds' smoothstep: t²(3 − 2t).
    case easeInOut = "ease-in-out"
    case cubicIn = "cubic-in"
    case cubicOut = "cubic-out"
    case cubicInOut = "cubic-in-out"
    /// A critically damped spring (ω = 10 per unit time): 1 − (1 + ωt)·e^(−ωt), reaching 1 at t = 1.
    case spring

    /// The eased value of `t`, clamped to 0…1 first.
    @inlinable public func callAsFunction(_ t: Double) -> Double {
        let t = min(max(t, 0), 1)
        switch self {
        case .linear: return t
        case .easeInOut: return t * t * (3 - 2 * t)
        case .cubicIn: return t * t * t
        case .cubicOut:
            let u = 1 - t
            return 1 - u * u * u
        case .cubicInOut:
            if t < 0.5 { return 4 * t * t * t }
            let u = -2 * t + 2
            return 1 - u * u * u / 2
        case .spring:
            if t >= 1 { return 1 }
            let omega = 10.0
            return 1 - (1 + omega * t) * exp(-omega * t)
        }
    }
}
