import DisplayLinkCore
import FrameSchedulers
internal import CWayland
internal import CWaylandClient

/// Frame callbacks and presentation feedback: the requests, the events that answer them, and
/// the listeners that bring those events to the main actor.
extension WaylandFrameSource {
    // MARK: Requests

    func requestFrameCallback() {
        // A callback still outstanding was given up as lost by the scheduler: it no longer counts.
        if let lost = frameCallback { wl_callback_destroy(lost) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let callback = wl_surface_frame(paced.frameProxy)
        wl_callback_add_listener(callback, WaylandFrameSource.callbackListener, me)
        frameCallback = callback
    }

    func requestFeedback(slot: Int) {
        guard let presentation = connection.presentation, feedbackProxies.indices.contains(slot) else { return }
        // A slot still holding a proxy was given up by the scheduler (that feedback never came).
        if let stale = feedbackProxies[slot] {
            wp_presentation_feedback_destroy(stale)
            lostFeedbackCount += 1
            // The first loss, then every 1000th: a compositor that never answers does not log per frame.
            if lostFeedbackCount == 1 || lostFeedbackCount % 1000 == 0 {
                WaylandFrameSource.log.debug(
                    """
                    presentation feedback lost: slot \(slot) reused (\(lostFeedbackCount) lost so far); \
                    those frames' times are estimates
                    """)
            }
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let feedback = wp_presentation_feedback(presentation, paced.frameProxy)
        wp_presentation_feedback_add_listener(feedback, WaylandFrameSource.feedbackListener, me)
        feedbackProxies[slot] = feedback
    }

    // MARK: Events

    private func frameDone(_ callback: OpaquePointer?) {
        wl_callback_destroy(callback)
        // Only the callback asked for last counts (an earlier one was given up as lost).
        guard callback == frameCallback else { return }
        frameCallback = nil
        // Handled after the whole batch: presentation feedback in the same batch counts.
        scheduler.frameCallbackDone(at: MonotonicInstant.now())
    }

    private func presented(
        _ proxy: OpaquePointer?, seconds: UInt64, nanoseconds: UInt32,
        refresh: UInt32, sequence: UInt64, flags: UInt32
    ) {
        guard let slot = takeProxy(proxy) else { return }
        // The outputs the frame was shown on (the program's surface learns its outputs so),
        // before the presentation is learned from: on a new output the rhythm starts afresh.
        paced.feedbackPresented()
        let now = MonotonicInstant.now()
        if clockDomain != .monotonic, clockOffset.isStale(at: now) {
            clockOffset = PresentationClock.offset(for: clockDomain)
        }
        let time = clockOffset.monotonic(fromSeconds: seconds, nanoseconds: nanoseconds)
        guard
            let feedback = scheduler.presented(
                slot: slot, at: time, receivedAt: now, sequence: sequence,
                advertisedRefresh: Nanoseconds(Int64(refresh)),
                flags: PresentationFlags(rawValue: flags & 0xF))
        else { return }
        dispatcher.deliver(feedback)
    }

    private func feedbackNamed(_ proxy: OpaquePointer?) {
        // The library's window knows its outputs from wl_surface.enter and leave.
        guard !paced.commitsItself, let output = connection.output(for: proxy) else { return }
        paced.feedbackNamed(output)
    }

    private func discarded(_ proxy: OpaquePointer?) {
        guard let slot = takeProxy(proxy), let feedback = scheduler.discarded(slot: slot) else { return }
        dispatcher.deliver(feedback)
    }

    /// Destroys a feedback proxy and returns its slot.
    private func takeProxy(_ proxy: OpaquePointer?) -> Int? {
        wp_presentation_feedback_destroy(proxy)
        guard let slot = feedbackProxies.firstIndex(where: { $0 == proxy }) else { return nil }
        feedbackProxies[slot] = nil
        return slot
    }

    // MARK: Listener trampolines

    private nonisolated static func from(_ data: UnsafeMutableRawPointer?) -> WaylandFrameSource {
        Unmanaged<WaylandFrameSource>.fromOpaque(data!).takeUnretainedValue()
    }

    // Every frame passes through these two: `onMainActor` rather than `MainActor.assumeIsolated`,
    // which allocates on every call. They run inside the connection's
    // dispatch, which it makes on the main actor.
    private nonisolated(unsafe) static let callbackListener = WaylandListeners.make(
        wl_callback_listener(
            done: { data, callback, _ in
                // The `ms` argument is deliberately ignored: see the type's notes.
                onMainActor((WaylandFrameSource.from(data), callback)) { arguments in
                    arguments.0.frameDone(arguments.1)
                }
            }
        ))

    private struct Presented {
        var source: WaylandFrameSource
        var feedback: OpaquePointer?
        var seconds: UInt64
        var nanoseconds: UInt32
        var refresh: UInt32
        var sequence: UInt64
        var flags: UInt32
    }

    private nonisolated(unsafe) static let feedbackListener = WaylandListeners.make(
        wp_presentation_feedback_listener(
            sync_output: { data, _, output in
                onMainActor((WaylandFrameSource.from(data), output)) { arguments in
                    arguments.0.feedbackNamed(arguments.1)
                }
            },
            presented: { data, feedback, secondsHigh, secondsLow, nanoseconds, refresh, sequenceHigh, sequenceLow, flags in
                let presented = Presented(
                    source: WaylandFrameSource.from(data), feedback: feedback,
                    seconds: UInt64(secondsHigh) << 32 | UInt64(secondsLow), nanoseconds: nanoseconds, refresh: refresh,
                    sequence: UInt64(sequenceHigh) << 32 | UInt64(sequenceLow), flags: flags)
                onMainActor(presented) { p in
                    p.source.presented(
                        p.feedback, seconds: p.seconds, nanoseconds: p.nanoseconds,
                        refresh: p.refresh, sequence: p.sequence, flags: p.flags)
                }
            },
            discarded: { data, feedback in
                onMainActor((WaylandFrameSource.from(data), feedback)) { arguments in
                    arguments.0.discarded(arguments.1)
                }
            }
        ))
}
