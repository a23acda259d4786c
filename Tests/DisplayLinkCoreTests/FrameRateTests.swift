import DisplayLinkCore
import DisplayLinkTesting
import Testing

@MainActor
@Suite("Preferred frame rates")
struct FrameRateTests {
    @Test("preferred 30 fps on 60 Hz fires on every 2nd vblank")
    func thirtyOnSixty() {
        let source = MockFrameSource(refreshRate: 60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFramesPerSecond = 30
        source.vsync(8)
        #expect(recorder.sequences == [1, 3, 5, 7])
        #expect(recorder.frames.allSatisfy { $0.duration == hz60 })
        #expect(recorder.deltas == [0, 33_333_334, 33_333_334, 33_333_334])
        #expect(link.frameInterval == 2)
    }

    @Test("preferred 60 in 60…144 on a 144 Hz source fires every 2nd vblank (72 fps)")
    func rangeOn144() {
        let source = MockFrameSource(refreshRate: 144)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFrameRateRange = FrameRateRange(minimum: 60, maximum: 144, preferred: 60)
        source.vsync(7)
        #expect(recorder.sequences == [1, 3, 5, 7])
        #expect(link.frameInterval == 2)
        #expect(FrameRateRange(minimum: 60, maximum: 144, preferred: 60).frameInterval(refreshPeriod: hz144) == 2)
    }

    @Test("preferred 30 on 144 Hz fires every 5th vblank (28.8 fps is nearest)")
    func thirtyOn144() {
        let source = MockFrameSource(refreshRate: 144)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFramesPerSecond = 30
        source.vsync(16)
        #expect(recorder.sequences == [1, 6, 11, 16])
        #expect(recorder.deltas.dropFirst().allSatisfy { $0 == 5 * 6_944_444 || $0 == 5 * 6_944_444 + 1 })
        #expect(link.frameInterval == 5)
    }

    @Test("frame interval selection table")
    func selectionTable() {
        let cases: [(FrameRateRange, Double, Int)] = [
            (.default, 60, 1),
            (.default, 144, 1),
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 60), 60, 1),
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 20), 60, 3),
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 45), 60, 1),  // 60 and 30 tie at 15: faster wins
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 120), 60, 1),
            (FrameRateRange(minimum: 0, maximum: 30), 144, 5),                      // fastest ≤ 30 is 28.8
            (FrameRateRange(minimum: 80, maximum: 100, preferred: 90), 60, 1),      // nothing in range: nearest to it
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 1), 60, 60),
        ]
        for (range, hz, expected) in cases {
            #expect(range.frameInterval(refreshPeriod: Nanoseconds(periodOfHertz: hz)) == expected, "\(range) at \(hz) Hz")
        }
    }

    @Test("frameInterval overrides the preferred rate, as in CADisplayLink")
    func frameIntervalOverride() {
        let source = MockFrameSource(refreshRate: 60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.frameInterval = 3
        source.vsync(7)
        #expect(recorder.sequences == [1, 4, 7])
        link.preferredFramesPerSecond = 0
        source.vsync(2)
        #expect(recorder.sequences == [1, 4, 7, 8, 9])
    }

    @Test("rate follows a refresh change: 30 fps is every 2nd at 60 Hz, every 5th at 144 Hz")
    func rateAfterRefreshChange() {
        let source = MockFrameSource(refreshRate: 60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFramesPerSecond = 30
        source.vsync(4)   // 1, 3
        source.refreshPeriod = hz144
        source.vsync(10)  // 5..14: fires at 8, 13
        #expect(recorder.sequences == [1, 3, 8, 13])
        #expect(recorder.frames.map(\.frameInterval) == [2, 2, 5, 5])
    }
}
