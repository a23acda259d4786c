import DisplayLinkCore
import DisplayLinkTesting
import Testing

@MainActor
@Suite("Sequences, missed frames, provenance, presentation feedback")
struct SequenceTests {
    @Test("missed-frame count from a sequence jump")
    func missedFromSequenceJump() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(2)
        source.dropVBlanks(3)
        source.vsync(5)
        #expect(recorder.sequences == [1, 2, 6, 7])
        #expect(recorder.frames.map(\.missedFrames) == [0, 0, 3, 0])
        #expect(recorder.deltas == [0, 16_666_667, 66_666_668, 16_666_667])
        _ = link
    }

    @Test("missed frames at half rate count only the refreshes the link wanted")
    func missedAtHalfRate() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        link.preferredFramesPerSecond = 30
        source.vsync(1)  // 1
        source.dropVBlanks(4)  // 2, 3, 4, 5 happen without callbacks
        source.vsync(7)  // 6 fires (5 steps, interval 2: 3 missed), 7 no, 8 fires
        #expect(recorder.sequences == [1, 6, 8])
        #expect(recorder.frames.map(\.missedFrames) == [0, 3, 0])
    }

    @Test("without a vblank sequence the core counts refreshes from the timestamps")
    func missedFromTimestamps() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        source.reportsSequence = false
        source.scriptJitter([0, 0, 0, 0, 0, 0, 400_000])
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(2)
        source.dropVBlanks(2)
        source.vsync(5)  // vblanks 5, 6, 7 delivered; 7 is 0.4 ms late: still one step
        #expect(recorder.sequences == [1, 2, 5, 6, 7])
        #expect(recorder.frames.map(\.missedFrames) == [0, 0, 2, 0, 0])
        _ = link
    }

    @Test("provenance is passed through unchanged", arguments: TimestampProvenance.allCases)
    func provenancePassedThrough(_ provenance: TimestampProvenance) {
        let source = MockFrameSource(refreshPeriod: hz60)
        source.provenance = provenance
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync(2)
        #expect(recorder.frames.map(\.provenance) == [provenance, provenance])
        #expect(link.frame.provenance == provenance)
    }

    @Test("presentation feedback ties each drawn frame to its vblank and its predicted target, discarded ones included")
    func presentationFeedback() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let recorder = Recorder()
        var feedback: [PresentationFeedback] = []
        let link = DisplayLink.recording(source, into: recorder)
        link.presentationHandler = { feedback.append($0) }
        source.vsync(2)
        source.discardPresentations(1)
        source.vsync(2)
        #expect(recorder.frames.map(\.refreshIndex) == [0, 1, 2, 3])
        let ms = { (n: Int64) in MonotonicInstant(nanoseconds: n * 1_000_000) }
        #expect(
            feedback == [
                PresentationFeedback(refreshIndex: 0, outcome: .presented(at: ms(20), sequence: 2), targetTimestamp: ms(20)),
                PresentationFeedback(refreshIndex: 1, outcome: .discarded, targetTimestamp: ms(30)),
                PresentationFeedback(refreshIndex: 2, outcome: .presented(at: ms(40), sequence: 4), targetTimestamp: ms(40))
            ])
        // The prediction made in each callback matches what was presented.
        #expect(recorder.frames[0].targetTimestamp.nanoseconds == 20_000_000)
        #expect(recorder.frames[2].targetTimestamp.nanoseconds == 40_000_000)
    }

    @Test("feedback for a refresh too old to be remembered has no target; a target the source gives is kept")
    func feedbackTargetWindow() {
        let source = BareSource()
        let dispatcher = source.dispatcher
        let recorder = Recorder()
        var feedback: [PresentationFeedback] = []
        let link = DisplayLink.recording(source, into: recorder)
        link.presentationHandler = { feedback.append($0) }
        let period = Nanoseconds(10_000_000)
        for n in 1...40 {
            dispatcher.dispatch(
                RefreshEvent(
                    timestamp: MonotonicInstant(nanoseconds: Int64(n) * period.value),
                    refreshPeriod: period, provenance: .hardwareVBlank))
        }
        let shown = MonotonicInstant(nanoseconds: 500_000_000)
        dispatcher.deliver(PresentationFeedback(refreshIndex: 39, outcome: .presented(at: shown, sequence: nil)))
        dispatcher.deliver(PresentationFeedback(refreshIndex: 2, outcome: .presented(at: shown, sequence: nil)))
        dispatcher.deliver(PresentationFeedback(refreshIndex: 39, outcome: .discarded, targetTimestamp: shown))
        #expect(feedback.map(\.targetTimestamp) == [recorder.frames[39].targetTimestamp, nil, shown])
    }
}

/// A source that dispatches only what a test hands its dispatcher.
@MainActor
private final class BareSource: FrameSource {
    let dispatcher = RefreshDispatcher()
}
