import DisplayLinkCore
import DisplayLinkTesting
import Testing

@MainActor
@Suite("Lifetime, invalidation, several links")
struct LifecycleTests {
    @Test("a released target stops callbacks and the source stops requesting")
    func weakTarget() {
        let source = MockFrameSource(refreshPeriod: hz60)
        var calls = 0
        var recorder: Recorder? = Recorder()
        recorder!.onFrame = { _, _ in calls += 1 }
        let link = DisplayLink.recording(source, into: recorder!)
        source.vsync(2)
        #expect(calls == 2)
        #expect(source.isRequestingRefreshes)
        weak let gone = recorder
        recorder = nil
        #expect(gone == nil, "the link must not keep its target alive")
        source.vsync()
        #expect(link.isValid == false)
        #expect(source.isRequestingRefreshes == false)
        let requests = source.requestCount
        let delivered = source.deliveredCount
        source.vsync(5)
        #expect(calls == 2)
        #expect(source.requestCount == requests)
        #expect(source.deliveredCount == delivered)
    }

    @Test("deinit of the link invalidates it and stops the source")
    func deinitInvalidates() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        var link: DisplayLink? = DisplayLink.recording(source, into: recorder)
        source.vsync()
        link = nil
        _ = link
        #expect(source.isRequestingRefreshes == false)
        source.vsync(3)
        #expect(recorder.frames.count == 1)
        #expect(source.dispatcher.linkCount == 0)
    }

    @Test("invalidate is idempotent and stops requests")
    func invalidateIdempotent() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let recorder = Recorder()
        let link = DisplayLink.recording(source, into: recorder)
        source.vsync()
        link.invalidate()
        link.invalidate()
        #expect(!link.isValid)
        #expect(!source.isRequestingRefreshes)
        source.vsync(3)
        #expect(recorder.frames.count == 1)
        link.isPaused = false
        link.invalidate()
        #expect(!source.isRequestingRefreshes)
    }

    @Test("invalidate from inside a callback; other links keep ticking")
    func invalidateInsideCallback() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let first = Recorder(), second = Recorder()
        first.onFrame = { first, link in if first.frames.count == 2 { link.invalidate(); link.invalidate() } }
        let a = DisplayLink.recording(source, into: first)
        let b = DisplayLink.recording(source, into: second)
        source.vsync(4)
        #expect(first.sequences == [1, 2])
        #expect(second.sequences == [1, 2, 3, 4])
        #expect(source.isRequestingRefreshes)
        b.invalidate()
        #expect(!source.isRequestingRefreshes)
        _ = a
    }

    @Test("a link added inside a callback starts on the next refresh, with delta 0")
    func addInsideCallback() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let outer = Recorder(), inner = Recorder()
        var added: DisplayLink?
        outer.onFrame = { _, _ in
            if added == nil { added = DisplayLink.recording(source, into: inner) }
        }
        let link = DisplayLink.recording(source, into: outer)
        source.vsync(3)
        #expect(outer.sequences == [1, 2, 3])
        #expect(inner.sequences == [2, 3])
        #expect(inner.deltas == [0, 16_666_667])
        _ = link
    }

    @Test("pausing one link inside another's callback")
    func pauseInsideCallback() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let a = Recorder(), b = Recorder()
        var linkB: DisplayLink!
        a.onFrame = { a, _ in if a.frames.count == 2 { linkB.isPaused = true } }
        let linkA = DisplayLink.recording(source, into: a)
        linkB = DisplayLink.recording(source, into: b)
        source.vsync(4)
        #expect(a.sequences == [1, 2, 3, 4])
        #expect(b.sequences == [1])
        _ = linkA
    }

    @Test("two links at different rates share one source")
    func twoRates() {
        let source = MockFrameSource(refreshPeriod: hz60)
        let full = Recorder(), half = Recorder()
        let a = DisplayLink.recording(source, into: full)
        let b = DisplayLink.recording(source, into: half)
        b.preferredFramesPerSecond = 30
        source.vsync(6)
        #expect(full.sequences == [1, 2, 3, 4, 5, 6])
        #expect(half.sequences == [1, 3, 5])
        #expect(half.deltas == [0, 33_333_334, 33_333_334])
        #expect(half.frames.map(\.frameInterval) == [2, 2, 2])
        #expect(b.frameInterval == 2 && a.frameInterval == 1)
    }
}
