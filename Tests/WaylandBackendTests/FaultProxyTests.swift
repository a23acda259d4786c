import DisplayLinkCore
import Foundation
import DisplayLinkWaylandTesting
import Testing
import WaylandBackend

/// The link in front of a compositor that misbehaves: ``WaylandFaultProxy`` between the library's
/// window and weston 16 or mutter 50 (Debian forky root), one fault at a time. What holds at any
/// speed is asserted: the callbacks keep coming while the compositor sends frame events (or the
/// connection fails with an error when the stream is cut), targets never go back, each timestamp is
/// a presentation time the link was told or is marked an estimate, deltas are differences. How
/// long the link went without a callback and how far targets were from presentations are printed,
/// not asserted (Docs/FAULTS.md has a run's table).
@MainActor
@Suite("The link behind a fault-injecting proxy (weston 16, mutter 50)", .serialized)
struct FaultProxyTests {
    /// Callbacks each fault's run waits for.
    static let callbacks = 90

    /// Faults that send an event on an id after the compositor deleted it: libwayland hands it
    /// to the object that reuses the id, and when that object is of another interface (no such
    /// event) it fails the connection. A broken compositor, a typed error: either that or the
    /// link keeps going.
    static let mayBreakConnection: Set<WaylandFault> = [.duplicateFrameCallback, .duplicateFeedback, .staleFeedback]

    @Test(
        "every fault of the table: callbacks continue or the connection fails with an error; the timeline stays in order",
        arguments: [ForkyCompositor.weston16, .mutter50])
    func faultTable(_ kind: ForkyCompositor) async throws {
        let compositor = try await kind.start()
        defer { compositor.stop() }
        print(
            "[\(kind.testDescription)] fault | applied | callbacks | longest without a callback | median |target − presented| | estimates")
        // DISPLAYLINK_FAULTS=a,b runs only those rows (to rerun one fault with its log).
        let only = ProcessInfo.processInfo.environment["DISPLAYLINK_FAULTS"].map { Set($0.split(separator: ",").map(String.init)) }
        for fault in WaylandFault.allCases where only?.contains(fault.rawValue) ?? true {
            // The first timed commit is held (mutter 50 may hold it itself, and the link then
            // times no more commits for the proxy to hold).
            let schedule =
                fault.actsOnRequests
                ? WaylandFaultSchedule(fault, seed: 7, probability: 1, sparing: 0) : WaylandFaultSchedule(fault, seed: 7)
            let proxy = try WaylandFaultProxy(in: compositor, schedule: schedule)
            defer { proxy.stop() }
            try await run(fault, through: proxy, on: kind)
        }
    }

    static func milliseconds(_ nanoseconds: Int64) -> String {
        "\((Double(nanoseconds) / 1_000).rounded() / 1_000) ms"
    }

