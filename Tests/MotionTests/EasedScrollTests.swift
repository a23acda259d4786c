import DisplayLinkCore
import DisplayLinkTesting
import Motion
import Testing

/// Drives an eased scroll with a link on a mock display.
@MainActor
final class ScrollDriver {
    var scroll = EasedScroll()
    var offsets: [Double] = []
    var fractions: [Double?] = []
    var frames: [DisplayFrame] = []
    func tick(_ link: DisplayLink) {
        offsets.append(scroll.update(link.frame))
        fractions.append(scroll.fraction)
        frames.append(link.frame)
    }
}

@MainActor
@Suite("Eased scroll")
struct EasedScrollTests {
    @Test(
        "ends on the first frame whose target is at or after the deadline, at 30, 60 and 144 Hz",
        arguments: [30.0, 60.0, 144.0])
    func endsOnDeadline(hz: Double) {
        let source = MockFrameSource(refreshRate: hz)
        let driver = ScrollDriver()
        driver.scroll.scroll(to: 4_000, duration: 1.0, curve: .easeInOut)
        let link = DisplayLink(source: source, target: driver) { d, link in d.tick(link) }
        source.vsync(Int(hz * 1.5))
        let start = driver.frames[0].timestamp
        let deadline = start + Nanoseconds(1_000_000_000)
        guard let last = driver.frames.firstIndex(where: { $0.targetTimestamp >= deadline }) else {
            Issue.record("never reached the deadline"); return
        }
        #expect(driver.offsets[last] == 4_000, "snaps to exactly the end")
        #expect(driver.offsets[last - 1] < 4_000)
        #expect(driver.scroll.frameCount == last + 1)
        #expect(!driver.scroll.isAnimating)
        // Every frame before the end: offset = 4000·smoothstep((target − start)/1 s).
        for i in 0..<last {
            let fraction = (driver.frames[i].targetTimestamp - start).seconds
            #expect(driver.fractions[i] == fraction)
            #expect(driver.offsets[i] == 4_000 * EasingCurve.easeInOut(fraction))
        }
        // And it stays there.
        #expect(driver.offsets.last == 4_000)
        link.invalidate()
    }

    @Test("the first frame uses targetTimestamp, not timestamp: the scroll is already under way")
    func usesTargetTimestamp() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let driver = ScrollDriver()
        driver.scroll.scroll(to: 1_000, duration: 0.1, curve: .linear)
        let link = DisplayLink(source: source, target: driver) { d, link in d.tick(link) }
        source.vsync(3)
        #expect(zip(driver.offsets, [100.0, 200, 300]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(driver.offsets)")
        link.invalidate()
    }

    /// A frame at `t` aiming at `target` (ns, 16 ms period), then the offset and whether the scroll
    /// is still animating.
    struct Step: Sendable {
        var t: Int64, target: Int64, offset: Double, animating: Bool
        init(_ t: Int64, target: Int64, _ offset: Double, animating: Bool) {
            self.t = t; self.target = target; self.offset = offset; self.animating = animating
        }
    }

    /// After two frames of a linear 500 px scroll over 1 s (the second aiming at 0.2 s: offset 150),
    /// a target earlier than the last one.
    @Test(
        """
        a target earlier than the last one: a fraction that goes backwards finishes the scroll at its end; a little earlier (under half a \
        period: prediction jitter) holds the offset and goes on
        """,
        arguments: [
            // Backwards by 100 ms: finished at its end.
            [Step(200_000_000, target: 200_000_000, 500, animating: false)],
            // 200 ns earlier than the last target (seen on vkms in qemu): held, still animating.
            [
                Step(116_000_000, target: 299_999_800, 150, animating: true),
                Step(132_000_000, target: 400_000_000, 200, animating: true),
                // 7.9 ms back is still jitter at a 16 ms period; 8.1 ms back is a clock step.
                Step(148_000_000, target: 392_100_000, 200, animating: true),
                Step(164_000_000, target: 391_900_000, 500, animating: false)
            ]
        ])
    func earlierTarget(_ steps: [Step]) {
        var scroll = EasedScroll()
        scroll.scroll(to: 500, duration: 1, curve: .linear)
        scroll.update(frame(0, target: 100_000_000))
        scroll.update(frame(100_000_000, target: 300_000_000))
        #expect(scroll.offset == 150)
        for step in steps {
            scroll.update(frame(step.t, target: step.target))
            #expect(scroll.offset == step.offset, "\(step)")
            #expect(scroll.isAnimating == step.animating, "\(step)")
        }
    }
}

/// A frame at `t` aiming at `target` (ns), 16 ms period.
private func frame(_ t: Int64, target: Int64) -> DisplayFrame {
    DisplayFrame(
        timestamp: MonotonicInstant(nanoseconds: t), targetTimestamp: MonotonicInstant(nanoseconds: target),
        duration: Nanoseconds(16_000_000), delta: .zero, sequence: 0, missedFrames: 0,
        provenance: .hardwareVBlank, refreshIndex: 0, frameInterval: 1)
}
