import DisplayLinkTesting

/// The decisions of ``WaylandFaultProxy`` for one client connection, without sockets or clocks:
/// it follows the client's requests to learn which object ids are frame callbacks, presentation
/// feedback, registries and outputs, and turns each event the compositor sends into what the
/// client receives (now, later, changed, twice, never), by a ``WaylandFaultSchedule``. Times are
/// nanoseconds on any clock the caller keeps.
///
/// A held event holds its object's `wl_display.delete_id` behind it, as a compositor that sends
/// the event late would: the client never sees an id deleted before the event for it, except
/// where the fault is exactly that (``WaylandFault/duplicateFrameCallback``,
/// ``WaylandFault/duplicateFeedback``, ``WaylandFault/staleFeedback``).
public struct WaylandFaultInjector: Sendable {
    /// What to write to the client.
    public enum Output: Equatable, Sendable {
        case forward([UInt8])
        /// Write these bytes (part of a message), then close both sides.
        case cut([UInt8])
    }

    private enum Kind: Equatable {
        case registry, compositor, surface, frameCallback, presentation, feedback, commitTimingManager, commitTimer
    }

    private struct Held {
        var releaseAt: Int64?
        var object: UInt32
        var message: WaylandWireMessage
    }

    public let schedule: WaylandFaultSchedule
    /// How many times the fault was applied.
    public private(set) var appliedCount = 0
    /// Events the fault could act on, so far.
    public private(set) var candidateCount = 0

    private var random: SplitMix64
    private var kinds: [UInt32: Kind] = [:]
    private var outputGlobals: [UInt32] = []
    private var held: [Held] = []
    /// The feedback whose reordered event waits for the next feedback event.
    private var awaitingObject: UInt32?
    private var earlierPresented: [WaylandWireMessage] = []
    private var isCut = false
    /// For ``WaylandFault/holdTimedCommits``: the surface each frame callback, feedback and
    /// commit timer is for; the callbacks and feedback asked for since each surface's last
    /// commit; surfaces whose next commit is timed; the surface whose timed commit is held, and
    /// the objects whose events wait for its release.
    private var surfaceOf: [UInt32: UInt32] = [:]
    private var sinceCommit: [UInt32: [UInt32]] = [:]
    private var timedNext: Set<UInt32> = []
    private var heldSurface: UInt32?
    private var heldObjects: Set<UInt32> = []
    /// Timed commits held, and releases.
    public private(set) var heldCommitCount = 0
    public private(set) var releaseCount = 0

    public init(schedule: WaylandFaultSchedule) {
        self.schedule = schedule
        random = SplitMix64(seed: schedule.seed)
    }

    /// Follows a request the client sent (every request passes unchanged).
    public mutating func clientSent(_ message: WaylandWireMessage) {
        let sender = message.sender
        switch (sender == 1 ? nil : kinds[sender], message.opcode) {
        case (nil, 1) where sender == 1: kinds[message.argument(0)] = .registry  // get_registry
        case (.registry, 0):  // bind(name, interface, version, id)
            guard let (interface, next) = message.string(at: 1) else { return }
            let id = message.argument(next + 1)
            switch interface {
            case "wl_compositor": kinds[id] = .compositor
            case "wp_presentation": kinds[id] = .presentation
            case "wp_commit_timing_manager_v1": kinds[id] = .commitTimingManager
            default: kinds[id] = nil
            }
        case (.compositor, 0): kinds[message.argument(0)] = .surface  // create_surface
        case (.surface, 3):  // frame(callback)
            kinds[message.argument(0)] = .frameCallback
            asked(message.argument(0), for: sender)
        case (.presentation, 1):  // feedback(surface, id)
            kinds[message.argument(1)] = .feedback
            asked(message.argument(1), for: message.argument(0))
        case (.commitTimingManager, 1):  // get_timer(id, surface)
            kinds[message.argument(0)] = .commitTimer
            surfaceOf[message.argument(0)] = message.argument(1)
        case (.commitTimer, 0):  // set_timestamp
            if let surface = surfaceOf[sender] { timedNext.insert(surface) }
        case (.surface, 6): committed(sender)  // commit
        default: break
        }
    }

