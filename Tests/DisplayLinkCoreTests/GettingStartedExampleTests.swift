import DisplayLinkCore
import DisplayLinkTesting
import Testing

/// The examples of the DocC article (Sources/DisplayLinkCore/DisplayLinkCore.docc/GettingStarted.md)
/// on the mock source, so what the article says stays true.
@MainActor
@Suite("The getting-started article's examples")
struct GettingStartedExampleTests {
    final class Ball {
        var y = 0.0, velocity = 0.0
        func step(_ dt: Double) {
            y += velocity * dt + 0.5 * 980 * dt * dt
            velocity += 980 * dt
        }
    }

    @Test("a link on the mock source: one second of refreshes drops the ball 490 points")
    func mockLink() {
        let source = MockFrameSource(refreshRate: 60)
        let ball = Ball()
        let link = DisplayLink(source: source, target: ball) { ball, link in ball.step(link.deltaTime) }
        source.vsync(61)
        #expect(abs(ball.y - 490) < 1e-4)  // 60 periods of 16,666,667 ns: 1.00000002 s
        link.invalidate()
    }

    @Test("missed refreshes show in the delta")
    func missedRefreshesShowInTheDelta() {
        let source = MockFrameSource(refreshRate: 60)
        let ball = Ball()
        let link = DisplayLink(source: source, target: ball) { ball, link in ball.step(link.deltaTime) }
        source.vsync(3)
        source.dropVBlanks(2)
        source.vsync(3)
        #expect(link.frame.missedFrames == 2)
        #expect(link.frame.delta == Nanoseconds(periodOfHertz: 60) * 3)
        link.invalidate()
    }

    @Test("pause and resume: no callbacks while paused, then a zero delta")
    func pauseResume() {
        let source = MockFrameSource(refreshRate: 60)
        let ball = Ball()
        var deltas: [Double] = []
        let link = DisplayLink(source: source, target: ball) { _, link in deltas.append(link.deltaTime) }
        source.vsync(2)
        link.isPaused = true
        source.vsync(5)
        link.isPaused = false
        source.vsync()
        #expect(deltas.count == 3)
        #expect(deltas.last == 0)
        link.invalidate()
    }

    @Test("preferred rates: 30 of 60 Hz is every 2nd refresh; 48 within 30...60 of 144 Hz is every 3rd")
    func preferredRate() {
        let sixty = MockFrameSource(refreshRate: 60)
        let ball = Ball()
        let a = DisplayLink(source: sixty, target: ball) { _, _ in }
        a.preferredFramesPerSecond = 30
        sixty.vsync(2)
        #expect(a.frameInterval == 2)
        let fast = MockFrameSource(refreshRate: 144)
        let b = DisplayLink(source: fast, target: ball) { _, _ in }
        b.preferredFrameRateRange = FrameRateRange(minimum: 30, maximum: 60, preferred: 48)
        fast.vsync(3)
        #expect(b.frameInterval == 3)
        a.invalidate()
        b.invalidate()
    }

    @Test("the frames as an AsyncSequence; leaving the loop ends the link")
    func asyncFrames() async {
        let source = MockFrameSource(refreshRate: 60)
        var deltas: [Int64] = []
        do {
            let stream = DisplayLink.frames(from: source)
            #expect(source.isRequestingRefreshes)
            source.vsync(3)
            for await frame in stream {
                deltas.append(frame.delta.value)
                if deltas.count == 3 { break }
            }
        }
        #expect(deltas == [0, 16_666_667, 16_666_667])
        for _ in 0..<1000 where source.isRequestingRefreshes { await Task.yield() }
        #expect(!source.isRequestingRefreshes)
    }
}
