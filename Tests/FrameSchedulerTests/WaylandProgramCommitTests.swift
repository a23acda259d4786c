import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Testing

/// A surface the program commits: a refresh's requests withdrawn when its frame is not committed,
/// and the tick that follows such a refresh (`WaylandRefreshScheduler+ProgramCommits`).
@Suite("Wayland scheduler on a program's surface")
struct WaylandProgramCommitTests {
    static let p: Int64 = 16_666_667

    /// A scheduler that has seen presentations at 10 ms + k·p for k in 0..<count (mutter-like: the
    /// callback just after each presentation), every frame committed.
    static func running(presentations count: Int) -> (script: SchedulerScript, last: Int64) {
        var script = SchedulerScript()
        _ = script.start(at: 0)
        var last: Int64 = 0
        for k in 0..<count {
            last = 10 * ms + Int64(k) * p
            script.presented(frame: UInt64(k), at: last)
            script.callback(at: last + ms)
        }
        return (script, last)
    }

    @Test("a withdrawn refresh leaves no frame callback outstanding and frees its feedback slot; the next refresh asks again")
    func withdrawn() throws {
        var (script, _) = Self.running(presentations: 6)
        let refresh = try #require(script.refreshes.last)
        #expect(refresh.requestsFrameCallback)
        let slot = try #require(refresh.feedbackSlot)
        #expect(script.scheduler.refreshIndex(ofSlot: slot) == refresh.index)
        let requests = script.scheduler.frameRequestCount
        let outstanding = script.scheduler.outstandingFeedbackCount
        script.scheduler.requestsWithdrawn(refresh)
        #expect(!script.scheduler.hasOutstandingFrameCallback)
        #expect(script.scheduler.refreshIndex(ofSlot: slot) == nil)
        #expect(script.scheduler.frameRequestCount == requests - 1)
        #expect(script.scheduler.outstandingFeedbackCount == outstanding - 1)
        // A tick then asks for a frame callback and feedback again, stamped as an estimate.
        let due = script.scheduler.uncommittedTickDue(at: t(10 * ms + 6 * Self.p + ms))
        let tick = try #require(due)
        #expect(tick.requestsFrameCallback)
        #expect(tick.feedbackSlot != nil)
        #expect(tick.event.provenance == .frameCallbackEstimate)
        #expect(tick.index == refresh.index + 1)
    }

    @Test("withdrawing a refresh that asked for nothing, or twice, changes nothing")
    func withdrawnTwice() throws {
        var (script, _) = Self.running(presentations: 4)
        let refresh = try #require(script.refreshes.last)
        script.scheduler.requestsWithdrawn(refresh)
        let requests = script.scheduler.frameRequestCount
        script.scheduler.requestsWithdrawn(refresh)
        #expect(script.scheduler.frameRequestCount == requests)
        #expect(!script.scheduler.hasOutstandingFrameCallback)
    }

    @Test("the tick is the first vblank more than half a period after the callback's start, plus the slack")
    func tickTime() {
        let (script, last) = Self.running(presentations: 8)
        let slack = WaylandRefreshScheduler.uncommittedTickSlack.value
        // Measured rhythm: presentations every p from 10 ms.
        #expect(script.scheduler.period.value == Self.p)
        // A callback just after a vblank: the next vblank.
        #expect(script.scheduler.uncommittedTickTime(callbackStart: t(last + ms)).nanoseconds - origin == last + Self.p + slack)
        // A callback just before a vblank (kwin calls back after its latch): the vblank after next.
        #expect(
            script.scheduler.uncommittedTickTime(callbackStart: t(last + Self.p - 2 * ms)).nanoseconds - origin
                == last + 2 * Self.p + slack)
        // Half a period exactly after a vblank is not more than half a period: the next vblank but one.
        #expect(
            script.scheduler.uncommittedTickTime(callbackStart: t(last + Self.p / 2)).nanoseconds - origin
                == last + Self.p + slack)
        // A start stamped before the newest presentation: periods back from it, never the newest.
        #expect(
            script.scheduler.uncommittedTickTime(callbackStart: t(last - 3 * Self.p + ms)).nanoseconds - origin
                == last - 2 * Self.p + slack)
    }

    @Test("before any presentation the tick counts from the start's timestamp")
    func tickBeforePresentations() throws {
        var script = SchedulerScript(advertised: Nanoseconds(Self.p))
        _ = script.start(at: 5 * ms)
        let start = try #require(script.refreshes.first)
        let expected = start.event.timestamp.nanoseconds + Self.p + WaylandRefreshScheduler.uncommittedTickSlack.value
        #expect(script.scheduler.uncommittedTickTime(callbackStart: t(5 * ms)).nanoseconds == expected)
    }

    @Test(
        "the tick time is after the callback's start by more than half a period and at most 1.5 periods and the slack, whatever the times")
    func tickTimeProperty() async {
        await propertyCheck(input: Gen.int64(in: 0...1_000_000_000), Gen.int(in: 1...40)) { offset, count in
            let (script, _) = Self.running(presentations: count)
            let start = t(offset)
            let tick = script.scheduler.uncommittedTickTime(callbackStart: start)
            let after = (tick - start).value - WaylandRefreshScheduler.uncommittedTickSlack.value
            let p = script.scheduler.period.value
            #expect(after > p / 2)
            #expect(after <= p + p / 2)
        }
    }

    @Test("times at the clock's ends neither trap nor go before the start")
    func tickTimeExtremes() {
        let (script, _) = Self.running(presentations: 3)
        for raw in [Int64.max, Int64.max - 1, Int64.min, Int64.min + 1, 0] {
            let tick = script.scheduler.uncommittedTickTime(callbackStart: MonotonicInstant(nanoseconds: raw))
            #expect(tick.nanoseconds >= raw || raw > Int64.max - Self.p)
        }
    }

    @Test("no tick while suspended, failed or unwanted")
    func noTick() {
        var (script, last) = Self.running(presentations: 3)
        _ = script.scheduler.suspendedChanged(true, at: t(last + 2 * ms))
        #expect(script.scheduler.uncommittedTickDue(at: t(last + Self.p)) == nil)
        _ = script.scheduler.suspendedChanged(false, at: t(last + 2 * Self.p))
        _ = script.scheduler.demandChanged(false, at: t(last + 3 * Self.p))
        #expect(script.scheduler.uncommittedTickDue(at: t(last + 4 * Self.p)) == nil)
        _ = script.scheduler.demandChanged(true, at: t(last + 5 * Self.p))
        script.scheduler.connectionFailed()
        #expect(script.scheduler.uncommittedTickDue(at: t(last + 6 * Self.p)) == nil)
    }
}
