import Dispatch
import Glibc
import WaylandBackend

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
    /// Call it from the main thread (the top level of `main.swift`). Where libdispatch does not
    /// export the entry points that let a thread serve its main queue (those CoreFoundation's run
    /// loop uses), this is `dispatchMain()`.
    public static func runMainLoop() -> Never {
        guard let mainQueue = MainQueueDrain.resolve() else { dispatchMain() }
        MainActor.assumeIsolated { MainLoop.run(mainQueue) }
    }
}

/// The libdispatch entry points a run loop uses to serve the main queue on the main thread
/// (`_dispatch_get_main_queue_handle_4CF`, `_dispatch_main_queue_callback_4CF`), looked up at run
/// time: exported by the libdispatch Swift ships on Linux, but not declared in its headers.
struct MainQueueDrain {
    typealias Handle = @convention(c) () -> Int32
    typealias Drain = @convention(c) (UnsafeMutableRawPointer?) -> Void
    let descriptor: Int32
    let drain: Drain

    static func resolve() -> MainQueueDrain? {
        guard let program = dlopen(nil, RTLD_NOW),
            let handle = dlsym(program, "_dispatch_get_main_queue_handle_4CF"),
            let drain = dlsym(program, "_dispatch_main_queue_callback_4CF")
        else { return nil }
        let descriptor = unsafeBitCast(handle, to: Handle.self)()
        guard descriptor >= 0 else { return nil }
        return MainQueueDrain(descriptor: descriptor, drain: unsafeBitCast(drain, to: Drain.self))
    }

    /// Clears the wake-up (an eventfd) and runs what the main queue holds.
    func run() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
        drain(nil)
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
