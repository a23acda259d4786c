import DisplayLinkCore

/// Which frame first showed each input event, and when: input-to-photon latency, the time from an
/// event (on the link's clock) to the presentation of the first frame drawn after it.
///
/// Tell it what the program received, what it drew, and what the link's source reported:
///
/// ```swift
/// let photons = InputToPhoton(capacity: 256)
/// photons.onShown = { shown in print(shown.event.kind, shown.latency) }
/// surface.onInput = { event in
///     model.apply(event)
///     photons.received(event)                  // the program acted on it
/// }
/// let link = DisplayLink(source: surface, target: model) { model, link in
///     model.draw(at: link.targetTimestamp)
///     photons.drew(link.frame)                 // every event received so far is in this frame
///     try? surface.present()
/// }
/// link.presentationHandler = { feedback in photons.presented(feedback) }
/// ```
///
/// - A frame that was discarded (never shown) passes its events on to the next frame drawn; a
///   frame whose feedback never comes leaves them to the next frame presented. Each event is
///   reported once, to ``onShown``, when the first frame drawn after it that was shown is known.
/// - ``Shown/latency`` rests on the event's time: ``InputTime/Source/received`` where the
///   compositor's times were unusable (then it understates the latency by the time the event took
///   to reach the program), the device's or compositor's otherwise. ``Shown/timeSource`` says which.
/// - Fixed storage: `capacity` events and frames waiting, allocated once; nothing is allocated per
///   event or frame. When more events wait than that, the oldest is dropped (``droppedCount``).
/// - A pure type: no clock reads, no threads. Use it from one thread (the main actor, as the
///   surface's callbacks run there).
public final class InputToPhoton {
    /// An event and the frame that first showed it.
    public struct Shown: Sendable, Hashable {
        public var event: InputEvent
        /// When the frame was shown (`CLOCK_MONOTONIC`), as the source reported it.
        public var presented: MonotonicInstant
        /// The `DisplayFrame.refreshIndex` of the callback that drew it.
        public var refreshIndex: UInt64
        /// The `DisplayFrame.targetTimestamp` it was drawn for.
        public var targetTimestamp: MonotonicInstant
        /// `presented` less the event's time.
        public var latency: Nanoseconds { presented - event.time.time }
        /// Where the event's time came from (the receive time understates the latency).
        public var timeSource: InputTime.Source { event.time.source }
    }

    /// Called once per event, in the order they were received, when the frame that first showed it
    /// is known.
    public var onShown: ((Shown) -> Void)?
    /// Events dropped unreported because more than `capacity` were waiting.
    public private(set) var droppedCount = 0

    private struct Waiting {
        var event: InputEvent
        var sequence: UInt64
    }
    private struct Drawn {
        var refreshIndex: UInt64
        var targetTimestamp: MonotonicInstant
        /// The newest event received before it was drawn.
        var lastSequence: UInt64
    }

    private let capacity: Int
    private var events: ContiguousArray<Waiting?>
    private var frames: ContiguousArray<Drawn?>
    /// Ring positions: events[eventStart ..< eventStart + eventCount] (mod capacity).
    private var eventStart = 0
    private var eventCount = 0
    private var frameStart = 0
    private var frameCount = 0
    private var nextSequence: UInt64 = 1

    /// Room for `capacity` waiting events and as many frames drawn and not yet reported.
    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
        events = ContiguousArray(repeating: nil, count: self.capacity)
        frames = ContiguousArray(repeating: nil, count: self.capacity)
    }

    /// Events received and not yet shown (or not yet known to be).
    public var waitingCount: Int { eventCount }

    /// The program received `event` (and acted on it): the next frame drawn includes it.
    public func received(_ event: InputEvent) {
        if eventCount == capacity {
            events[eventStart] = nil
            eventStart = (eventStart + 1) % capacity
            eventCount -= 1
            droppedCount += 1
        }
        events[(eventStart + eventCount) % capacity] = Waiting(event: event, sequence: nextSequence)
        eventCount += 1
        nextSequence += 1
    }

    /// The program drew `frame` (in its link callback), with every event received so far.
    public func drew(_ frame: DisplayFrame) {
        guard eventCount > 0 else { return }  // nothing waits: no frame to follow
        if frameCount == capacity {
            // The oldest frame's fate never came: a newer one covers its events.
            frames[frameStart] = nil
            frameStart = (frameStart + 1) % capacity
            frameCount -= 1
        }
        frames[(frameStart + frameCount) % capacity] = Drawn(
            refreshIndex: frame.refreshIndex, targetTimestamp: frame.targetTimestamp, lastSequence: nextSequence - 1)
        frameCount += 1
    }

    /// The source's word on a frame (`DisplayLink.presentationHandler`): when it was shown, the
    /// events it was the first to show are reported to ``onShown``; when it was discarded, its
    /// events wait for a later frame. Feedback on a frame not drawn through ``drew(_:)``, or
    /// whose time is implausible, changes nothing.
    public func presented(_ feedback: PresentationFeedback) {
        guard frameCount > 0 else { return }
        // The frame is among those waiting, which are in refresh order.
        var position = -1
        for k in 0..<frameCount where frames[(frameStart + k) % capacity]?.refreshIndex == feedback.refreshIndex {
            position = k
            break
        }
        guard position >= 0, let frame = frames[(frameStart + position) % capacity] else { return }
        guard case .presented(let time, _) = feedback.outcome, feedback.isTimePlausible else {
            if case .discarded = feedback.outcome { removeFrame(at: position) }
            return
        }
        // Frames drawn before this one whose feedback has not come (lost): this one is shown, so
        // it is the first shown of the events they held as well.
        for _ in 0...position {
            frames[frameStart] = nil
            frameStart = (frameStart + 1) % capacity
            frameCount -= 1
        }
        while eventCount > 0, let waiting = events[eventStart], waiting.sequence <= frame.lastSequence {
            events[eventStart] = nil
            eventStart = (eventStart + 1) % capacity
            eventCount -= 1
            onShown?(
                Shown(event: waiting.event, presented: time, refreshIndex: frame.refreshIndex, targetTimestamp: frame.targetTimestamp))
        }
    }

    /// Forgets the frame `position` places after the oldest waiting one (discarded: its events
    /// stay for the next frame).
    private func removeFrame(at position: Int) {
        var k = position
        while k + 1 < frameCount {
            frames[(frameStart + k) % capacity] = frames[(frameStart + k + 1) % capacity]
            k += 1
        }
        frames[(frameStart + frameCount - 1) % capacity] = nil
        frameCount -= 1
    }
}
