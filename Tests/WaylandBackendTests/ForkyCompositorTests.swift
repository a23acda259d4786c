import Dispatch
import DisplayLinkCore
import GLESRenderer
import Glibc
import Synchronization
import Testing
import DisplayLinkWaylandTesting
// internal: the window's wp_fifo_v1 and wl_surface, for a naive FIFO client's commits.
@testable import WaylandBackend
import CWayland

/// Today's desktop compositors, from the cached Debian forky root (`Scripts/os-root forky build`).
enum ForkyCompositor: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case weston16, mutter50, kwin67

    var testDescription: String {
        switch self {
        case .weston16: "weston 16"
        case .mutter50: "mutter 50"
        case .kwin67: "kwin 6.7"
        }
    }

    func start() async throws -> any PrivateCompositor {
        switch self {
        case .weston16: try await HeadlessRootCompositor.start(.weston16)
        case .mutter50: try await HeadlessMutter.mutter50()
        case .kwin67: try await HeadlessRootCompositor.start(.kwin67)
        }
    }

    /// The timing protocols it offers (``WaylandConnection/timingProtocols``, in any order).
    var timingProtocols: Set<String> {
        switch self {
        case .weston16: ["wp_presentation 2", "wp_commit_timing_v1 1", "wp_fifo_v1 1"]
        case .mutter50: ["xdg_wm_base 6", "wp_presentation 2", "wp_commit_timing_v1 1", "wp_fifo_v1 1"]
        case .kwin67: ["xdg_wm_base 6", "wp_presentation 2", "wp_fifo_v1 1"]
        }
    }

    /// The source's configuration here: the library's default, except on weston 16, whose headless
    /// backend presents without `VSYNC` but applies every timed commit (300 of 300 measured, see
    /// Docs/MEASURED.md), so the `VSYNC` gate is bypassed there to check its timed commits. mutter 50
    /// keeps the gate: its virtual monitor's feedback lacks `VSYNC`, so its commits are untimed.
    var configuration: WaylandFrameSource.Configuration {
        self == .weston16 ? .init(requiresVsyncForTimedCommits: false) : .init()
    }

    /// Whether the source times its commits here.
    var expectsTimedCommits: Bool { self == .weston16 }
}

/// The timing protocols on today's compositors: weston 16, mutter 50 and kwin 6.7, chrooted in the
/// Debian forky root (``HeadlessRootCompositor``, ``HeadlessMutter/mutter50(monitors:)``); the same
/// checks as on mutter 48 (MutterTimingTests) and weston 10 (WaylandPacingTests), asserted so that
/// they hold at any machine speed: no rates, no shares of frames, no wall-clock bounds. Waits are
/// event-driven (a condition, a compositor round trip); their limits only guard against hangs.
@MainActor
@Suite("Wayland timing protocols under weston 16, mutter 50 and kwin 6.7 (Debian forky root)", .serialized)
struct ForkyCompositorTests {
    @Test(
        """
        the timing protocols each offers, all bound; the source uses them (commit timing on mutter 50 not used: its feedback lacks \
        VSYNC)
        """,
        arguments: ForkyCompositor.allCases)
    func protocolsBound(_ kind: ForkyCompositor) async throws {
        let compositor = try await kind.start()
        defer { compositor.stop() }
        let client = try PacedClient(on: compositor, configuration: kind.configuration)
        let connection = client.connection
        #expect(Set(connection.timingProtocols) == kind.timingProtocols, "\(connection.timingProtocols)")
        #expect(connection.timingProtocols.count == kind.timingProtocols.count, "\(connection.timingProtocols)")
        #expect(connection.hasPresentationTime && connection.hasFifo)
        #expect(connection.hasCommitTiming == kind.timingProtocols.contains("wp_commit_timing_v1 1"))
        let inUse = kind.expectsTimedCommits ? kind.timingProtocols : kind.timingProtocols.filter { !$0.hasPrefix("wp_commit_timing") }
        #expect(Set(client.source.timingProtocolsInUse) == inUse)
        #expect(client.source.isTimingCommits == kind.expectsTimedCommits)
        let outputs = connection.outputs.map { "\($0.name ?? "?") \($0.width)×\($0.height) \($0.refreshMilliHertz) mHz" }
        print(
            """
            [\(kind.testDescription)] process \(connection.compositorName ?? "?"); \(connection.timingProtocols.joined(separator: ", ")); \
            xdg_wm_base \(connection.wmBaseVersion); presentation clock \(connection.presentationClock?.description ?? "none"); outputs \
            \(outputs)
            """)
    }

