import Dispatch
import Glibc
internal import CWayland
internal import CWaylandClient

/// The event loop: reading the socket (from a dispatch read source, or a caller's own loop),
/// dispatching events, running the after-dispatch handlers, and flushing requests.
extension WaylandConnection {
    /// Run after every dispatch, so every frame: each closure in a struct, which holds it as it is
    /// (an array of bare closures holds them in a general form, and calling one then allocates a
    /// thunk in unoptimised builds).
    struct AfterDispatchHandler {
        let id: Int
        let run: () -> Void
    }

    // MARK: Handlers

    /// Runs `handler` after each batch of events is dispatched (frame sources deliver refreshes
    /// there, once the batch's presentation feedback has been read too).
    /// Returns the number that removes it (``removeAfterDispatchHandler(_:)``).
    @discardableResult
    func addAfterDispatchHandler(_ handler: @escaping () -> Void) -> Int {
        nextAfterDispatchID += 1
        afterDispatchHandlers.append(AfterDispatchHandler(id: nextAfterDispatchID, run: handler))
        return nextAfterDispatchID
    }

    /// How many handlers are registered (after-dispatch, error): for tests.
    var handlerCounts: (afterDispatch: Int, error: Int) { (afterDispatchHandlers.count, errorHandlers.entries.count) }

    func removeAfterDispatchHandler(_ id: Int) {
        afterDispatchHandlers.removeAll { $0.id == id }
    }

    // MARK: Reading

    func startEventLoop() {
        let source = DispatchSource.makeReadSource(fileDescriptor: wl_display_get_fd(display), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated { self?.socketReadable() }
        }
        readSource = source
        source.resume()
    }

    /// The connection's socket, for a run loop that polls it (``beginDirectReading()``).
    public var fileDescriptor: Int32 { wl_display_get_fd(display) }

    /// From here on the caller's loop polls ``fileDescriptor`` on this thread and calls
    /// ``readEvents()`` when it is readable (or hung up); the dispatch read source is suspended.
    public func beginDirectReading() {
        guard let readSource, !readSourceSuspended, error == nil else { return }
        readSource.suspend()
        readSourceSuspended = true
    }

    /// Gives the socket back to the dispatch read source.
    public func endDirectReading() {
        guard let readSource, readSourceSuspended else { return }
        readSourceSuspended = false
        readSource.resume()
    }

    /// Reads and dispatches what the socket holds (a loop's poll found it readable).
    public func readEvents() {
        socketReadable()
    }

    /// Before a caller's loop waits on ``fileDescriptor`` (after ``beginDirectReading()``):
    /// dispatches what is already queued for this connection, flushes, and prepares to read
    /// (`wl_display_prepare_read_queue`). While prepared, no other reader of the display (another
    /// thread of the program: SDL 3 reads from a cursor thread) can take this connection's events
    /// off the socket unseen: a read waits for ``finishWait(readable:)``, which must follow, on
    /// this thread, before any other call that may read the display. Returns false (nothing
    /// prepared) once the connection failed.
    public func prepareToWait() -> Bool {
        guard error == nil, !isPreparedToRead else { return isPreparedToRead }
        while prepareRead() != 0 {
            dispatchPending()
            guard error == nil else { return false }
        }
        isPreparedToRead = true
        flush()
        return true
    }

    /// After the wait ``prepareToWait()`` prepared: reads the socket when the wait found it
    /// `readable` (else gives the read up), then dispatches what came.
    public func finishWait(readable: Bool) {
        guard isPreparedToRead else { return }
        isPreparedToRead = false
        guard error == nil else {
            wl_display_cancel_read(display)
            return
        }
        if readable {
            guard wl_display_read_events(display) >= 0 else { return fail() }
        } else {
            wl_display_cancel_read(display)
        }
        dispatchPending()
    }

    private func socketReadable() {
        guard error == nil else { return }
        wakeupCount += 1
        // The read source reports edges: data and the compositor's EOF can arrive as one edge,
        // and libwayland reads one chunk per call. Keep reading while the socket is still
        // readable, or an EOF behind the last data would go unnoticed until the next event.
        // A loop reading directly polls level-triggered: what is left makes its next poll return
        // at once, so it reads one chunk a call and asks the socket nothing more (one system
        // call less on every wake-up).
        repeat {
            while prepareRead() != 0 {
                guard dispatchQueuePending() >= 0 else { return fail() }
            }
            // Flush what we queued before reading, as the protocol asks.
            _ = wl_display_flush(display)
            guard wl_display_read_events(display) >= 0 else { return fail() }
            dispatchPending()
        } while error == nil && !readSourceSuspended && socketStillReadable()
    }

    /// `wl_display_prepare_read` on this connection's queue (the default one, or a borrowed
    /// connection's own).
    func prepareRead() -> Int32 {
        if let queue { return wl_display_prepare_read_queue(display, queue) }
        return wl_display_prepare_read(display)
    }

    /// Whether this connection's events are being dispatched (a handler is running).
    package var isDispatching: Bool { dispatchDepth > 0 }

    /// `wl_display_dispatch_pending` on this connection's queue: the events already read for it.
    func dispatchQueuePending() -> Int32 {
        dispatchDepth += 1
        let result = queue.map { wl_display_dispatch_queue_pending(display, $0) } ?? wl_display_dispatch_pending(display)
        dispatchDepth -= 1
        if dispatchDepth == 0 && teardownDeferred {
            teardownDeferred = false
            close()
        }
        return result
    }

    private func socketStillReadable() -> Bool {
        var descriptor = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents != 0
    }

    // MARK: Dispatching and flushing

    /// Dispatches events already read (also those EGL read while swapping), runs the
    /// after-dispatch handlers, and flushes.
    ///
    /// Not re-entered: a handler that calls it (a frame source after its swap, where EGL may have
    /// read the next frame callback) has the events dispatched and the handlers run again after
    /// it returns, not inside it, so one refresh never starts inside another (and a compositor
    /// that answers at once cannot grow the stack frame by frame).
    public func dispatchPending() {
        guard error == nil else { return }
        guard dispatchQueuePending() >= 0 else { return fail() }
        // A handler may have closed the connection during the dispatch.
        guard error == nil else { return }
        if runningAfterDispatchHandlers {
            afterDispatchHandlersAgain = true
            flush()
            return
        }
        runningAfterDispatchHandlers = true
        defer { runningAfterDispatchHandlers = false }
        repeat {
            afterDispatchHandlersAgain = false
            for handler in afterDispatchHandlers { handler.run() }
        } while afterDispatchHandlersAgain && error == nil
        flush()
    }

    /// Sends queued requests; on `EAGAIN` waits for the socket to drain.
    func flush() {
        guard error == nil else { return }
        if wl_display_flush(display) < 0 {
            if errno == EAGAIN {
                armWriteSource()
            } else {
                fail()
            }
        }
    }

    private func armWriteSource() {
        guard writeSource == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: wl_display_get_fd(display), queue: .main)
        source.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                self.writeSource?.cancel()
                self.writeSource = nil
                self.flush()
            }
        }
        writeSource = source
        source.resume()
    }
}

// Measured: a loop that polls the socket directly and reads one chunk a call makes one system
// call less on every wake-up than one that asks the socket again, three a frame on Wayland.
