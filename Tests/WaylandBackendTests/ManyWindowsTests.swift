import DisplayLinkCore
import Glibc
import Testing
import DisplayLinkWaylandTesting
import WaylandBackend

/// Several windows of one program on one display connection, each with its own link, on a real
/// mutter 48 with two virtual monitors (60 and 30 Hz): the pacing bugs users meet in other
/// toolkits come from such programs (winit#4668, a starved window while the loop spins;
/// glfw#2640, hiding one window freezes another's swap). Asserted what holds at any speed: the
/// hidden window's link stops (no callback, no timer), the shown ones keep their timestamps
/// exact and their timelines in order, and the window moved to the other monitor has that
/// monitor's period from its first callback there. Target errors and CPU are printed against a
/// single window of the same run (`make bench-many-windows` prints them on their own).
@MainActor
@Suite("Four windows on one connection under a real mutter 48", .serialized)
struct ManyWindowsTests {
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The 99th percentile of |target − presented| over `client`'s presented frames from index `from` on, in ms.
    static func p99TargetError(_ client: PacedClient, from: UInt64 = 3) -> Double {
        let errors = client.feedback.compactMap { feedback -> Int64? in
            guard feedback.refreshIndex >= from, case .presented(let at, _) = feedback.outcome, let target = feedback.targetTimestamp
            else { return nil }
            return Int64(clamping: (at.nanoseconds &- target.nanoseconds).magnitude)
        }.sorted()
        guard !errors.isEmpty else { return .nan }
        return Double(errors[min(errors.count - 1, errors.count * 99 / 100)]) / 1e6
    }

    @Test(
        """
        four windows, one connection, a link each: one minimised stops (no callback, no timer), one moved to the 30 Hz monitor has its \\
        period from the first callback there, and the other two keep exact timestamps and ordered timelines throughout
        """)
    func fourWindows() async throws {
        let mutter = try await HeadlessMutter.mutter48(monitors: [
            .init(width: 640, height: 480, refreshRate: 60),
            .init(width: 640, height: 480, refreshRate: 30)
        ])
        defer { mutter.stop() }
        let connection = try WaylandConnection(socket: mutter.socketPath)
        #expect(connection.outputs.count == 2, "log:\n\(mutter.readLog())")
        guard connection.outputs.count == 2 else { return }

        // One window alone first: the reference for target errors and CPU.
        let single = try PacedClient(connection: connection, size: 120)
        var cpu = Self.cpuSeconds()
        let alone = await single.run(within: .seconds(120)) { single.presentedTimes.count >= 120 || single.swapError != nil }
        #expect(alone, "the single window stopped: \(single.presentedTimes.count) presented; log:\n\(mutter.readLog())")
        let singleCPU = (Self.cpuSeconds() - cpu) / Double(max(1, single.presentedTimes.count))
        let singleError = Self.p99TargetError(single)
        single.link?.invalidate()
        single.window.destroy()

        let clients = try (0..<4).map { _ in try PacedClient(connection: connection, size: 120) }
        let shown = Array(clients[0..<2])
        let hidden = clients[2]
        let moved = clients[3]
        let log = ChangeLog()
        for client in clients where client !== moved { client.start() }
        let movedLink = DisplayLink(source: moved.source, target: moved) { [log] client, link in
            client.tick(link)
            log.changesAtFrame.append(client.source.outputChangeCount)
        }
        movedLink.presentationHandler = { [weak moved] in moved?.feedback.append($0) }
        moved.link = movedLink
        cpu = Self.cpuSeconds()
        let started = await eventually(within: .seconds(120)) {
            clients.allSatisfy { $0.presentedTimes.count >= 10 && $0.window.outputs.count == 1 } || clients.contains { $0.swapError != nil }
        }
        #expect(started, "not every window was presented: \(clients.map { $0.presentedTimes.count }); log:\n\(mutter.readLog())")
        guard started else { return }

        // Target errors count from here, when every window has started (its first frames compile
        // shaders on llvmpipe, which delays the others').
        let measuredFrom = shown.map { $0.frames.last?.refreshIndex ?? 0 }

        // Hidden: mutter 48 suspends a minimised window; its link then stops, with no timer.
        hidden.window.minimize()
        let suspended = await eventually(within: .seconds(60)) { hidden.source.isSuspended }
        #expect(suspended, "mutter 48 did not suspend the minimised window")
        let hiddenCallbacks = hidden.frames.count

        // Moved: fullscreen on the monitor it is not on.
        let from = try #require(moved.window.outputs.first)
        let to = try #require(connection.outputs.first { $0 !== from })
        let newPeriod = try #require(to.advertisedPeriod)
        let changesBefore = moved.source.outputChangeCount
        try moved.window.setFullscreen(on: to)
        let shownBefore = shown.map { $0.presentedTimes.count }
        let settled = await eventually(within: .seconds(120)) {
            let movedOn = log.changesAtFrame.firstIndex { $0 > changesBefore }.map { moved.frames.count >= $0 + 10 } ?? false
            return movedOn && zip(shown, shownBefore).allSatisfy { $0.presentedTimes.count >= $1 + 120 }
                || clients.contains { $0.swapError != nil }
        }
        #expect(
            settled,
            """
            frames stopped: presented \(clients.map { $0.presentedTimes.count }), moved window's changes \
            \(moved.source.outputChangeCount - changesBefore); log:\n\(mutter.readLog())
            """)
        let manyCPU = (Self.cpuSeconds() - cpu) / Double(max(1, shown.map { $0.presentedTimes.count }.reduce(0, +)))
        for client in clients { client.link?.invalidate() }
        #expect(clients.allSatisfy { $0.swapError == nil })
        #expect(connection.error == nil)

        // The hidden window: not one callback while suspended, and no timer armed.
        #expect(hidden.source.isSuspended)
        #expect(hidden.frames.count == hiddenCallbacks, "\(hidden.frames.count - hiddenCallbacks) callbacks while hidden")
        #expect(!hidden.source.isWatchdogArmed)
        // The shown ones: every timestamp a presentation time mutter reported, or an estimate.
        for client in shown {
            client.expectStampedByPresentations()
            client.expectTimelineInOrder()
        }
        // The moved one: from its first callback on the new monitor, that monitor's period.
        if let first = log.changesAtFrame.firstIndex(where: { $0 > changesBefore }) {
            #expect(moved.source.outputChangeCount == changesBefore + 1)
            #expect(
                abs(moved.frames[first].duration.value - newPeriod.value) <= 1_000,
                "first duration after the move \(moved.frames[first].duration), the new monitor's period \(newPeriod)")
        }
        moved.expectTimelineInOrder()
        let errors = zip(shown, measuredFrom).map { String(format: "%.3f", Self.p99TargetError($0, from: $1 + 1)) }
        print(
            """
            [mutter 48, four windows on one connection] p99 |target − presented| of the two shown \(errors) ms against \
            \(String(format: "%.3f", singleError)) ms for one window alone; CPU per shown frame \
            \(String(format: "%.2f", manyCPU * 1000)) ms (four windows, two shown, one hidden, one on the 30 Hz monitor) against \
            \(String(format: "%.2f", singleCPU * 1000)) ms alone (whole process); hidden window: \(hiddenCallbacks) callbacks, none \
            after its suspension
            """)
    }
}