    @Test(
        """
        frames are presented; every delivered timestamp is a presentation time the compositor reported, or marked an estimate; deltas are \
        timestamp differences; FIFO barriers set; no timed frame presented before its commit target
        """, arguments: ForkyCompositor.allCases)
    func timestampsAreReportedPresentations(_ kind: ForkyCompositor) async throws {
        let compositor = try await kind.start()
        defer { compositor.stop() }
        let client = try PacedClient(on: compositor, configuration: kind.configuration)
        let done = await client.run(within: .seconds(120)) {
            client.presentedTimes.count >= 30 || client.swapError != nil || client.connection.error != nil
        }
        #expect(
            done,
            """
            30 presentations did not arrive (\(client.frames.count) callbacks, \(client.presentedTimes.count) presented); \
            log:\n\(compositor.readLog())
            """)
        // Every frame drawn gets its outcome.
        client.link?.isPaused = true
        await client.drain()
        client.link?.invalidate()
        #expect(client.swapError == nil)
        #expect(client.connection.error == nil)

        let frames = client.frames
        let presented = client.presentedTimes
        let presentedSet = Set(presented)
        #expect(frames.map(\.refreshIndex) == client.feedback.map(\.refreshIndex).sorted(), "frames drawn and outcomes differ")
        client.expectStampedByPresentations()
        client.expectTimelineInOrder()
        // Presentation times only move forward, and each carries the compositor's flags.
        for (a, b) in zip(presented, presented.dropFirst()) { #expect(b >= a) }
        let presentedFeedback = client.presentedFeedback
        #expect(presentedFeedback.allSatisfy { $0.flags != nil })
        // Timed commits: none presented before its commit target. Untimed: no frame asked for one.
        if kind.expectsTimedCommits {
            #expect(client.source.timedCommitCount > 0)
            _ = client.expectCommitTargetsKept()
        } else {
            #expect(client.feedback.allSatisfy { $0.commitTarget == nil })
            #expect(client.source.timedCommitCount == 0)
        }
        // FIFO barriers from the first presentation on.
        #expect(client.source.fifoBarrierCount > 0)

        let sequences = client.feedback.compactMap { feedback -> UInt64? in
            if case .presented(_, let sequence) = feedback.outcome { return sequence }
            return nil
        }
        let flags = Set(presentedFeedback.compactMap { $0.flags?.rawValue })
        let gaps = zip(presented, presented.dropFirst()).map { Double($1 - $0) / 1e6 }.sorted()
        let median = gaps.isEmpty ? 0 : gaps[gaps.count / 2]
        print(
            """
            [\(kind.testDescription)] \(frames.count) callbacks, \(presentedSet.count) presented, \
            \(client.feedback.count - presentedFeedback.count) discarded; estimates at refreshes \
            \(frames.filter { $0.provenance != .presentationFeedback }.map(\.refreshIndex)); sequences \
            \(sequences.prefix(3))…\(sequences.suffix(3)); flags \(flags.sorted()); median gap between presentations \(median) ms; \
            duration \(frames.last?.duration.description ?? "-"); depth \(client.source.scheduler.learnedDepth.map(String.init) ?? "-"); \
            FIFO barriers \(client.source.fifoBarrierCount); timed commits \(client.source.timedCommitCount), fell back \
            \(client.source.isCommitTimingFallenBack)
            """)
    }

