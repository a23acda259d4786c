import DisplayLinkCore
import DisplayLinkTesting
import Testing

@MainActor
@Suite("Frames as an AsyncSequence")
struct AsyncFramesTests {
    @Test("the async sequence delivers the same frames as the callback")
    func sameFramesAsCallback() async {
        let source = MockFrameSource(refreshPeriod: hz60)
        source.scriptJitter([100, -200, 300])
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        let stream = link.frames(bufferingPolicy: .unbounded)
        source.vsync(3)
        source.dropVBlanks(1)
        source.vsync(3)
        link.invalidate()  // finishes the stream
        var streamed: [DisplayFrame] = []
        for await frame in stream { streamed.append(frame) }
        #expect(recorder.frames.count == 5)
        #expect(streamed == recorder.frames)
    }

    @Test("a target-less stream link runs while iterated and stops the source when iteration ends")
    func standaloneStream() async {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        // The stream lives only inside this function: returning ends it.
        func takeFour() async -> [Int64] {
            let stream = DisplayLink.frames(from: source, bufferingPolicy: .unbounded)
            #expect(source.isRequestingRefreshes)
            source.vsync(4)
            var got: [Int64] = []
            for await frame in stream {
                got.append(frame.delta.value)
                if got.count == 4 { break }
            }
            return got
        }
        let got = await takeFour()
        #expect(got == [0, 10_000_000, 10_000_000, 10_000_000])
        // The stream's end invalidates the link on the main actor; let that job run.
        for _ in 0..<1000 where source.isRequestingRefreshes { await Task.yield() }
        #expect(!source.isRequestingRefreshes)
        let delivered = source.deliveredCount
        source.vsync(3)
        #expect(source.deliveredCount == delivered)
    }
}
