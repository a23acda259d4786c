import DisplayLinkCore
import DisplayLinkWaylandTesting
import Foundation
import FrameSchedulers
import Testing

/// A program that flips the CRTC with its own libdrm calls and feeds the link a fed source
/// (`Tests/CLibrary/kms-fed.c`, built against the installed C library by `make c-test-programs`):
/// its targets and deadlines are those of the library's own KMS backend for the same flips.
///
/// Nested in ``VKMSTests`` so that it runs serially with the other tests on the VM's one CRTC.
extension VKMSTests {
    @Suite(
        "a C program's own page flips fed to the link (kms-fed): targets and deadlines the KMS backend's for the same flips",
        .enabled(if: vmDisplay == "vkms" && (hasKMS || insideVM)))
    struct FedSourceKMS {
        /// `<checkout>/.build-clib/checks/kms-fed` (the checkout is shared into the VM at the same path).
        static var programPath: String {
            var root = #filePath  // <root>/Tests/DRMBackendTests/FedSourceKMSTests.swift
            for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
            return root + "/.build-clib/checks/kms-fed"
        }

        @Test(
            """
            240 frames, legacy and atomic: the program's own check passes, the CRTC is restored, and every callback's target and \
            deadline equal KMSFrameScheduler's replaying the same submissions and kernel events as the KMS backend drives it
            """,
            arguments: ["legacy", "atomic"])
        func sameAsBackend(api: String) throws {
            let program = FedSourceKMS.programPath
            try #require(
                access(program, X_OK) == 0,
                "\(program) is not built: run `make c-test-programs` in the checkout (make test does, before the VM's suites)")
            let logPath = program + "-\(api).json"
            unlink(logPath)
            let crtc = try #require(CRTCWatcher())
            let before = crtc.state
            let run = try ChildProcess.run(
                [program, "--api", api, "--frames", "240", "--log", logPath, "/dev/dri/card0"], limit: .seconds(120))
            for line in run.output.split(separator: "\n") { print("[kms-fed \(api)] \(line)") }
            for line in run.errors.split(separator: "\n") { print("[kms-fed \(api)] stderr: \(line)") }
            #expect(run.termination.status == 0, "kms-fed --api \(api): \(run.termination)")
            let after = crtc.state
            #expect(
                after?.buffer == before?.buffer && after?.modeValid == before?.modeValid,
                "CRTC not restored: \(String(describing: before)) → \(String(describing: after))")

            let log = try JSONDecoder.snakeCase.decode(FedLog.self, from: Data(contentsOf: URL(fileURLWithPath: logPath)))
            #expect(log.failure == nil)
            #expect(log.callbacks.count == 240)
            let problems = FedReplay.run(log)
            #expect(
                problems.isEmpty,
                "\(problems.count) differences from the backend's scheduler:\n\(problems.prefix(20).joined(separator: "\n"))")
            let first = log.callbacks.first?.timestampNs ?? 0
            for c in log.callbacks.prefix(10) {
                let deadline = c.deadlineNs.map { "\(Double($0 - first) / 1e6) ms" } ?? "none"
                print(
                    "[kms-fed \(api)] callback \(c.refreshIndex) (\(c.context)): timestamp \(Double(c.timestampNs - first) / 1e6) ms, "
                        + "target \(Double(c.targetNs - first) / 1e6) ms, deadline \(deadline), sequence \(c.sequence)")
            }
        }
    }
}

/// The program's `--log` (Tests/CLibrary/kms-fed.c). Every entry has `order`, its place among all.
struct FedLog: Decodable {
    struct Callback: Decodable {
        var order: Int
        /// "dispatch" (run by dl_dispatch) or "presented" (inside dl_source_presented).
        var context: String
        var nowNs: Int64
        var timestampNs: Int64
        var targetNs: Int64
        var deadlineNs: Int64?
        var deadlineProvenance: Int32
        var sequence: UInt64
        var provenance: Int32
        var refreshIndex: UInt64
    }
    struct Submission: Decodable {
        var order: Int
        var callback: Int
        var timeNs: Int64
        /// "now" or "after_pending".
        var action: String
    }
    struct Presentation: Decodable {
        var order: Int
        var timeNs: Int64
        var sequence: UInt64
    }
    var api: String
    var periodNs: Int64
    var failure: String?
    var callbacks: [Callback]
    var submissions: [Submission]
    var presentations: [Presentation]
}

extension JSONDecoder {
    static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}