    @Test(
        """
        weston 16 with timed commits kept: each frame drawn once a presentation is known carries a commit target, and none is presented \
        before it
        """)
    func westonHonoursCommitTargets() async throws {
        let weston = try await HeadlessRootCompositor.start(.weston16)
        defer { weston.stop() }
        // No fallback: weston 16 presents a timed commit at its first refresh at or after the
        // commit's target (here the frame's target, half a period later), so it never holds one;
        // turned off so that every frame stays timed and is checked.
        let client = try PacedClient(
            on: weston,
            configuration: .init(allowsCommitTiming: true, fallsBackFromHeldCommits: false, requiresVsyncForTimedCommits: false))
        #expect(client.source.isTimingCommits)
        client.start()
        // How many callbacks there had been when the first presentation arrived: every frame
        // drawn from then on knows a presentation, so its commit is timed.
        var knownFromFrame: Int?
        client.link?.presentationHandler = { feedback in
            client.feedback.append(feedback)
            if knownFromFrame == nil, case .presented = feedback.outcome { knownFromFrame = client.frames.count }
        }
        let done = await eventually(within: .seconds(120)) {
            client.timedPresentedCount >= 30 || client.swapError != nil || client.connection.error != nil
        }
        #expect(
            done,
            """
            30 timed frames were not presented (\(client.source.timedCommitCount) timed commits, \(client.presentedTimes.count) \
            presented); weston log:\n\(weston.readLog())
            """)
        client.link?.invalidate()
        #expect(client.swapError == nil)
        #expect(client.connection.error == nil)
        var checked = 0
        var earliest = Int64.max
        #expect(knownFromFrame != nil)
        let timedFrom = knownFromFrame.flatMap { client.frames.indices.contains($0) ? client.frames[$0].refreshIndex : nil } ?? .max
        for feedback in client.feedback {
            if feedback.refreshIndex >= timedFrom {
                #expect(feedback.commitTarget != nil, "frame \(feedback.refreshIndex) has no commit target")
            }
            guard case .presented(let at, _) = feedback.outcome, let target = feedback.commitTarget,
                let frame = client.frames.first(where: { $0.refreshIndex == feedback.refreshIndex })
            else { continue }
            #expect(
                at >= target,
                """
                frame \(feedback.refreshIndex) presented \(target.nanoseconds - at.nanoseconds) ns before its commit target
                """)
            // The commit target is half a period before the frame's target.
            #expect(target < frame.targetTimestamp)
            earliest = min(earliest, at.nanoseconds - target.nanoseconds)
            checked += 1
        }
        #expect(checked > 0)
        #expect(client.source.releaseCommitCount == 0)
        print(
            """
            [weston 16] timed frames presented and checked: \(checked) of \(client.source.timedCommitCount) timed commits; smallest \
            presented − target \(Double(earliest) / 1e6) ms
            """)
    }

    /// The hidden-surface cases: each compositor with untimed commits, and weston 16 also with its
    /// commit timing on (the library's default there).
    nonisolated static let hiddenCases: [(ForkyCompositor, Bool)] = [
        (.weston16, false), (.weston16, true), (.mutter50, false), (.kwin67, false)
    ]

    /// What each compositor does with a minimised window that sets FIFO barriers (found here; each
    /// case prints what it saw):
    /// - weston 16 (xdg_wm_base 5, so no `suspended`): frame callbacks stop at once and the frame
    ///   in flight is discarded; the source stalls, and its fallback ticks draw and swap (no
    ///   barrier). Commits that wait for a barrier are applied at once while hidden (the protocol
    ///   lets a compositor ignore the constraint then): swaps a round trip apart, each with a
    ///   barrier, get their buffers back in time.
    /// - mutter 50: a few more frame callbacks (the minimise animation), each commit with a
    ///   barrier, all presented; then callbacks stop, the source stalls and ticks, and about 3 s
    ///   after the minimise mutter sends `suspended` (the source then goes quiet). Commits with a
    ///   barrier are applied at once, as on weston.
    /// - kwin 6.7: `suspended` at once, no callback after it. Commits that wait for a barrier are
    ///   still applied while hidden, but paced as if the surface were shown, about one a refresh
    ///   (swaps 30 ms apart, each with a barrier, get their buffers back in time; 10 ms apart they
    ///   do not), so a client that commits with a barrier faster than that waits for its buffers
    ///   as on a visible window. The source does not (while suspended it commits nothing, and it
    ///   sets barriers only on compositor-paced refreshes); a client that swaps a round trip apart
    ///   with a barrier each runs out of buffers by its fourth swap, and then Mesa 22.3's
    ///   wl_shm path (Debian 12's llvmpipe) dereferences a null back buffer (SIGSEGV) instead of
    ///   waiting for a release, as newer Mesa does. So the naive client here only commits (no new
    ///   buffers): queued behind a barrier or not, its commits block nothing and do not stop it
    ///   from leaving.
    @Test(
        """
        a minimised window with FIFO barriers: nothing blocks the client (its refreshes and its own draws go on, commits with a barrier \
        each included; it keeps dispatching, and it can destroy its window and disconnect); what the compositor does is reported
        """, arguments: hiddenCases)
    func fifoOnHiddenSurface(_ kind: ForkyCompositor, commitTiming: Bool) async throws {
        let compositor = try await kind.start()
        defer { compositor.stop() }
        let name = "\(kind.testDescription)\(commitTiming ? ", commit timing" : "")"
        // Fallback ticks while stalled: the link keeps drawing and swapping while hidden, as a
        // program that asks for them does.
        var client: PacedClient? = try PacedClient(
            on: compositor,
            configuration: .init(
                stallTimeout: Nanoseconds(200_000_000), fallbackTickInterval: Nanoseconds(50_000_000),
                allowsCommitTiming: commitTiming, requiresVsyncForTimedCommits: !commitTiming))
        guard let paced = client else { return }
        var suspensions: [Bool] = []
        paced.window.onSuspendedChange = { suspensions.append($0) }
        let running = await paced.run(within: .seconds(120), stallPolicy: .zeroDelta) {
            paced.presentedTimes.count >= 10 || paced.swapError != nil || paced.connection.error != nil
        }
        #expect(running, "the window was never presented; log:\n\(compositor.readLog())")
        guard running, paced.swapError == nil, paced.connection.error == nil else { return }
        #expect(paced.source.fifoBarrierCount > 0)

        // From here on, a main thread blocked in libwayland or EGL (waiting for a buffer release
        // or an answer that never comes) would hang the test: the guard then kills the compositor,
        // which makes every such wait return with an error, so the test fails instead.
        let hangGuard = CompositorHangGuard(group: compositor.pid, after: .seconds(300))
        let hiddenAt = paced.frames.count
        let barriersBefore = paced.source.fifoBarrierCount
        let feedbackBefore = paced.feedback.count
        paced.window.minimize()
        #expect(await roundtrip(paced.connection))

        // The link's refreshes go on (compositor-paced, fallback ticks, or none once suspended),
        // each drawn and swapped.
        let progressed = await eventually(within: .seconds(120)) {
            paced.frames.count >= hiddenAt + 20 || paced.source.isSuspended
                || paced.swapError != nil || paced.connection.error != nil
        }
        #expect(
            progressed,
            """
            the link stopped while hidden, neither suspended nor ticking (\(paced.frames.count - hiddenAt) refreshes since); \
            log:\n\(compositor.readLog())
            """)
        let linkFrames = Array(paced.frames[hiddenAt...])
        let pacedAfter = linkFrames.filter { $0.provenance != .timerFallback }.count
        let barriersAfter = paced.source.fifoBarrierCount - barriersBefore
        // Hidden or not, timestamps and sequences only move forward, and targets lie after them.
        for (a, b) in zip(paced.frames, paced.frames.dropFirst()) {
            #expect(b.timestamp > a.timestamp && b.sequence > a.sequence && b.targetTimestamp > b.timestamp, "frame \(b.refreshIndex)")
        }

        // With xdg_wm_base 6 the compositor says the window is suspended (kwin 6.7 at once,
        // mutter 50 after its hidden timeout): then the source is quiet, no requests, no timer.
        if paced.connection.wmBaseVersion >= 6 {
            let suspended = await eventually(within: .seconds(60)) {
                paced.source.isSuspended || paced.swapError != nil || paced.connection.error != nil
            }
            #expect(suspended, "the minimised window was never suspended; log:\n\(compositor.readLog())")
            #expect(!paced.source.isWatchdogArmed)
            #expect(await roundtrip(paced.connection))
            let frames = paced.frames.count
            let requests = paced.source.frameRequestCount
            for _ in 0..<3 { #expect(await roundtrip(paced.connection)) }
            #expect(paced.frames.count == frames && paced.source.frameRequestCount == requests)
        }
        let ticksBeforeSuspension = paced.frames.count - hiddenAt - pacedAfter

        // The program draws on its own too (swaps outside the link: no barrier, no frame
        // request), each followed by a round trip: neither the swap nor the dispatch may block.
        var ownSwaps = 0
        for _ in 0..<12 where paced.connection.error == nil {
            do {
                try paced.egl.beginFrame()
                paced.painter.begin(width: paced.egl.width, height: paced.egl.height, background: RGBA(0.3, 0.1, 0.1))
                try paced.egl.swapBuffers()
                ownSwaps += 1
            } catch {
                Issue.record("a swap while hidden failed: \(error)")
                break
            }
            #expect(await roundtrip(paced.connection))
        }
        #expect(ownSwaps == 12)

        // A naive FIFO client: commits that each wait for the previous barrier and set the next,
        // a round trip apart (no new buffers: see above). Neither the commits nor the round trips
        // after them may block.
        if let fifo = paced.window.fifo {
            for _ in 0..<12 where paced.connection.error == nil {
                wp_fifo_v1_wait_barrier(fifo)
                wp_fifo_v1_set_barrier(fifo)
                wl_surface_commit(paced.window.surface)
                #expect(await roundtrip(paced.connection))
            }
        }
        #expect(paced.swapError == nil, "\(String(describing: paced.swapError))")
        #expect(paced.connection.error == nil, "\(String(describing: paced.connection.error))")
        if commitTiming {
            // weston 16 discards the hidden window's frame (feedback) and sends no callback: the
            // frame was applied, so no held timed commit, and commit timing stays in use.
            #expect(!paced.source.isCommitTimingFallenBack)
        }
        let hidden = paced.feedback[feedbackBefore...]
        let presentedHidden = hidden.filter { if case .presented = $0.outcome { true } else { false } }.count
        let discardedHidden = hidden.filter { $0.outcome == .discarded }.count
        let outstanding = paced.source.outstandingFeedbackCount
        let stalled = paced.source.isStalled
        let fellBack = paced.source.isCommitTimingFallenBack
        let outputsWhileHidden = paced.window.outputs.count

        // Leaving while hidden: the window goes, then the connection; the compositor answers a
        // second client afterwards (it was not stuck on us either).
        paced.link?.invalidate()
        paced.window.destroy()
        #expect(await roundtrip(paced.connection))
        client = nil
        let other = try WaylandConnection(socket: compositor.socketPath)
        #expect(await roundtrip(other))
        #expect(compositor.isRunning)
        #expect(!hangGuard.disarm(), "the client blocked while hidden: the compositor was killed to free it")
        print(
            """
            [\(name)] minimised after \(hiddenAt) callbacks (on \(outputsWhileHidden) outputs while hidden): then \(pacedAfter) \
            compositor-paced callbacks (FIFO barriers set \(barriersAfter)) and \(ticksBeforeSuspension) fallback ticks; suspended changes \
            \(suspensions), stalled \(stalled); feedback since: \(presentedHidden) presented, \(discardedHidden) discarded, \(outstanding) \
            outstanding; \(ownSwaps) own swaps and 12 commits with a barrier each, none blocked; commit timing fell back: \(fellBack)
            """)
    }
}

