import DisplayLinkCore
import Glibc
internal import CWayland
internal import CWaylandClient

/// Round trips (`wl_display.sync`): with a time limit while connecting or opening a window, and
/// asynchronous once the event loop runs.
extension WaylandConnection {
    /// How a roundtrip with a time limit ended.
    enum RoundtripOutcome {
        case done, failed, timedOut
    }

    /// The error for a compositor that let ``Options/replyTimeout`` pass without a reply.
    var notResponding: WaylandError {
        .notResponding(socket: socketName, seconds: Double(options.replyTimeout.value) / 1e9)
    }

    /// `wl_display_roundtrip` with ``Options/replyTimeout`` as its limit, before the event loop
    /// reads the socket (connecting, opening a window): sends a `wl_display.sync` and reads and
    /// dispatches events until its `done`, the connection fails or the time is up.
    func roundtrip() -> RoundtripOutcome {
        let deadline = MonotonicInstant.now() + options.replyTimeout
        let replied = RoundtripFlag()
        let box = Unmanaged.passRetained(SyncRequest { replied.value = true }).toOpaque()
        guard let callback = wl_display_sync(displayProxy) else {
            Unmanaged<SyncRequest>.fromOpaque(box).release()
            return .failed
        }
        wl_callback_add_listener(callback, WaylandListeners.sync, box)
        let outcome = awaitReply(replied, until: deadline)
        if outcome != .done {
            // No `done` will be dispatched for it any more: the request is freed here.
            wl_callback_destroy(callback)
            Unmanaged<SyncRequest>.fromOpaque(box).release()
        }
        return outcome
    }

    private func awaitReply(_ replied: RoundtripFlag, until deadline: MonotonicInstant) -> RoundtripOutcome {
        while !replied.value {
            if prepareRead() != 0 {
                guard dispatchQueuePending() >= 0 else { return .failed }
                continue
            }
            _ = wl_display_flush(display)
            let remaining = (deadline - MonotonicInstant.now()).value
            guard remaining > 0 else {
                wl_display_cancel_read(display)
                return .timedOut
            }
            var descriptor = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: (remaining + 999_999) / 1_000_000)
            let ready = poll(&descriptor, 1, milliseconds)
            guard ready > 0 else {
                wl_display_cancel_read(display)
                if ready == 0 || errno == EINTR { continue }  // the deadline is checked above
                return .failed
            }
            guard wl_display_read_events(display) >= 0 else { return .failed }
            guard dispatchQueuePending() >= 0 else { return .failed }
        }
        return .done
    }

    /// Asks the compositor for a round trip (`wl_display.sync`); `done` runs on the main actor when
    /// its answer is dispatched. By then the compositor has handled every request sent before, and
    /// every event those requests caused has been dispatched (tests use it to wait for quiet
    /// without sleeping). Never runs if the connection fails first.
    public func sync(_ done: @escaping @MainActor () -> Void) {
        guard error == nil, let callback = wl_display_sync(displayProxy) else { return }
        let request = SyncRequest(done)
        let box = Unmanaged.passRetained(request)
        request.connection = self
        pendingSyncs[ObjectIdentifier(request)] = (callback, box)
        wl_callback_add_listener(callback, WaylandListeners.sync, box.toOpaque())
        flush()
    }
}

/// Whether a roundtrip's `done` came.
@MainActor
final class RoundtripFlag {
    var value = false
}

/// The closure of one ``WaylandConnection/sync(_:)`` or ``WaylandConnection/roundtrip()``,
/// retained until its answer arrives.
final class SyncRequest {
    let done: @MainActor () -> Void
    /// The connection that tracks it (``WaylandConnection/sync(_:)``; nil for a roundtrip's).
    weak var connection: WaylandConnection?
    init(_ done: @escaping @MainActor () -> Void) { self.done = done }
}