/// The fed source's inputs replayed through ``KMSFrameScheduler`` on virtual time (every time
/// from the log), with the calls the library's KMS backend makes for the same kernel events
/// (`VblankPacing`, Sources/DRMBackend/VblankPacing.swift):
/// - refreshes wanted → `start(now:refreshIndex:)` → `.dispatch`: the first callback (the backend
///   passes the CRTC's current vblank when the console keeps it running; a program reports none,
///   so it is the estimate at `now`, whose target is `now` + period: the scheduler's rule for it);
/// - a frame submitted → `frameSubmitted(now:)` (`.setMode`: the first vblank event after it is
///   awaited; `.flip`, `.flipAndStartNext`: a flip; `.hold`: presented after the pending flip);
/// - the first presentation after the mode set → `vblankEvent(sequence:at:)`, every flip's →
///   `flipCompleted(sequence32:at:)` (the flip event's 32-bit counter);
/// - an outcome's `.callback` → `beginCallback(refreshIndex:now:)`;
/// - after `.flipAndStartNext`, the callback run from the event loop →
///   `currentVblank(sequence:at:eventPending:refreshIndex:now:)`: the backend reads that vblank
///   from the kernel (drmCrtcGetSequence); a fed source predicts it from the last presentation
///   reported, and the callback shows what it used, checked here to lie whole periods (and as many
///   sequence steps) after that presentation.
///
/// Returns each difference in words (empty: the program got exactly the backend's values).
enum FedReplay {
    static func run(_ log: FedLog) -> [String] {
        enum Entry {
            case callback(Int, FedLog.Callback)
            case submission(FedLog.Submission)
            case presentation(FedLog.Presentation)
            var order: Int {
                switch self {
                case .callback(_, let c): c.order
                case .submission(let s): s.order
                case .presentation(let p): p.order
                }
            }
        }
        let entries =
            (log.callbacks.enumerated().map { Entry.callback($0.offset, $0.element) } + log.submissions.map(Entry.submission)
            + log.presentations.map(Entry.presentation)).sorted { $0.order < $1.order }
        let period = Nanoseconds(log.periodNs)
        var scheduler = KMSFrameScheduler(period: period)
        var problems: [String] = []
        // What the next report answers (FedFrameSource's bookkeeping of the same).
        var awaitingFlip = false
        var callbackAsked = false
        var wantsRefreshes = true
        var lastPresentation: FedLog.Presentation?
        for entry in entries {
            switch entry {
            case .callback(let index, let c):
                let now = MonotonicInstant(nanoseconds: c.nowNs)
                let expected: RefreshEvent?
                if index == 0 {
                    guard
                        case .dispatch(let event) = scheduler.start(
                            now: MonotonicInstant(nanoseconds: c.timestampNs), refreshIndex: c.refreshIndex)
                    else {
                        problems.append("callback 0: the scheduler's start dispatches nothing")
                        return problems
                    }
                    expected = event
                } else if c.context == "presented" {
                    guard callbackAsked else {
                        problems.append("callback \(index): run inside a presentation for which the backend runs none")
                        return problems
                    }
                    expected = scheduler.beginCallback(refreshIndex: c.refreshIndex, now: now)
                } else if scheduler.wantsCurrentVblank, let last = lastPresentation {
                    let since = c.timestampNs - last.timeNs
                    let steps = since / period.value
                    if since <= 0 || since % period.value != 0 || c.sequence != last.sequence + UInt64(steps) {
                        problems.append(
                            "callback \(index): the current vblank \(c.timestampNs) (sequence \(c.sequence)) is not on the rhythm of the last presentation \(last.timeNs) (\(last.sequence))"
                        )
                    }
                    expected = scheduler.currentVblank(
                        sequence: c.sequence, at: MonotonicInstant(nanoseconds: c.timestampNs), eventPending: false,
                        refreshIndex: c.refreshIndex, now: now)
                } else {
                    problems.append("callback \(index): run from dl_dispatch where the backend runs none")
                    return problems
                }
                callbackAsked = false
                guard let expected else {
                    problems.append("callback \(index): after a late frame the backend runs no callback at this vblank")
                    return problems
                }
                let label = "callback \(index) (refresh \(c.refreshIndex), \(c.context))"
                if expected.timestamp.nanoseconds != c.timestampNs {
                    problems.append("\(label): timestamp \(c.timestampNs), the backend's \(expected.timestamp.nanoseconds)")
                }
                if expected.targetTimestamp?.nanoseconds != c.targetNs {
                    problems.append(
                        "\(label): target \(c.targetNs), the backend's \(String(describing: expected.targetTimestamp?.nanoseconds))")
                }
                if expected.deadline?.time.nanoseconds != c.deadlineNs || provenanceCode(expected.deadline) != c.deadlineProvenance {
                    problems.append(
                        "\(label): deadline \(String(describing: c.deadlineNs)) (\(c.deadlineProvenance)), the backend's "
                            + "\(String(describing: expected.deadline?.time.nanoseconds)) (\(provenanceCode(expected.deadline)))")
                }
            case .submission(let s):
                let action = scheduler.frameSubmitted(now: MonotonicInstant(nanoseconds: s.timeNs))
                let presentsNow: Bool
                switch action {
                case .setMode, .flip, .flipAndStartNext:
                    presentsNow = true
                    awaitingFlip = action != .setMode
                case .hold:
                    presentsNow = false
                }
                if presentsNow != (s.action == "now") {
                    problems.append("submission of callback \(s.callback): \(s.action), the backend's \(action)")
                }
                // The program invalidates its link in the last frame's callback.
                if s.callback == log.callbacks.count - 1 { wantsRefreshes = false }
                _ = scheduler.callbackEnded(wantsRefreshes: wantsRefreshes)
            case .presentation(let p):
                // A start-next decision not taken before this event (the callback it would run
                // was not run) is dropped, as the backend drops it.
                if scheduler.wantsCurrentVblank { scheduler.cancelCurrentVblank() }
                let time = MonotonicInstant(nanoseconds: p.timeNs)
                let outcome: KMSFrameScheduler.EventOutcome
                if awaitingFlip {
                    outcome = scheduler.flipCompleted(sequence32: UInt32(truncatingIfNeeded: p.sequence), at: time)
                    awaitingFlip = scheduler.flipping != nil
                } else {
                    outcome = scheduler.vblankEvent(sequence: p.sequence, at: time)
                }
                lastPresentation = p
                callbackAsked = wantsRefreshes && outcome.next == .callback
                if wantsRefreshes && outcome.next == .queueVblank {
                    problems.append("presentation \(p.sequence): the backend queues an idle vblank (every callback here draws)")
                }
            }
        }
        return problems
    }

    /// dl_frame.deadline_provenance's value for a deadline.
    static func provenanceCode(_ deadline: FrameDeadline?) -> Int32 {
        switch deadline?.provenance {
        case nil: 0
        case .sufficient: 1
        case .bracketed: 2
        case .prior: 3
        }
    }
}
