import Dispatch
import Glibc
import WaylandBackend
internal import CMainQueue

extension DisplaySurface {
    /// Bumped whenever a surface opens or closes: the main loop then polls the new set of sockets.
    static var surfacesGeneration = 0

    /// Runs the main queue on the main thread and reads every open Wayland surface's events there
    /// directly, for ever: use it instead of `dispatchMain()`.
    ///
    /// With `dispatchMain()` on Linux, a Wayland event wakes two threads: libdispatch's event
    /// thread sees the socket readable, then a pool thread runs the main queue. Here the main
    /// thread waits in `poll(2)` on the sockets and on the main queue's wake-up descriptor, and
    /// reads the events itself: one thread, one wake-up per batch of events, and the GL context
    /// is bound by the same thread every frame. Timers, signals and other dispatch sources on the
    /// main queue still fire (the queue is drained on this thread). DRM/KMS page-flip events keep
    /// their dispatch source. Surfaces opened later, from the loop, are read the same way.
    ///
    /// Call it from the main thread (the top level of `main.swift`). Where libdispatch gives no
    /// main queue descriptor, this is `dispatchMain()`.
    public static func runMainLoop() -> Never {
        guard let mainQueue = MainQueueDrain.resolve() else { dispatchMain() }
        MainActor.assumeIsolated { MainLoop.run(mainQueue) }
    }
}

/// The libdispatch entry points a run loop uses to serve the main queue on the main thread
/// (`_dispatch_get_main_queue_handle_4CF`, `_dispatch_main_queue_callback_4CF`, those
/// CoreFoundation's run loop uses): exported by the libdispatch Swift ships on Linux, shared and
/// static, but declared in no header it installs (`CMainQueue` declares them). The C library's
/// `dl_dispatch` serves the main queue with it too.
package struct MainQueueDrain: Sendable {
    /// An eventfd that becomes readable when the main queue has work.
    package let descriptor: Int32

    package static func resolve() -> MainQueueDrain? {
        let descriptor = _dispatch_get_main_queue_handle_4CF()
        guard descriptor >= 0 else { return nil }
        return MainQueueDrain(descriptor: descriptor)
    }

    /// Whether the calling thread is the process's main thread (the one that runs `main()`).
    package static var isMainThread: Bool { cmq_is_main_thread() != 0 }

    /// Clears the wake-up (an eventfd) and runs what the main queue holds.
    package func run() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
        _dispatch_main_queue_callback_4CF(nil)
    }
}

@MainActor
enum MainLoop {
    /// Whether the loop runs: every frame is then drawn on the main thread.
    static private(set) var isRunning = false

    static func run(_ mainQueue: MainQueueDrain) -> Never {
        isRunning = true
        var connections: [WaylandConnection] = []
        var descriptors = [pollfd](repeating: pollfd(), count: 8)
        var polled = [Int](repeating: 0, count: 8)  // the connection behind descriptors[k + 1]
        var generation = -1
        // The main queue may hold work already (set-up code's async blocks).
        mainQueue.run()
        while true {
            if generation != DisplaySurface.surfacesGeneration {
                generation = DisplaySurface.surfacesGeneration
                let current = DisplaySurface.openSurfaces.compactMap { ($0.surface?.surfaceBackend as? WaylandSurface)?.connection }
                for connection in current where !connections.contains(where: { $0 === connection }) {
                    connection.beginDirectReading()
                }
                connections = current
                if descriptors.count < connections.count + 1 {
                    descriptors = [pollfd](repeating: pollfd(), count: connections.count + 1)
                    polled = [Int](repeating: 0, count: connections.count + 1)
                }
            }
            descriptors[0] = pollfd(fd: mainQueue.descriptor, events: Int16(POLLIN), revents: 0)
            var count = 1
            for (index, connection) in connections.enumerated() where connection.error == nil {
                descriptors[count] = pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0)
                polled[count - 1] = index
                count += 1
            }
            guard poll(&descriptors, nfds_t(count), -1) > 0 else { continue }  // EINTR
            for k in 1..<count where descriptors[k].revents != 0 {
                // A handler may have closed surfaces (their sockets with them): poll the new set.
                guard generation == DisplaySurface.surfacesGeneration else { break }
                connections[polled[k - 1]].readEvents()
            }
            if descriptors[0].revents != 0 { mainQueue.run() }
        }
    }
}