    /// A frame callback or feedback `object` was asked for on `surface`.
    private mutating func asked(_ object: UInt32, for surface: UInt32) {
        guard schedule.fault == .holdTimedCommits else { return }
        surfaceOf[object] = surface
        if heldSurface == surface {
            heldObjects.insert(object)
        } else {
            sinceCommit[surface, default: []].append(object)
        }
    }

    /// `surface` was committed: a timed commit may be held, or release the one held.
    private mutating func committed(_ surface: UInt32) {
        guard schedule.fault == .holdTimedCommits else { return }
        let timed = timedNext.remove(surface) != nil
        let asked = sinceCommit.removeValue(forKey: surface) ?? []
        if let held = heldSurface {
            // A repaint for another surface, or another timed commit, applies the held one.
            guard surface != held || timed else { return }
            heldSurface = nil
            heldObjects = []
            releaseCount += 1
            for index in indicesAwaitingRelease() { self.held[index].releaseAt = .min }
            return
        }
        guard timed, decides() else { return }
        appliedCount += 1
        heldCommitCount += 1
        heldSurface = surface
        heldObjects = Set(asked)
    }

    /// The held events that wait for a release (no time of their own).
    private func indicesAwaitingRelease() -> [Int] {
        held.indices.filter { held[$0].releaseAt == nil && surfaceOf[held[$0].object] != nil && held[$0].object != awaitingObject }
    }

    /// What the client receives for an event the compositor sent at `now`.
    public mutating func serverSent(_ message: WaylandWireMessage, at now: Int64) -> [Output] {
        guard !isCut else { return [] }
        let sender = message.sender
        if sender == 1, message.opcode == 1 {  // delete_id(id)
            let id = message.argument(0)
            if let last = held.lastIndex(where: { $0.object == id }) {
                held.insert(Held(releaseAt: held[last].releaseAt, object: id, message: message), at: last + 1)
                return []
            }
            kinds[id] = nil
            return [.forward(message.bytes)]
        }
        if heldObjects.contains(sender) {
            held.append(Held(releaseAt: nil, object: sender, message: message))
            return []
        }
        switch (kinds[sender], message.opcode) {
        case (.registry, 0):  // global(name, interface, version)
            if message.string(at: 1)?.value == "wl_output" { outputGlobals.append(message.argument(0)) }
        case (.registry, 1):  // global_remove(name)
            outputGlobals.removeAll { $0 == message.argument(0) }
        case (.frameCallback, 0):
            return frameEvent(message, at: now, actsHere: schedule.fault.actsOnFrameCallbacks)
        case (.feedback, 1):
            let outputs = frameEvent(message, at: now, actsHere: !schedule.fault.actsOnFrameCallbacks)
            if earlierPresented.count == 8 { earlierPresented.removeFirst() }
            earlierPresented.append(message)
            return outputs
        case (.feedback, 2):
            return frameEvent(message, at: now, actsHere: schedule.fault.actsOnDiscarded)
        default: break
        }
        return [.forward(message.bytes)]
    }

    /// Events whose time has come at `now`, in order.
    public mutating func due(at now: Int64) -> [Output] {
        var outputs: [Output] = []
        while let first = held.firstIndex(where: { ($0.releaseAt ?? .max) <= now }) {
            let released = held.remove(at: first)
            outputs.append(.forward(released.message.bytes))
            if released.message.sender == 1 { kinds[released.object] = nil }
        }
        return outputs
    }

    /// Whether `id` is a frame callback of the client's.
    public func isFrameCallback(_ id: UInt32) -> Bool { kinds[id] == .frameCallback }

    /// When the next held event is due (nil: none is waiting on a time).
    public var nextRelease: Int64? { held.compactMap(\.releaseAt).min() }

    private mutating func frameEvent(_ message: WaylandWireMessage, at now: Int64, actsHere: Bool) -> [Output] {
        guard !schedule.fault.actsOnRequests else { return [.forward(message.bytes)] }
        // A reordered event goes out right after the next feedback event.
        let releasesReordered = kinds[message.sender] == .feedback && awaitingObject != nil
        var outputs = apply(to: message, at: now, actsHere: actsHere)
        if releasesReordered, awaitingObject != message.sender { outputs += releaseAwaiting() }
        return outputs
    }

