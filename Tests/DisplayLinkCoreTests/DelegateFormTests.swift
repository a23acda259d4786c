import DisplayLinkCore
import DisplayLinkTesting
import Testing

/// `DisplayUpdateReceiver` works with either of its methods alone; its defaults never loop.
@MainActor
@Suite("The delegate form")
struct DelegateFormTests {
    final class DeltaOnly: DisplayUpdateReceiver {
        var deltas: [Double] = []
        func displayWillUpdate(deltaTime: Double) { deltas.append(deltaTime) }
    }

    final class FrameOnly: DisplayUpdateReceiver {
        var frames: [DisplayFrame] = []
        func displayWillUpdate(_ frame: DisplayFrame) { frames.append(frame) }
    }

    final class Both: DisplayUpdateReceiver {
        var frameCalls = 0
        var deltaCalls = 0
        func displayWillUpdate(_ frame: DisplayFrame) { frameCalls += 1 }
        func displayWillUpdate(deltaTime: Double) { deltaCalls += 1 }
    }

    final class Neither: DisplayUpdateReceiver {}

    @Test("a receiver with only displayWillUpdate(deltaTime:) gets every delta")
    func deltaOnly() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let receiver = DeltaOnly()
        let link = DisplayLink(source: source, receiver: receiver)
        source.vsync(3)
        source.dropVBlanks(1)
        source.vsync(2)  // the dropped vblank, then a callback
        #expect(receiver.deltas == [0, 0.01, 0.01, 0.02])
        link.invalidate()
    }

    @Test("a receiver with only displayWillUpdate(_:) gets every frame, with the link's values")
    func frameOnly() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let receiver = FrameOnly()
        let link = DisplayLink(source: source, receiver: receiver)
        source.vsync(3)
        source.dropVBlanks(1)
        source.vsync(2)  // the dropped vblank, then a callback
        #expect(receiver.frames.count == 4)
        #expect(receiver.frames.map(\.delta.value) == [0, 10_000_000, 10_000_000, 20_000_000])
        #expect(receiver.frames.map(\.sequence) == [1, 2, 3, 5])
        #expect(receiver.frames.map(\.missedFrames) == [0, 0, 0, 1])
        #expect(receiver.frames.last == link.frame)
        #expect(receiver.frames.map(\.targetTimestamp.nanoseconds) == [20_000_000, 30_000_000, 40_000_000, 60_000_000])
        // The delta form's default does nothing (and does not call the frame form back).
        receiver.displayWillUpdate(deltaTime: 0.5)
        #expect(receiver.frames.count == 4)
        link.invalidate()
    }

    @Test("a receiver with both methods is called through the frame form only, once per callback")
    func both() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let receiver = Both()
        let link = DisplayLink(source: source, receiver: receiver)
        source.vsync(3)
        #expect(receiver.frameCalls == 3)
        #expect(receiver.deltaCalls == 0)
        link.invalidate()
    }

    @Test("a receiver with neither method compiles and is never told anything (no loop between the defaults)")
    func neither() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        let receiver = Neither()
        let link = DisplayLink(source: source, receiver: receiver)
        source.vsync(3)
        receiver.displayWillUpdate(deltaTime: 0.01)
        receiver.displayWillUpdate(link.frame)
        #expect(link.frame.sequence == 3)
        link.invalidate()
    }

    @Test("the receiver is held weakly, as a target is")
    func weakReceiver() {
        let source = MockFrameSource(refreshPeriod: Nanoseconds(10_000_000))
        var receiver: FrameOnly? = FrameOnly()
        let link = DisplayLink(source: source, receiver: receiver!)
        source.vsync()
        receiver = nil
        source.vsync()
        #expect(!link.isValid)
        #expect(!source.isRequestingRefreshes)
    }
}
