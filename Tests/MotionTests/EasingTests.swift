import Motion
import Testing

@Suite("Easing curves")
struct EasingTests {
    @Test("smoothstep easeInOut matches t²(3 − 2t) exactly")
    func smoothstep() {
        let curve = EasingCurve.easeInOut
        #expect(curve(0) == 0)
        #expect(curve(0.25) == 0.15625)
        #expect(curve(0.5) == 0.5)
        #expect(curve(0.75) == 0.84375)
        #expect(curve(1) == 1)
    }

    @Test("cubic curves at exact points")
    func cubics() {
        #expect(EasingCurve.cubicIn(0.5) == 0.125)
        #expect(EasingCurve.cubicOut(0.5) == 0.875)
        #expect(EasingCurve.cubicInOut(0.25) == 0.0625)
        #expect(EasingCurve.cubicInOut(0.5) == 0.5)
        #expect(EasingCurve.cubicInOut(0.75) == 0.9375)
        #expect(EasingCurve.linear(0.3) == 0.3)
    }

    @Test("every curve starts at 0, ends at 1, clamps outside, and never decreases")
    func endpoints() {
        for curve in EasingCurve.allCases {
            #expect(curve(0) == 0, "\(curve)")
            #expect(curve(1) == 1, "\(curve)")
            #expect(curve(-3) == 0 && curve(7) == 1, "\(curve)")
            var previous = 0.0
            for i in 0...100 {
                let v = curve(Double(i) / 100)
                #expect(v >= previous - 1e-15, "\(curve) at \(i)")
                previous = v
            }
        }
    }

    @Test("the critically damped spring: 1 − (1 + 10t)e^(−10t)")
    func spring() {
        #expect(abs(EasingCurve.spring(0.1) - (1 - 2 * 0.36787944117144233)) < 1e-15)
        #expect(abs(EasingCurve.spring(0.5) - (1 - 6 * 0.006737946999085467)) < 1e-15)
    }
}