    private mutating func apply(to message: WaylandWireMessage, at now: Int64, actsHere: Bool) -> [Output] {
        guard actsHere, schedule.fault != .none, decides() else { return [.forward(message.bytes)] }
        var outputs: [Output] = []
        appliedCount += 1
        let id = message.sender
        let threeRefreshes: Int64 = 50_000_000
        var changed = message
        switch schedule.fault {
        case .none: break
        case .dropFrameCallback, .dropFeedback:
            return outputs
        case .delayFrameCallback, .delayFeedback:
            held.append(Held(releaseAt: now + threeRefreshes, object: id, message: message))
            return outputs
        case .duplicateFrameCallback, .duplicateFeedback:
            held.append(Held(releaseAt: now + 8_000_000, object: 0, message: message))
        case .reorderFeedback:
            if awaitingObject == nil {
                awaitingObject = id
                held.append(Held(releaseAt: nil, object: id, message: message))
                return outputs
            }
        case .presentedBackwards:
            setSeconds(&changed, seconds(message) &- 1)
        case .presentedZero:
            setSeconds(&changed, 0)
            changed.setArgument(2, 0)
        case .presentedNearOverflow:
            setSeconds(&changed, UInt64(Int64.max / 1_000_000_000) + 1)
        case .presentedSecondsMax:
            setSeconds(&changed, .max)
        case .presentedFarFuture:
            setSeconds(&changed, seconds(message) &+ 365 * 86_400)
        case .presentedNanosecondsInvalid:
            changed.setArgument(2, .max)
        case .refreshZero:
            changed.setArgument(3, 0)
        case .refreshAbsurd:
            changed.setArgument(3, .max)
        case .sequenceBackwards:
            setSequence(&changed, sequence(message) &- 1_000)
        case .sequenceWrapping:
            setSequence(&changed, UInt64.max - 2 &+ UInt64(appliedCount))
        case .flagsChanged:
            changed.setArgument(6, UInt32(truncatingIfNeeded: random.next()) & 0xF)
        case .presentedAsDiscarded:
            changed = WaylandWireMessage(sender: id, opcode: 2, arguments: [])
        case .staleFeedback:
            if let stale = earlierPresented.first { outputs.append(.forward(stale.bytes)) }
        case .outputRemoved:
            for registry in kinds.filter({ $0.value == .registry }).map(\.key).sorted() {
                for name in outputGlobals {
                    outputs.append(.forward(WaylandWireMessage(sender: registry, opcode: 1, arguments: [name]).bytes))
                }
            }
            outputGlobals.removeAll()
        case .holdTimedCommits:
            break  // acts on requests (clientSent), never here
        case .cutMidMessage:
            isCut = true
            held.removeAll()
            outputs.append(.cut(Array(message.bytes.prefix(message.bytes.count / 2))))
            return outputs
        }
        outputs.append(.forward(changed.bytes))
        return outputs
    }

    private mutating func releaseAwaiting() -> [Output] {
        guard let object = awaitingObject else { return [] }
        awaitingObject = nil
        // The reordered event and its delete_id, which waited behind it.
        var outputs: [Output] = []
        var index = 0
        while index < held.count {
            if held[index].object == object, held[index].releaseAt == nil {
                let released = held.remove(at: index)
                outputs.append(.forward(released.message.bytes))
                if released.message.sender == 1 { kinds[object] = nil }
            } else {
                index += 1
            }
        }
        return outputs
    }

    private mutating func decides() -> Bool {
        if schedule.fault.actsOnce, appliedCount > 0 { return false }
        candidateCount += 1
        guard candidateCount > schedule.sparing else { return false }
        return Double(random.next() >> 11) / Double(1 << 53) < schedule.probability
    }

    private func seconds(_ message: WaylandWireMessage) -> UInt64 {
        UInt64(message.argument(0)) << 32 | UInt64(message.argument(1))
    }

    private func setSeconds(_ message: inout WaylandWireMessage, _ value: UInt64) {
        message.setArgument(0, UInt32(truncatingIfNeeded: value >> 32))
        message.setArgument(1, UInt32(truncatingIfNeeded: value))
    }

    private func sequence(_ message: WaylandWireMessage) -> UInt64 {
        UInt64(message.argument(4)) << 32 | UInt64(message.argument(5))
    }

    private func setSequence(_ message: inout WaylandWireMessage, _ value: UInt64) {
        message.setArgument(4, UInt32(truncatingIfNeeded: value >> 32))
        message.setArgument(5, UInt32(truncatingIfNeeded: value))
    }
}