    private func run(_ fault: WaylandFault, through proxy: WaylandFaultProxy, on kind: ForkyCompositor) async throws {
        // Held timed commits need timed commits: the VSYNC gate is bypassed for that fault.
        let configuration = fault.actsOnRequests ? .init(requiresVsyncForTimedCommits: false) : kind.configuration
        let client = try PacedClient(on: proxy, configuration: configuration)
        let breaksConnection = fault == .cutMidMessage
        let done = await client.run(within: .seconds(120)) {
            client.frames.count >= Self.callbacks || client.connection.error != nil || client.swapError != nil
        }
        #expect(done, "\(fault): \(client.frames.count) callbacks; \(proxy.readLog())")
        client.link?.invalidate()
        let error = client.connection.error
        if breaksConnection {
            #expect(error != nil, "\(fault): the connection did not fail")
        } else if Self.mayBreakConnection.contains(fault) {
            #expect(error != nil || client.frames.count >= Self.callbacks, "\(fault)")
        } else {
            #expect(error == nil, "\(fault): \(String(describing: error))")
            #expect(client.frames.count >= Self.callbacks, "\(fault)")
        }
        #expect(client.swapError == nil, "\(fault)")
        if fault == .holdTimedCommits {
            // The watchdog found the hold, stopped timed commits and released it.
            #expect(client.source.isCommitTimingFallenBack, "\(fault)")
            #expect(client.source.releaseCommitCount >= 1, "\(fault)")
        }
        #expect(fault == .none || fault.actsOnce || proxy.tally.applied > 0 || error != nil, "\(fault): never applied")
        client.expectTimelineInOrder()
        let frames = client.frames
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.targetTimestamp >= a.targetTimestamp, "\(fault): target went back at refresh \(b.refreshIndex)")
        }
        // Times no clock can reach are passed on marked implausible; a compositor's own never are.
        if [.presentedNearOverflow, .presentedSecondsMax, .presentedFarFuture].contains(fault), proxy.tally.applied > 0 {
            #expect(client.feedback.contains { !$0.isTimePlausible }, "\(fault)")
        } else if fault == .none {
            #expect(client.feedback.allSatisfy { $0.isTimePlausible })
            // The report names the compositor behind the proxy, and the proxy.
            let named = client.connection.compositorDescription
            print("[\(kind.testDescription)] behind the proxy, the compositor is reported as \"\(named)\"")
            #expect(named.hasPrefix(kind == .mutter50 ? "mutter (through " : "weston (through "), "\(named)")
        }
        // Every timestamp is a presentation time the link was told, or says it is an estimate.
        let told = Set(client.presentedTimes)
        for frame in frames where frame.provenance == .presentationFeedback {
            #expect(told.contains(frame.timestamp.nanoseconds), "\(fault): refresh \(frame.refreshIndex)")
        }
        let arrivals = client.arrivals.map(\.nanoseconds)
        let longest = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }.max() ?? 0
        let errors = client.feedback.compactMap { feedback -> Int64? in
            guard case .presented(let at, _) = feedback.outcome, let target = feedback.targetTimestamp else { return nil }
            let (difference, overflow) = at.nanoseconds.subtractingReportingOverflow(target.nanoseconds)
            return overflow ? .max : Int64(clamping: difference.magnitude)
        }.sorted()
        let median = errors.isEmpty ? "-" : Self.milliseconds(errors[errors.count / 2])
        let estimates = frames.filter { $0.provenance != .presentationFeedback }.count
        print(
            """
            [\(kind.testDescription)] \(fault) | \(proxy.tally.applied) | \(frames.count)\(error.map { " (then \($0))" } ?? "") | \
            \(Self.milliseconds(longest)) | \(median) | \(estimates)
            """)
    }
}

