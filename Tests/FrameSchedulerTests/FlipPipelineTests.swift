@testable import FrameSchedulers
import DisplayLinkCore
import Testing

@Suite("Frames in flight on a DRM display")
struct FlipPipelineTests {
    let period = Nanoseconds(16_666_667)
    /// Within three quarters of the period: one frame in flight can take it.
    let fast = Nanoseconds(12_000_000)
    let slow = Nanoseconds(15_000_000)

    @Test("one frame in flight while frames are drawn in time")
    func staysShallow() {
        var pipeline = FlipPipeline()
        for _ in 0..<500 {
            let action = pipeline.frameSubmitted(sinceVblank: slow, period: period, flipPending: false, missedItsVblank: false)
            #expect(action == .flip)
            let runs = pipeline.flipCompleted(hasHeldFrame: false)
            #expect(runs)
        }
        #expect(pipeline.depth == 1)
    }

    @Test("a frame that missed its vblank starts the next frame at once; later frames are held while a flip is pending")
    func deepensOnAMiss() {
        var pipeline = FlipPipeline()
        let first = pipeline.frameSubmitted(sinceVblank: period, period: period, flipPending: false, missedItsVblank: true)
        #expect(first == .flipAndStartNext)
        #expect(pipeline.depth == 2)
        for _ in 0..<200 {
            let action = pipeline.frameSubmitted(sinceVblank: slow, period: period, flipPending: true, missedItsVblank: false)
            #expect(action == .hold)
            let runs = pipeline.flipCompleted(hasHeldFrame: true)  // the held frame flips and the next callback runs
            #expect(runs)
        }
        #expect(pipeline.depth == 2)
    }

    @Test("back to one frame in flight after a run of fast frames, skipping one callback to drain the held frame")
    func returnsWhenFast() {
        var pipeline = FlipPipeline()
        _ = pipeline.frameSubmitted(sinceVblank: period, period: period, flipPending: false, missedItsVblank: true)
        for i in 1...FlipPipeline.fastFramesToReturn {
            let action = pipeline.frameSubmitted(sinceVblank: fast, period: period, flipPending: true, missedItsVblank: false)
            #expect(action == .hold)
            let runs = pipeline.flipCompleted(hasHeldFrame: true)
            #expect(runs == (i < FlipPipeline.fastFramesToReturn), "frame \(i)")
        }
        #expect(pipeline.depth == 1)
        // Drained: the held frame's flip completes with nothing held, and the callback runs.
        let drained = pipeline.flipCompleted(hasHeldFrame: false)
        #expect(drained)
        let next = pipeline.frameSubmitted(sinceVblank: fast, period: period, flipPending: false, missedItsVblank: false)
        #expect(next == .flip)
        // One slow frame in between resets the run.
        var other = FlipPipeline()
        _ = other.frameSubmitted(sinceVblank: period, period: period, flipPending: false, missedItsVblank: true)
        for i in 1...(2 * FlipPipeline.fastFramesToReturn - 2) {
            let time = i == FlipPipeline.fastFramesToReturn - 1 ? slow : fast
            _ = other.frameSubmitted(sinceVblank: time, period: period, flipPending: true, missedItsVblank: false)
            let runs = other.flipCompleted(hasHeldFrame: true)
            #expect(runs)
        }
        #expect(other.depth == 2)
    }

    @Test("a frame submitted exactly three quarters of a period after its vblank counts as fast; 1 ns later resets the run")
    func threeQuartersBoundary() {
        let limit = Nanoseconds(period.value - period.value / 4)
        for (time, returns) in [(limit, true), (limit + Nanoseconds(1), false)] {
            var pipeline = FlipPipeline()
            _ = pipeline.frameSubmitted(sinceVblank: period, period: period, flipPending: false, missedItsVblank: true)
            for _ in 1...FlipPipeline.fastFramesToReturn {
                _ = pipeline.frameSubmitted(sinceVblank: time, period: period, flipPending: true, missedItsVblank: false)
                _ = pipeline.flipCompleted(hasHeldFrame: true)
            }
            #expect((pipeline.depth == 1) == returns, "\(time)")
        }
    }
}
