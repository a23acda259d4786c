import DisplayLinkCore
import FrameSchedulers
import PropertyBased
import Synchronization
import Testing

/// A random kernel for ``KMSFrameScheduler``: the shell's call order (a callback only when an
/// outcome asks for one, a submit only inside a callback), with flip and vblank events that come
/// when the kernel likes, including ones nothing asked for, sequences that step, go back, wrap or
/// jump, and times at 0, at either end of 64 bits or before the last. Each operation is a number
/// whose last digit says what happens and whose other digits are its parameter (0 … 999).
struct RandomKernel {
    static let period: Int64 = 16_666_667
    var scheduler = KMSFrameScheduler(period: Nanoseconds(RandomKernel.period))
    var now: Int64 = 0
    var sequence: UInt64 = 100
    var nextIndex: UInt64 = 0
    var wanted = true
    var events: [RefreshEvent] = []
    /// Kernel events handed to the scheduler.
    var kernelEvents = 0

    mutating func apply(_ op: Int) {
        let kind = op % 10
        let param = Int64(op / 10)
        switch kind {
        case 0, 1, 2:
            // A page flip completes at the next vblank or a few later (steps of 0 … 2).
            now += Self.period * (1 + param % 2)
            sequence &+= UInt64(param % 3)
            kernelEvent(scheduler.flipCompleted(sequence32: UInt32(truncatingIfNeeded: sequence), at: t(now)), param)
        case 3:
            // A queued vblank event arrives.
            now += Self.period
            sequence &+= 1
            kernelEvent(scheduler.vblankEvent(sequence: sequence, at: t(now)), param)
        case 4:
            // A flip event with a wild sequence and time.
            let (sequence32, time) = wild(param)
            kernelEvent(scheduler.flipCompleted(sequence32: UInt32(truncatingIfNeeded: sequence32), at: time), param)
        case 5:
            let (wildSequence, time) = wild(param)
            kernelEvent(scheduler.vblankEvent(sequence: wildSequence, at: time), param)
        case 6:
            // Demand changes: a start (with the CRTC's current vblank, maybe wild) or a stop of demand.
            wanted = param % 3 != 0
            guard wanted else { return }
            let current: (sequence: UInt64, time: MonotonicInstant)? =
                param % 2 == 0 ? nil : param % 4 == 1 ? (sequence, t(now)) : wild(param)
            switch scheduler.start(now: t(now), refreshIndex: nextIndex, currentVblank: current) {
            case .dispatch(let event): runCallback(first: event, param)
            case .queueVblank, .none: break
            }
        case 7:
            // The kernel's current vblank after a flip-and-start-next, plain or wild.
            let (wildSequence, time) = param % 2 == 0 ? (sequence &+ 1, t(now + Self.period / 2)) : wild(param)
            if let event = scheduler.currentVblank(
                sequence: wildSequence, at: time, eventPending: param % 5 == 0, refreshIndex: nextIndex, now: t(now))
            {
                kernelEvents += 1
                runCallback(first: event, param)
            }
        case 8:
            // Another VT had the display: resumed (rarely the display fails for good instead).
            if param == 999 { scheduler.stop() } else { scheduler.sessionResumed() }
        default:
            // Time passes (0 … 100 ms).
            now += param * 100_000
        }
    }

    /// A sequence and time a broken driver might send.
    private func wild(_ param: Int64) -> (UInt64, MonotonicInstant) {
        let sequences: [UInt64] = [0, sequence &- 1, sequence &- 1000, .max, UInt64(UInt32.max), sequence &+ 1_000_000, sequence]
        let times: [Int64] = [.max, .min, 0, -origin, now - 3_600_000 * ms, now + 3_600_000 * ms, now - Self.period, now]
        return (sequences[Int(param) % sequences.count], MonotonicInstant(nanoseconds: times[Int(param / 7) % times.count]))
    }

    private mutating func kernelEvent(_ outcome: KMSFrameScheduler.EventOutcome, _ param: Int64) {
        kernelEvents += 1
        switch outcome.next {
        case .callback where wanted: runCallback(first: scheduler.beginCallback(refreshIndex: nextIndex, now: t(now)), param)
        case .queueVblank where wanted: scheduler.idleVblankQueued()
        default: break
        }
    }

    /// Runs a callback for `event`: it submits a frame (drawn in 0 … 30 ms) or draws nothing.
    private mutating func runCallback(first event: RefreshEvent, _ param: Int64) {
        events.append(event)
        nextIndex &+= 1
        if param % 4 != 0 {
            now += (param % 31) * ms
            _ = scheduler.frameSubmitted(now: t(now))
        }
        if case .queueVblank = scheduler.callbackEnded(wantsRefreshes: wanted) { scheduler.idleVblankQueued() }
    }
}

@Suite("KMS scheduler fuzzed: a random kernel, adversarial values")
struct KMSSchedulerFuzzTests {
    static let operations = Gen.int(in: 0...9999).array(of: 0...300)

    @Test(
        """
        under any order of flips, vblank events, current-vblank reads, starts, stops and resumes, with wild sequences and times: \
        timestamps never decrease, targets lie after timestamps and never go back
        """)
    func invariantsHold() async {
        let count = OperationCount()
        await propertyCheck(count: 700, input: Self.operations) { ops in
            var kernel = RandomKernel()
            for op in ops { kernel.apply(op) }
            count.operations.add(ops.count, ordering: .relaxed)
            count.kernelEvents.add(kernel.kernelEvents, ordering: .relaxed)
            let events = kernel.events
            for (a, b) in zip(events, events.dropFirst()) {
                #expect(b.timestamp >= a.timestamp, "timestamp went back: \(a.timestamp.nanoseconds) → \(b.timestamp.nanoseconds)")
            }
            #expect(events.allSatisfy { ($0.targetTimestamp ?? .zero) > $0.timestamp })
        }
        print(
            "KMS scheduler fuzzed: \(count.operations.load(ordering: .relaxed)) operations, \(count.kernelEvents.load(ordering: .relaxed)) kernel events"
        )
        // At least 100,000 operations, a third of them kernel events (a failing run prints its seed).
        #expect(count.operations.load(ordering: .relaxed) >= 100_000)
        #expect(count.kernelEvents.load(ordering: .relaxed) >= count.operations.load(ordering: .relaxed) / 3)
    }

    @Test("the same runs through a real RefreshDispatcher and DisplayLink: frames keep the invariants, targets never go back")
    @MainActor
    func framesKeepInvariants() async {
        await propertyCheck(count: 150, input: Self.operations) { ops in
            var kernel = RandomKernel()
            for op in ops { kernel.apply(op) }
            for policy in [DisplayLink.StallPolicy.zeroDelta, .realGap] {
                let core = CoreRun(stallPolicy: policy)
                core.run(kernel.events)
                #expect(core.violations.isEmpty, "\(policy): \(core.violations.prefix(5))")
                for (a, b) in zip(core.frames, core.frames.dropFirst()) {
                    #expect(b.targetTimestamp >= a.targetTimestamp, "\(policy): target went back")
                }
            }
        }
    }
}

/// Operations run, across the property's runs.
private final class OperationCount: Sendable {
    let operations = Atomic<Int>(0)
    let kernelEvents = Atomic<Int>(0)
}