/// ``WaylandFaultInjector`` on hand-made messages: what the client receives, exactly.
@Suite("Fault injector: which events it holds, changes and releases")
struct FaultInjectorTests {
    /// wl_display.get_registry(2); registry.bind(compositor 1 → 3, presentation 2 → 4);
    /// compositor.create_surface(5); surface.frame(6); presentation.feedback(5, 7).
    static func tracked(_ fault: WaylandFault, sparing: Int = 0, probability: Double = 1) -> WaylandFaultInjector {
        var injector = WaylandFaultInjector(schedule: WaylandFaultSchedule(fault, probability: probability, sparing: sparing))
        injector.clientSent(WaylandWireMessage(sender: 1, opcode: 1, arguments: [2]))
        injector.clientSent(bind(name: 1, "wl_compositor", id: 3))
        injector.clientSent(bind(name: 2, "wp_presentation", id: 4))
        injector.clientSent(WaylandWireMessage(sender: 3, opcode: 0, arguments: [5]))
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 3, arguments: [6]))
        injector.clientSent(WaylandWireMessage(sender: 4, opcode: 1, arguments: [5, 7]))
        return injector
    }

    static func bind(name: UInt32, _ interface: String, id: UInt32) -> WaylandWireMessage {
        var words: [UInt32] = [name, UInt32(interface.utf8.count + 1)]
        var bytes = Array(interface.utf8) + [0]
        while bytes.count % 4 != 0 { bytes.append(0) }
        for i in stride(from: 0, to: bytes.count, by: 4) {
            words.append(UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
        return WaylandWireMessage(sender: 2, opcode: 0, arguments: words + [1, id])
    }

    static let done = WaylandWireMessage(sender: 6, opcode: 0, arguments: [1234])
    static let deleteCallback = WaylandWireMessage(sender: 1, opcode: 1, arguments: [6])
    static let presented = WaylandWireMessage(sender: 7, opcode: 1, arguments: [0, 100, 5_000, 16_666_667, 0, 42, 0xF])

    @Test("the reader cuts a stream at message boundaries, whatever the chunks")
    func reader() {
        let stream = Self.done.bytes + Self.presented.bytes + Self.deleteCallback.bytes
        for split in 0...stream.count {
            var reader = WaylandWireReader()
            let messages = reader.append(stream[..<split]) + reader.append(stream[split...])
            #expect(messages == [Self.done, Self.presented, Self.deleteCallback])
            #expect(reader.pendingCount == 0)
        }
        var reader = WaylandWireReader()
        #expect(reader.append([1, 0, 0, 0, 0, 0, 4, 0]).isEmpty)
        #expect(reader.isMalformed)
    }

    @Test("a bind's id and interface are read past the string")
    func bindParsed() {
        let message = Self.bind(name: 9, "wp_presentation", id: 4)
        #expect(message.string(at: 1)?.value == "wp_presentation")
        #expect(message.argument(message.string(at: 1)!.next + 1) == 4)
    }

    @Test("without a fault, or while sparing, everything passes unchanged")
    func passes() {
        var injector = Self.tracked(.dropFrameCallback, sparing: 1)
        #expect(injector.serverSent(Self.done, at: 0) == [.forward(Self.done.bytes)])
        #expect(injector.isFrameCallback(6))
        #expect(injector.serverSent(Self.deleteCallback, at: 0) == [.forward(Self.deleteCallback.bytes)])
        #expect(!injector.isFrameCallback(6))
        var none = Self.tracked(.none)
        #expect(none.serverSent(Self.presented, at: 0) == [.forward(Self.presented.bytes)])
        #expect(none.appliedCount == 0)
    }

    @Test("a delayed done holds its delete_id behind it; both go at the release time, in order")
    func delay() {
        var injector = Self.tracked(.delayFrameCallback)
        #expect(injector.serverSent(Self.done, at: 1_000).isEmpty)
        #expect(injector.serverSent(Self.deleteCallback, at: 2_000).isEmpty)
        #expect(injector.nextRelease == 50_001_000)
        #expect(injector.due(at: 50_000_999).isEmpty)
        #expect(injector.due(at: 50_001_000) == [.forward(Self.done.bytes), .forward(Self.deleteCallback.bytes)])
        #expect(injector.nextRelease == nil)
        #expect(!injector.isFrameCallback(6))
    }

    @Test("presented rewritten: seconds past 64-bit nanoseconds, refresh 0, seq backwards, as discarded")
    func rewrites() {
        var overflow = Self.tracked(.presentedNearOverflow)
        guard case .forward(let bytes) = overflow.serverSent(Self.presented, at: 0).first,
            let message = WaylandWireMessage(bytes: bytes)
        else { Issue.record("nothing forwarded"); return }
        #expect(UInt64(message.argument(0)) << 32 | UInt64(message.argument(1)) == 9_223_372_037)
        var refresh = Self.tracked(.refreshZero)
        #expect(
            refresh.serverSent(Self.presented, at: 0) == [
                .forward(WaylandWireMessage(sender: 7, opcode: 1, arguments: [0, 100, 5_000, 0, 0, 42, 0xF]).bytes)
            ])
        var backwards = Self.tracked(.sequenceBackwards)
        #expect(
            backwards.serverSent(Self.presented, at: 0) == [
                .forward(
                    WaylandWireMessage(sender: 7, opcode: 1, arguments: [0, 100, 5_000, 16_666_667, UInt32.max, UInt32.max - 957, 0xF])
                        .bytes)
            ])
        var discarded = Self.tracked(.presentedAsDiscarded)
        #expect(discarded.serverSent(Self.presented, at: 0) == [.forward(WaylandWireMessage(sender: 7, opcode: 2, arguments: []).bytes)])
    }

    @Test(
        """
        a held timed commit: its callback, feedback and delete_id wait (and those of the surface's later commits); a commit on another \
        surface releases them in order; an untimed commit on the held surface does not; a second timed commit does
        """)
    func holdTimedCommits() {
        var injector = Self.tracked(.holdTimedCommits)
        // commit timing manager 9, get_timer(10, surface 5); surface 11 (a subsurface's).
        injector.clientSent(Self.bind(name: 3, "wp_commit_timing_manager_v1", id: 9))
        injector.clientSent(WaylandWireMessage(sender: 9, opcode: 1, arguments: [10, 5]))
        injector.clientSent(WaylandWireMessage(sender: 3, opcode: 0, arguments: [11]))
        // An untimed commit passes; then a timed one (callback 6 and feedback 7 were asked for it).
        injector.clientSent(WaylandWireMessage(sender: 10, opcode: 0, arguments: [0, 1, 0]))
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 6, arguments: []))
        #expect(injector.heldCommitCount == 1)
        #expect(injector.serverSent(Self.done, at: 0).isEmpty)
        #expect(injector.serverSent(Self.deleteCallback, at: 0).isEmpty)
        #expect(injector.serverSent(Self.presented, at: 0).isEmpty)
        // An untimed commit on the held surface queues behind it: nothing comes.
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 6, arguments: []))
        #expect(injector.due(at: 1_000_000_000).isEmpty)
        // A commit on another surface: everything held, in order.
        injector.clientSent(WaylandWireMessage(sender: 11, opcode: 6, arguments: []))
        #expect(injector.releaseCount == 1)
        #expect(
            injector.due(at: 0) == [.forward(Self.done.bytes), .forward(Self.deleteCallback.bytes), .forward(Self.presented.bytes)])
        // Held again by the next timed commit; released by a second timed commit on the surface.
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 3, arguments: [12]))
        injector.clientSent(WaylandWireMessage(sender: 10, opcode: 0, arguments: [0, 2, 0]))
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 6, arguments: []))
        let done12 = WaylandWireMessage(sender: 12, opcode: 0, arguments: [99])
        #expect(injector.serverSent(done12, at: 0).isEmpty)
        injector.clientSent(WaylandWireMessage(sender: 10, opcode: 0, arguments: [0, 3, 0]))
        injector.clientSent(WaylandWireMessage(sender: 5, opcode: 6, arguments: []))
        #expect(injector.due(at: 0) == [.forward(done12.bytes)])
        #expect(injector.heldCommitCount == 2 && injector.releaseCount == 2)
    }

    @Test("a reordered presented goes right after the next feedback event, with its delete_id")
    func reorder() {
        var injector = Self.tracked(.reorderFeedback)
        injector.clientSent(WaylandWireMessage(sender: 4, opcode: 1, arguments: [5, 8]))
        let deleteFirst = WaylandWireMessage(sender: 1, opcode: 1, arguments: [7])
        let second = WaylandWireMessage(sender: 8, opcode: 2, arguments: [])
        #expect(injector.serverSent(Self.presented, at: 0).isEmpty)
        #expect(injector.serverSent(deleteFirst, at: 0).isEmpty)
        #expect(
            injector.serverSent(second, at: 0) == [
                .forward(second.bytes), .forward(Self.presented.bytes), .forward(deleteFirst.bytes)
            ])
    }

    @Test("the same seed gives the same decisions")
    func seeded() {
        func decisions(seed: UInt64) -> [Bool] {
            var injector = WaylandFaultInjector(schedule: WaylandFaultSchedule(.dropFeedback, seed: seed, probability: 0.5, sparing: 0))
            injector.clientSent(WaylandWireMessage(sender: 1, opcode: 1, arguments: [2]))
            injector.clientSent(Self.bind(name: 2, "wp_presentation", id: 4))
            return (0..<64).map { i in
                let id = UInt32(10 + i)
                injector.clientSent(WaylandWireMessage(sender: 4, opcode: 1, arguments: [5, id]))
                return injector.serverSent(WaylandWireMessage(sender: id, opcode: 2, arguments: []), at: 0).isEmpty
            }
        }
        #expect(decisions(seed: 3) == decisions(seed: 3))
        #expect(decisions(seed: 3) != decisions(seed: 4))
        #expect(decisions(seed: 3).contains(true) && decisions(seed: 3).contains(false))
    }

    @Test("a cut sends half the message and nothing after")
    func cut() {
        var injector = Self.tracked(.cutMidMessage)
        #expect(injector.serverSent(Self.presented, at: 0) == [.cut(Array(Self.presented.bytes.prefix(18)))])
        #expect(injector.serverSent(Self.done, at: 0).isEmpty)
    }
}