/// The compositor launchers themselves: stop kills the whole group and leaves nothing behind;
/// failures are typed and carry the compositor's log.
@Suite("private compositors in the Debian forky root", .serialized)
struct HeadlessRootCompositorTests {
    @Test(
        """
        started: a socket that answers, its mounts only in its own namespace; stopped (twice): no process of its group runs, the runtime \
        directory and its mount point in the root are removed
        """, arguments: HeadlessRootCompositor.Kind.allCases)
    @MainActor
    func startAndStop(_ kind: HeadlessRootCompositor.Kind) async throws {
        let compositor = try await HeadlessRootCompositor.start(kind)
        let group = compositor.pid
        let directory = compositor.runtimeDirectory
        let root = try DebianRoot.forky.path(needing: "/usr/bin/weston").get()
        #expect(group > 0 && compositor.isRunning)
        #expect(access(compositor.socketPath, F_OK) == 0)
        #expect(access(root + directory, F_OK) == 0, "the runtime directory's mount point in the root")
        // The root's /proc and the runtime directory are mounted in the compositor's namespace
        // (its mount points as seen from inside the chroot), never in ours.
        let theirs = ProcessTable.text(of: "/proc/\(group)/mountinfo")
        let ours = ProcessTable.text(of: "/proc/self/mountinfo")
        #expect(theirs.contains(" \(directory) ") && theirs.contains(" /proc "), "\(theirs)")
        #expect(!ours.contains(" \(root)/proc ") && !ours.contains(" \(directory) ") && !ours.contains(" \(root)\(directory) "))
        let connection = try WaylandConnection(socket: compositor.socketPath)
        #expect(await roundtrip(connection))
        #expect(!ProcessTable.liveMembers(ofGroup: group).isEmpty)
        compositor.stop()
        compositor.stop()
        #expect(compositor.pid == 0 && !compositor.isRunning)
        #expect(ProcessTable.liveMembers(ofGroup: group).isEmpty, "processes of the group survived stop()")
        #expect(access(directory, F_OK) == -1)
        #expect(access(root + directory, F_OK) == -1)
    }

