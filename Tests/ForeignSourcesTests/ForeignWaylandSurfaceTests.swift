import DisplayLinkCore
import DisplayLinkWaylandTesting
import ForeignSources
import Testing
import WaylandBackend

/// The link on a surface the program owns, under a real weston: the program's window, swap and
/// events stay its own; the link's requests go with the commits the hook announces.
@Suite("The link on a program's own surface", .serialized)
@MainActor
struct ForeignWaylandSurfaceTests {
    @Test(
        "timestamps are the compositor's presentation times, the first delta is 0, targets never go back, and the program's own commits pace it"
    )
    func pacedByTheProgramsCommits() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 60 }, "\(program.frames.count) callbacks")
        program.link?.invalidate()
        #expect(program.swapError == nil)
        #expect(program.violations().isEmpty, "\(program.violations())")
        #expect(program.frames.contains { $0.provenance == .presentationFeedback })
        #expect(program.paced.timingProtocols.contains { $0.hasPrefix("wp_presentation") })
        #expect(program.paced.uncommittedRefreshes == 0)
        // The library never committed the program's surface: every frame request went with one of
        // the program's commits (one request per commit at most).
        #expect(program.paced.frameRequestCount <= program.commits)
        // The program's own connection still works (its events were never taken).
        #expect(await roundtrip(program.connection))
        print(
            "[foreign] \(program.frames.count) callbacks, \(program.commits) commits, provenance \(Set(program.frames.map(\.provenance.rawValue)))"
        )
    }

    @Test("a program that draws after its callback returned, in its own loop: still exact timestamps")
    func drawsInItsOwnLoop() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.drawsInCallback = false
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 40 })
        program.link?.invalidate()
        #expect(program.violations().isEmpty, "\(program.violations())")
        #expect(program.frames.suffix(20).filter { $0.provenance == .presentationFeedback }.count > 0)
    }

    @Test("callbacks that draw nothing keep the link ticking on the predicted vblanks; drawing again brings the compositor's times back")
    func idleProgramKeepsTicking() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 20 })
        program.draws = false
        let idleFrom = program.frames.count
        // Frames committed and not yet reported: their presentations may still stamp a few idle
        // refreshes (on a slow host, several refreshes later).
        let inFlight = program.commits - program.feedback.count
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= idleFrom + 20 })
        // Every refresh after the program stopped drawing is a tick on the predicted vblanks (an
        // estimate), but for those that carry the presentation of a frame still in flight.
        let idle = program.frames[idleFrom...]
        let stamped = idle.filter { $0.provenance == .presentationFeedback }.count
        #expect(idle.allSatisfy { $0.provenance == .frameCallbackEstimate || $0.provenance == .presentationFeedback })
        #expect(stamped <= max(0, inFlight), "\(stamped) idle refreshes stamped by feedback, \(inFlight) frames in flight")
        #expect(program.paced.uncommittedRefreshes >= 18)
        program.draws = true
        let again = program.frames.count
        #expect(
            await eventually(within: .seconds(60)) {
                program.frames.count > again + 5 && program.frames[(again + 3)...].contains { $0.provenance == .presentationFeedback }
            })
        program.link?.invalidate()
        #expect(program.violations().isEmpty, "\(program.violations())")
    }

    @Test("a program that forgets the hook is told once, and its link never stops")
    func missingHookIsReported() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.usesHook = false
        var warnings = 0
        program.paced.onCommitHookMissing = { warnings += 1 }
        program.start()
        let needed = WaylandFrameSource.missingCommitHookRefreshes + 10
        #expect(await eventually(within: .seconds(120)) { program.frames.count >= needed })
        program.link?.invalidate()
        #expect(warnings == 1)
        // No request ever went out: every timestamp is an estimate (a tick on the predicted vblanks,
        // or the watchdog's if a tick ran later than the stall timeout on a loaded host).
        #expect(program.frames.dropFirst().allSatisfy { $0.provenance == .frameCallbackEstimate || $0.provenance == .timerFallback })
        #expect(program.violations().isEmpty, "\(program.violations())")
    }

    @Test("suspended by the program: no callbacks while suspended, the first after it has a zero delta")
    func suspendedByTheProgram() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.start()
        program.link?.stallPolicy = .zeroDelta
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 10 })
        program.paced.isSuspended = true
        // Whatever was already on its way may still come: wait for quiet, then check none follows.
        #expect(await roundtrip(program.connection))
        let suspendedAt = program.frames.count
        #expect(await roundtrip(program.connection))
        #expect(await roundtrip(program.connection))
        #expect(program.frames.count <= suspendedAt + 1)
        let before = program.frames.count
        program.paced.isSuspended = false
        #expect(await eventually(within: .seconds(60)) { program.frames.count > before })
        #expect(program.frames[before].delta == .zero)
        program.link?.invalidate()
    }

    @Test("two surfaces of one display share one connection; closing one leaves the other running")
    func twoSurfacesOneDisplay() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        let second = try WaylandWindow(connection: program.connection, title: "second", appID: "displaylink.second", width: 100, height: 80)
        let secondEGL = try WaylandEGLWindow(window: second, context: program.egl.context)
        let other = try ForeignWaylandSurface(
            display: UnsafeMutableRawPointer(program.connection.displayHandle), surface: UnsafeMutableRawPointer(second.surfaceHandle))
        #expect(other.displayIdentity == program.paced.displayIdentity)
        var otherFrames = 0
        let otherLink = DisplayLink(source: other, target: secondEGL) { egl, _ in
            otherFrames += 1
            try? egl.beginFrame()
            other.willCommit()
            try? egl.swapBuffers()
        }
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 20 && otherFrames >= 20 })
        other.close()
        #expect(!otherLink.isValid)
        let count = program.frames.count
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= count + 20 })
        program.link?.invalidate()
        #expect(program.violations().isEmpty, "\(program.violations())")
    }

    @Test("the compositor going away invalidates the links and says so; nothing traps")
    func compositorGoesAway() async throws {
        let weston = try await HeadlessWeston.start()
        let program = try ProgramWindow(on: weston)
        var failure: ForeignSourceError?
        program.paced.onError = { failure = $0 }
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.frames.count >= 5 })
        weston.kill()
        #expect(await eventually(within: .seconds(60)) { failure != nil })
        #expect(program.link?.isValid == false)
        #expect(program.paced.error != nil)
        program.paced.willCommit()  // after the failure: does nothing
        weston.stop()
    }

    @Test("closing the source from inside its presentation handler: the program's display and window go on")
    func closeFromPresentationHandler() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let program = try ProgramWindow(on: weston)
        program.start()
        var closed = false
        program.link?.presentationHandler = { [program] _ in
            guard !closed else { return }
            closed = true
            program.paced.close()
        }
        #expect(await eventually(within: .seconds(60)) { closed })
        #expect(program.link?.isValid == false)
        // The program's own connection still works, and so does its swap.
        program.draw()
        #expect(await roundtrip(program.connection))
        #expect(program.swapError == nil)
    }

    @Test("a pointer that is not a wl_surface is refused with a typed error")
    func notASurface() async throws {
        let weston = try await HeadlessWeston.start()
        defer { weston.stop() }
        let connection = try WaylandConnection(socket: weston.socketPath)
        let display = UnsafeMutableRawPointer(connection.displayHandle)
        // The display itself is a proxy of libwayland's, but not a surface.
        #expect(throws: ForeignSourceError.self) { try ForeignWaylandSurface(display: display, surface: display) }
        #expect(await roundtrip(connection))
    }

    @Test("null handles are refused with a typed error")
    func nullHandles() {
        #expect(throws: ForeignSourceError.self) { try ForeignWaylandSurface(display: nil, surface: nil) }
    }
}

