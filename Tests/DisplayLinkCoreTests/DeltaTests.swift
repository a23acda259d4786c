import DisplayLinkCore
import DisplayLinkTesting
import Testing

@MainActor
@Suite("Deltas and timestamps")
struct DeltaTests {
    @Test("first callback after start has delta exactly 0")
    func firstDeltaIsZero() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync()
        #expect(recorder.frames.count == 1)
        #expect(recorder.frames[0].delta == .zero)
        #expect(recorder.frames[0].timestamp.nanoseconds == 16_666_667)
        #expect(link.deltaTime == 0)
    }

    @Test("delta equals the difference of consecutive timestamps, jitter included")
    func deltaIsTimestampDifference() {
        let source = MockFrameSource(refreshPeriod: hz60)
        source.scriptJitter([0, 120_000, -80_000, 0, 333])
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(5)
        #expect(recorder.timestamps == [16_666_667, 33_453_334, 49_920_001, 66_666_668, 83_333_668])
        #expect(recorder.deltas == [0, 16_786_667, 16_466_667, 16_746_667, 16_667_000])
        for i in 1..<recorder.frames.count {
            #expect(recorder.frames[i].delta == recorder.frames[i].timestamp - recorder.frames[i - 1].timestamp)
        }
        #expect(link.duration == 0.016666667)
        #expect(recorder.frames.map(\.targetTimestamp.nanoseconds) == recorder.timestamps.map { $0 + 16_666_667 })
    }

    @Test("resume after pause gives delta exactly 0, and pause stops callbacks")
    func resumeDeltaIsZero() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(3)
        link.isPaused = true
        #expect(source.isRequestingRefreshes == false)
        source.vsync(4)
        #expect(recorder.frames.count == 3)
        link.isPaused = false
        #expect(source.isRequestingRefreshes == true)
        source.vsync(2)
        #expect(recorder.sequences == [1, 2, 3, 8, 9])
        #expect(recorder.deltas == [0, 16_666_667, 16_666_667, 0, 16_666_667])
        #expect(recorder.frames[3].missedFrames == 0)
    }

    @Test("the delegate form receives the same delta")
    func delegateForm() {
        final class Receiver: DisplayUpdateReceiver {
            var deltas: [Double] = []
            func displayWillUpdate(deltaTime: Double) { deltas.append(deltaTime) }
        }
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let receiver = Receiver()
        let link = DisplayLink(source: source, receiver: receiver)
        source.vsync(3)
        #expect(receiver.deltas == [0, 0.01, 0.01])
        _ = link
    }

    @Test("a stall (occlusion) resumes with zero delta by default, or the real gap when asked")
    func stallPolicy() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let zero = Recorder(), gap = Recorder()
        let a = DisplayLink.recording(source, into: zero)
        let b = DisplayLink.recording(source, into: gap)
        b.stallPolicy = .realGap
        source.vsync(2)
        source.occlude()
        source.vsync(5)
        #expect(zero.frames.count == 2)
        source.reveal()
        source.vsync(2)
        #expect(zero.deltas == [0, 10_000_000, 0, 10_000_000])
        #expect(gap.deltas == [0, 10_000_000, 60_000_000, 10_000_000])
        #expect(zero.frames.map(\.missedFrames) == [0, 0, 0, 0])
        #expect(gap.sequences == [1, 2, 8, 9])
        _ = (a, b)
    }

    @Test("refresh-rate change updates duration and the deltas follow")
    func refreshChange() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(2)
        source.refreshPeriod = hz144
        source.vsync(2)
        #expect(recorder.frames.map(\.duration) == [hz60, hz60, hz144, hz144])
        #expect(recorder.deltas == [0, 16_666_667, 6_944_444, 6_944_444])
        #expect(link.duration == 0.006944444)
        #expect(recorder.frames.map(\.missedFrames) == [0, 0, 0, 0])
    }

    @Test("advance(by:) delivers every vblank within the span, in order")
    func advanceBy() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.advance(by: Nanoseconds(35_000_000))
        #expect(recorder.timestamps == [10_000_000, 20_000_000, 30_000_000])
        #expect(source.now.nanoseconds == 35_000_000)
        source.advance(by: Nanoseconds(5_000_000))
        #expect(recorder.timestamps.last == 40_000_000)
        _ = link
    }

    @Test("the same script gives the same callbacks, bit for bit")
    func determinism() {
        func run() -> [DisplayFrame] {
            let source = MockFrameSource(refreshPeriod: hz60)
            source.setRandomJitter(amplitude: Nanoseconds(500_000), seed: 42)
            let recorder = Recorder()
            let link = DisplayLink.recording(source, into: recorder)
            source.vsync(20)
            source.dropVBlanks(2)
            source.vsync(10)
            source.refreshPeriod = hz144
            source.vsync(10)
            _ = link
            return recorder.frames
        }
        let first = run(), second = run()
        #expect(first.count == 38)
        #expect(first == second)
        #expect(Set(first.dropFirst().map(\.delta.value)).count > 5, "jitter must vary the deltas")
    }
}
