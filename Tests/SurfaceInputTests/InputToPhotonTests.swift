import DisplayLinkCore
import PropertyBased
import SurfaceInput
import Testing

@Suite("input to photon: the first frame shown after each event, on virtual time")
struct InputToPhotonTests {
    static func ms(_ value: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((value * 1_000_000).rounded())) }

    static func event(at milliseconds: Double, x: Double = 0, source: InputTime.Source = .precise) -> InputEvent {
        InputEvent(time: InputTime(time: ms(milliseconds), source: source), kind: .pointer(.moved(SurfacePoint(x: x, y: 0))))
    }

    static func frame(_ refresh: UInt64, target: Double) -> DisplayFrame {
        DisplayFrame(
            timestamp: ms(target - 16), targetTimestamp: ms(target), duration: Nanoseconds(16_000_000), delta: .zero,
            sequence: refresh, missedFrames: 0, provenance: .presentationFeedback, refreshIndex: refresh, frameInterval: 1)
    }

    static func shown(_ refresh: UInt64, at milliseconds: Double) -> PresentationFeedback {
        PresentationFeedback(refreshIndex: refresh, outcome: .presented(at: ms(milliseconds), sequence: nil))
    }

    static func discarded(_ refresh: UInt64) -> PresentationFeedback {
        PresentationFeedback(refreshIndex: refresh, outcome: .discarded)
    }

    /// A tracker and what it reported.
    final class Run {
        let photons: InputToPhoton
        var shown: [InputToPhoton.Shown] = []
        init(capacity: Int = 16) {
            photons = InputToPhoton(capacity: capacity)
            photons.onShown = { [unowned self] in shown.append($0) }
        }
    }

    @Test("an event, the frame drawn after it, that frame shown: latency = presented − the event's time")
    func oneEvent() {
        let run = Run()
        run.photons.received(Self.event(at: 100, source: .received))
        run.photons.drew(Self.frame(5, target: 116))
        #expect(run.shown.isEmpty)
        run.photons.presented(Self.shown(5, at: 116.5))
        #expect(run.shown.count == 1)
        #expect(run.shown[0].refreshIndex == 5 && run.shown[0].presented == Self.ms(116.5))
        #expect(run.shown[0].targetTimestamp == Self.ms(116))
        #expect(run.shown[0].latency == Nanoseconds(16_500_000))
        #expect(run.shown[0].timeSource == .received)
        #expect(run.photons.waitingCount == 0)
    }

    @Test("an event received after a frame was drawn is not that frame's: the next one shows it")
    func laterEventWaits() {
        let run = Run()
        run.photons.received(Self.event(at: 100, x: 1))
        run.photons.drew(Self.frame(1, target: 116))
        run.photons.received(Self.event(at: 105, x: 2))
        run.photons.presented(Self.shown(1, at: 116))
        #expect(run.shown.map(\.event.time.time) == [Self.ms(100)])
        run.photons.drew(Self.frame(2, target: 132))
        run.photons.presented(Self.shown(2, at: 132))
        #expect(run.shown.map(\.refreshIndex) == [1, 2])
        #expect(run.shown[1].latency == Nanoseconds(27_000_000))
    }

    @Test("a discarded frame passes its events on to the next frame shown")
    func discardedFrame() {
        let run = Run()
        run.photons.received(Self.event(at: 100))
        run.photons.drew(Self.frame(1, target: 116))
        run.photons.drew(Self.frame(2, target: 132))
        run.photons.presented(Self.discarded(1))
        #expect(run.shown.isEmpty && run.photons.waitingCount == 1)
        run.photons.presented(Self.shown(2, at: 132))
        #expect(run.shown.count == 1 && run.shown[0].refreshIndex == 2 && run.shown[0].latency == Nanoseconds(32_000_000))
    }

    @Test("feedback that never comes: the next frame shown reports the events of both, each once")
    func lostFeedback() {
        let run = Run()
        run.photons.received(Self.event(at: 100, x: 1))
        run.photons.drew(Self.frame(1, target: 116))
        run.photons.received(Self.event(at: 110, x: 2))
        run.photons.drew(Self.frame(2, target: 132))
        run.photons.presented(Self.shown(2, at: 132))
        #expect(run.shown.map(\.event.time.time) == [Self.ms(100), Self.ms(110)])
        #expect(run.shown.allSatisfy { $0.refreshIndex == 2 })
        run.photons.presented(Self.shown(1, at: 116))  // late: nothing left to report
        #expect(run.shown.count == 2)
    }

    @Test("an implausible time, feedback on a frame not drawn through it, and frames with nothing waiting change nothing")
    func ignored() {
        let run = Run()
        run.photons.drew(Self.frame(1, target: 116))  // nothing waits: not kept
        run.photons.received(Self.event(at: 120))
        run.photons.presented(Self.shown(1, at: 116))
        run.photons.presented(Self.shown(9, at: 116))
        #expect(run.shown.isEmpty)
        run.photons.drew(Self.frame(2, target: 132))
        var implausible = Self.shown(2, at: 132)
        implausible.isTimePlausible = false
        run.photons.presented(implausible)
        #expect(run.shown.isEmpty && run.photons.waitingCount == 1)
        run.photons.drew(Self.frame(3, target: 148))
        run.photons.presented(Self.shown(3, at: 148))
        #expect(run.shown.count == 1 && run.shown[0].refreshIndex == 3)
    }

    @Test("more events waiting than its capacity: the oldest are dropped and counted, the rest reported")
    func capacity() {
        let run = Run(capacity: 2)
        for t in [100.0, 101, 102] { run.photons.received(Self.event(at: t)) }
        #expect(run.photons.droppedCount == 1)
        run.photons.drew(Self.frame(1, target: 116))
        run.photons.presented(Self.shown(1, at: 116))
        #expect(run.shown.map(\.event.time.time) == [Self.ms(101), Self.ms(102)])
    }

    @Test("any mix of events, frames and feedback: each event reported at most once, in order, by a frame drawn after it")
    func property() async {
        await propertyCheck(count: 300, input: Gen.int64(in: 0...Int64.max)) { seed in
            var random = SeededRandom(seed: seed)
            func next(_ bound: Int64) -> Int64 { random.next(bound) }
            let run = Run(capacity: 8)
            var now = 1_000.0
            var refresh: UInt64 = 0
            var drawnAt: [UInt64: Double] = [:]  // refresh → when it was drawn
            var pending: [UInt64] = []
            for _ in 0..<200 {
                now += Double(1 + next(4_000)) / 1000
                switch next(4) {
                case 0, 1:
                    run.photons.received(Self.event(at: now))
                case 2:
                    refresh += 1
                    drawnAt[refresh] = now
                    run.photons.drew(Self.frame(refresh, target: now + 16))
                    pending.append(refresh)
                default:
                    guard !pending.isEmpty else { break }
                    let index = Int(next(Int64(min(pending.count, 2))))
                    let r = pending.remove(at: index)
                    run.photons.presented(next(5) == 0 ? Self.discarded(r) : Self.shown(r, at: now))
                }
            }
            let times = run.shown.map(\.event.time.time)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "reported once each, in order")
            for shown in run.shown {
                #expect(shown.latency == shown.presented - shown.event.time.time)
                #expect(drawnAt[shown.refreshIndex].map { Self.ms($0) >= shown.event.time.time } == true, "drawn after the event")
            }
            #expect(run.shown.count + run.photons.waitingCount + run.photons.droppedCount <= 200)
        }
    }
}
