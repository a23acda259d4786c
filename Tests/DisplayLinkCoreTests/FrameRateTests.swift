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
            (FrameRateRange(minimum: 0, maximum: 30), 144, 5),  // fastest ≤ 30 is 28.8
            (FrameRateRange(minimum: 80, maximum: 100, preferred: 90), 60, 1),  // nothing in range: nearest to it
            (FrameRateRange(minimum: 0, maximum: .infinity, preferred: 1), 60, 60),
            // A range's maximum at the display's own rate: a mode's period is whole nanoseconds
            // (8,333,333 ns is 120.000005 Hz) and modes are 59.94 or 60.004 Hz.
            (FrameRateRange(minimum: 0, maximum: 120), 120, 1),
            (FrameRateRange(minimum: 0, maximum: 144), 144, 1),
            (FrameRateRange(minimum: 0, maximum: 75), 75, 1),
            (FrameRateRange(minimum: 0, maximum: 165), 165, 1),
            (FrameRateRange(minimum: 0, maximum: 120), 119.88, 1),
            (FrameRateRange(minimum: 30, maximum: 60, preferred: 60), 60.004, 1),
            (FrameRateRange(minimum: 30, maximum: 60, preferred: 60), 59.94, 1),
            (FrameRateRange(minimum: 30, maximum: 60, preferred: 48), 60.004, 1),
            (FrameRateRange(minimum: 0, maximum: 60), 60.004, 1),
            (FrameRateRange(minimum: 0, maximum: 30), 60.004, 2),
            // Still out: 1 % above the maximum.
            (FrameRateRange(minimum: 0, maximum: 60), 60.6, 2)
        ]
        for (range, hz, expected) in cases {
            #expect(range.frameInterval(refreshPeriod: Nanoseconds(periodOfHertz: hz)) == expected, "\(range) at \(hz) Hz")
        }
    }

    @Test("a tie stays a tie when a measured period moves by a few nanoseconds (60 and 30 around 45: 60)")
    func tieUnderJitter() {
        let range = FrameRateRange(minimum: 0, maximum: .infinity, preferred: 45)
        for nanoseconds in Int64(16_666_600)...Int64(16_666_740) {
            #expect(range.frameInterval(refreshPeriod: Nanoseconds(nanoseconds)) == 1, "\(nanoseconds) ns")
        }
    }

    @Test("preferredFramesPerSecond reads back any rate set, and 0 for an infinite or unset preference")
    func preferredReadBack() {
        let source = MockFrameSource(refreshRate: 60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFramesPerSecond = Int.max
        #expect(link.preferredFramesPerSecond == Int.max)
        link.preferredFramesPerSecond = 24
        #expect(link.preferredFramesPerSecond == 24)
        link.preferredFrameRateRange = FrameRateRange(minimum: 30, maximum: .infinity)
        #expect(link.preferredFramesPerSecond == 0)
        link.preferredFrameRateRange = FrameRateRange(minimum: 30, maximum: 60, preferred: .nan)
        #expect(link.preferredFramesPerSecond == 0)
        link.preferredFrameRateRange = FrameRateRange(minimum: 30, maximum: 60, preferred: 1e300)
        #expect(link.preferredFramesPerSecond == Int.max)
        #expect(link.frameInterval == 1)
    }

    @Test("the common frame interval of the links: the greatest common divisor of their intervals (a source may wake only that often)")
    func commonInterval() {
        let source = MockFrameSource(refreshRate: 60)
        let recorder = Recorder()
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 1)
        let a = DisplayLink.recording(source, into: recorder)
        a.frameInterval = 2
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 2)
        let b = DisplayLink.recording(source, into: recorder)
        b.frameInterval = 3
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 1)
        b.frameInterval = 4
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 2)
        a.isPaused = true
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 4)
        b.invalidate()
        #expect(source.dispatcher.commonFrameInterval(refreshPeriod: hz60) == 1)
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
        source.vsync(4)  // 1, 3
        source.refreshPeriod = hz144
        source.vsync(10)  // 5..14: fires at 8, 13
        #expect(recorder.sequences == [1, 3, 8, 13])
        #expect(recorder.frames.map(\.frameInterval) == [2, 2, 5, 5])
    }
}