/// A compositor round trip on the program's connection.
@MainActor
func roundtrip(_ connection: WaylandConnection) async -> Bool {
    var done = false
    connection.sync { done = true }
    return await eventually(within: .seconds(60)) { done || connection.error != nil } && done
}

/// The outputs of a program's surface come from the presentation feedback (`sync_output`): a move
/// to another output is learned as on the library's own window.
@Suite("The link on a program's surface moved between outputs (mutter 48, two monitors)", .serialized)
@MainActor
struct ForeignSurfaceOutputTests {
    @Test("fullscreen on the other output (a 60 Hz and a 30 Hz monitor): the link's duration becomes that output's period")
    func movedToAnotherOutput() async throws {
        let mutter = try await HeadlessMutter.mutter48(monitors: [
            .init(width: 640, height: 480, refreshRate: 60),
            .init(width: 640, height: 480, refreshRate: 30)
        ])
        defer { mutter.stop() }
        let program = try ProgramWindow(on: mutter)
        let outputs = program.connection.outputs
        #expect(outputs.count == 2, "mutter 48 advertised \(outputs.count) outputs; log:\n\(mutter.readLog())")
        guard outputs.count == 2 else { return }
        program.start()
        #expect(await eventually(within: .seconds(60)) { program.presentedTimes.count >= 5 && program.window.outputs.count == 1 })
        guard let from = program.window.outputs.first else { return }
        let to = try #require(outputs.first { $0 !== from })
        let toPeriod = try #require(to.advertisedPeriod)
        #expect(from.advertisedPeriod != toPeriod)
        let before = program.frames.count
        try program.window.setFullscreen(on: to)
        // Each frame's feedback names the output it was shown on: from the first one there, the
        // rhythm starts afresh on that output's period.
        // The period is then learned from that output's presentations: the compositor's 30 Hz
        // grid, whatever the host's speed (mutter's timer presents 33.36 ms apart here).
        func nearTo(_ d: Nanoseconds) -> Bool { abs(d.value - toPeriod.value) < toPeriod.value / 10 }
        #expect(
            await eventually(within: .seconds(60)) {
                program.paced.outputChangeCount >= 1 && program.frames.count > before + 5
                    && program.frames.last.map { nearTo($0.duration) } == true
            }, "output changes \(program.paced.outputChangeCount), durations after the move: \(program.frames.suffix(5).map(\.duration))")
        program.link?.invalidate()
        #expect(program.violations().isEmpty, "\(program.violations())")
    }
}