    @Test("a compositor that exits during start-up: a typed error that names it and carries its log")
    func exitedEarly() async throws {
        do {
            // A config file that cannot be read ends weston before it makes its socket (an unknown
            // option ends it only after, which a start-up may or may not see first).
            let weston = try await HeadlessRootCompositor.start(.weston16, extraArguments: ["--config=/no-such-option-here.ini"])
            weston.stop()
            Issue.record("weston started with a config file that does not exist")
        } catch let error as HeadlessRootCompositor.LaunchError {
            guard case .exitedEarly(let kind, _, let log) = error else { Issue.record("unexpected error \(error)"); return }
            #expect(kind == .weston16)
            #expect(log.contains("no-such-option-here"), "log:\n\(log)")
            #expect(error.description.contains("weston 16 exited during start-up"))
        }
    }

    @Test("a missing root or compositor: the error names how to build the root")
    func missingRoot() {
        let result = DebianRoot.forky.path(needing: "/usr/bin/no-such-compositor")
        guard case .failure(let error) = result else { Issue.record("found /usr/bin/no-such-compositor"); return }
        #expect(error.description.contains("Scripts/os-root forky build"), "\(error)")
    }
}

/// Kills a compositor's process group from another thread unless disarmed in time: a client
/// blocked inside libwayland or EGL waiting for that compositor then sees its connection fail and
/// returns, so the test reports a failure instead of hanging. A hang guard, not a timing bound.
final class CompositorHangGuard: Sendable {
    private let state = Mutex<(armed: Bool, fired: Bool)>((true, false))

    init(group: pid_t, after limit: Duration) {
        let seconds = Double(limit.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            state.withLock { state in
                guard state.armed, group > 0 else { return }
                state = (false, true)
                kill(-group, SIGKILL)
            }
        }
    }

    /// Disarms it; returns whether it had fired.
    func disarm() -> Bool {
        state.withLock { state in
            state.armed = false
            return state.fired
        }
    }
}
