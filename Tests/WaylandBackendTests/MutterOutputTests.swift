import DisplayLinkCore
import Testing
import DisplayLinkWaylandTesting
import WaylandBackend

/// A change of output on a real mutter 48 (Debian 13 root) with two virtual monitors of
/// different refresh rates: the window is moved by making it fullscreen on the other output
/// (`xdg_toplevel.set_fullscreen(output)`, ``WaylandWindow/setFullscreen(on:)``).
///
/// Asserted so that it holds at any machine speed: the limits on the waits only turn a hang
/// into a failure; the periods compared are the compositor's own (its outputs' modes), never
/// measured durations.
@MainActor
@Suite("output change under a real mutter 48", .serialized)
struct MutterOutputTests {
    @Test(
        """
        mutter 48, a 60 Hz and a 30 Hz monitor: fullscreen on the other output moves the window there, and from the first callback after \
        the change the link's duration is that output's period
        """)
    func fullscreenOnAnotherOutput() async throws {
        let mutter = try await HeadlessMutter.mutter48(monitors: [
            .init(width: 640, height: 480, refreshRate: 60),
            .init(width: 640, height: 480, refreshRate: 30)
        ])
        defer { mutter.stop() }
        let client = try PacedClient(on: mutter)
        let outputs = client.connection.outputs
        #expect(outputs.count == 2, "mutter 48 advertised \(outputs.count) outputs for two virtual monitors; log:\n\(mutter.readLog())")
        guard outputs.count == 2 else { return }
        let periods = outputs.map { $0.advertisedPeriod?.value ?? 0 }
        #expect(Set(periods) == [16_666_666, 33_333_333], "the outputs' periods: \(periods)")

        let log = ChangeLog()
        let link = DisplayLink(source: client.source, target: client) { [log] client, link in
            client.tick(link)
            log.changesAtFrame.append(client.source.outputChangeCount)
        }
        link.presentationHandler = { [weak client] in client?.feedback.append($0) }
        client.link = link
        let running = await eventually(within: .seconds(60)) {
            (client.presentedTimes.count >= 5 && client.window.outputs.count == 1) || client.swapError != nil
        }
        #expect(
            running,
            """
            the window was never presented on one output (outputs: \(client.window.outputs.count)); mutter log:\n\(mutter.readLog())
            """)
        guard running, let from = client.window.outputs.first else { return }
        let to = try #require(outputs.first { $0 !== from })
        let fromPeriod = try #require(from.advertisedPeriod)
        let toPeriod = try #require(to.advertisedPeriod)
        #expect(fromPeriod != toPeriod)

        // An output of another connection (or one removed) is no output of this one.
        let stranger = try WaylandConnection(socket: mutter.socketPath)
        let foreign = try #require(stranger.outputs.first)
        do {
            try client.window.setFullscreen(on: foreign)
            Issue.record("fullscreen asked for on another connection's output")
        } catch {
            guard case .unknownOutput(_, let available) = error else { Issue.record("unexpected error \(error)"); return }
            #expect(available.count == 2, "\(error)")
        }

        // There and back: each move is learned at once.
        try await move(client, log, to: to, from: fromPeriod, mutter)
        try await move(client, log, to: from, from: toPeriod, mutter)
        link.invalidate()
        #expect(client.swapError == nil)
    }

    /// Makes the window fullscreen on `output`, waits until it is there with ten callbacks after
    /// the source saw the change, and checks the first callback after the change.
    func move(
        _ client: PacedClient, _ log: ChangeLog, to output: WaylandOutput, from oldPeriod: Nanoseconds,
        _ mutter: HeadlessMutter
    ) async throws {
        let newPeriod = try #require(output.advertisedPeriod)
        let changesBefore = client.source.outputChangeCount
        let framesBefore = client.frames.count
        try client.window.setFullscreen(on: output)
        let moved = await eventually(within: .seconds(60)) {
            (client.window.outputs.count == 1 && client.window.outputs[0] === output
                && log.changesAtFrame.last.map { $0 > changesBefore } == true
                && client.frames.count >= log.changesAtFrame.firstIndex { $0 > changesBefore }.map { $0 + 10 } ?? .max)
                || client.swapError != nil
        }
        #expect(
            moved,
            """
            the window did not move to output \(output.name ?? "?") and go on there (outputs: \
            \(client.window.outputs.map { $0.name ?? "?" }), frames \(client.frames.count)); mutter log:\n\(mutter.readLog())
            """)
        #expect(client.swapError == nil)
        #expect(client.window.isFullscreen)
        guard moved, let first = log.changesAtFrame.firstIndex(where: { $0 > changesBefore }), first > 0 else { return }
        #expect(first >= framesBefore)
        #expect(client.source.outputChangeCount == changesBefore + 1, "one move, one change")
        // At once: the first callback after the change already has the new output's period
        // (everything learned on the old output was forgotten; no interval is measured yet), as
        // the compositor states it: its wl_output mode (in mHz: 33 333 333 ns at 30 Hz) or its
        // presentation feedback's `refresh` (in ns: mutter 48 says 33 333 334). The two units'
        // rounding differ by less than a microsecond; the other output's period is 16.7 ms away.
        let frames = client.frames
        #expect(
            abs(frames[first].duration.value - newPeriod.value) <= 1_000,
            "first duration after the change: \(frames[first].duration), the new output's period \(newPeriod)")
        // Later durations are measured intervals: printed, not asserted.
        let after = frames[first..<min(frames.count, first + 10)].map(\.duration.value)
        let medianAfter = after.sorted()[after.count / 2]
        print(
            """
            [mutter 48] output change \(oldPeriod) → \(newPeriod) after \(first) callbacks: duration \(frames[first - 1].duration) before, \
            \(frames[first].duration) at once, median \(Double(medianAfter) / 1e6) ms over the next \(after.count) callbacks
            """)
    }
}

/// Fullscreen on a chosen output on Debian 12's weston 10 (one headless output; its wl_output is
/// version 3, so the output has no name).
@MainActor
@Suite("WaylandWindow fullscreen on a chosen output under weston", .serialized)
struct WestonOutputChoiceTests {
    @Test(
        """
        weston 10: no output has a name, so output(named:) names what there is; fullscreenOutput opens the window fullscreen on the output \
        given
        """)
    func chosenOutput() async throws {
        let weston = try await HeadlessWeston.start(width: 640, height: 480)
        defer { weston.stop() }
        let connection = try WaylandConnection(socket: weston.socketPath)
        let outputs = connection.outputs
        #expect(outputs.count == 1)
        do {
            _ = try connection.output(named: "no-such-output")
            Issue.record("found an output that does not exist")
        } catch {
            guard case .unknownOutput(let what, let available) = error else { Issue.record("unexpected error \(error)"); return }
            #expect(what == "'no-such-output'")
            #expect(available.count == outputs.count, "\(available)")
            #expect(error.description.contains("DisplaySurface.Options.waylandOutput"))
        }
        let output = try #require(outputs.first)
        let window = try WaylandWindow(
            connection: connection, title: "test", appID: "displaylink.test",
            width: 100, height: 100, fullscreen: true, fullscreenOutput: output)
        #expect(window.isFullscreen)
        #expect(window.width == 640 && window.height == 480)
        window.destroy()
    }
}
