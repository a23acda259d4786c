import DisplayLinkCore
import DisplaySurface
import ForeignSources
public import CDisplayLinkABI

/// What a `dl_source *` stands for: a program's Wayland surface, a fed source, or a surface of
/// the library's own.
@MainActor
final class CSource {
    enum Kind {
        case wayland(ForeignWaylandSurface)
        case fed(FedFrameSource)
        case surface(DisplaySurface)
    }

    let kind: Kind
    /// The handle the program holds (set once filed).
    var handle: OpaquePointer?
    /// The display's failure, once it failed (reported once by `dl_dispatch`, then by every call).
    var failure: String? {
        didSet { if failure != nil { stopWatching() } }
    }
    /// The program display's socket the event loop watches for this source (-1: none).
    var watchedSocket: Int32 = -1

    init(_ kind: Kind) { self.kind = kind }

    /// The links' frame source.
    var frameSource: any FrameSource {
        switch kind {
        case .wayland(let source): source
        case .fed(let source): source
        case .surface(let surface): surface
        }
    }

    var dispatcher: RefreshDispatcher { frameSource.dispatcher }

    /// The program's Wayland surface, or the error naming what this source is instead.
    func wayland(for call: String) throws(CFailure) -> ForeignWaylandSurface {
        guard case .wayland(let source) = kind else {
            throw .unsupported("\(call) is for Wayland sources (dl_wayland_source_create); this is \(name)")
        }
        if let failure { throw .display(failure) }
        return source
    }

    func fed(for call: String) throws(CFailure) -> FedFrameSource {
        guard case .fed(let source) = kind else { throw .unsupported("\(call) is for fed sources (dl_fed_source_create); this is \(name)") }
        return source
    }

    func surface(for call: String) throws(CFailure) -> DisplaySurface {
        guard case .surface(let surface) = kind else {
            throw .unsupported("\(call) is for the library's surfaces (dl_surface_source_create); this is \(name)")
        }
        if let failure { throw .display(failure) }
        return surface
    }

    var name: String {
        switch kind {
        case .wayland: "a Wayland source"
        case .fed: "a fed source"
        case .surface: "a surface source"
        }
    }

    func stopWatching() {
        CEventLoop.unwatch(watchedSocket)
        watchedSocket = -1
    }

    /// Lets go of the display's parts now (the links are invalidated).
    func close() {
        switch kind {
        case .wayland(let source):
            stopWatching()
            source.close()
        case .fed(let source):
            source.dispatcher.invalidateAll()
        case .surface(let surface):
            surface.close()
        }
    }
}

/// Every live source.
@MainActor
enum CSources {
    static var table = HandleTable<CSource>(noun: "source")

    static func file(_ source: CSource, into out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        let handle = table.add(source)
        source.handle = handle
        out?.pointee = handle
        return DL_OK.rawValue
    }
}

private func latency(_ code: Int32) throws(CFailure) -> LatencyPolicy {
    switch code {
    case Int32(DL_LATENCY_THROUGHPUT.rawValue): return .throughput
    case Int32(DL_LATENCY_LOW.rawValue): return .lowLatency
    default: throw .invalidArgument("latency \(code) is not a dl_latency (DL_LATENCY_THROUGHPUT 0, DL_LATENCY_LOW 1)")
    }
}

// MARK: Wayland

@_cdecl("dl_wayland_options_init")
public func dl_wayland_options_init(_ options: sending UnsafeMutablePointer<dl_wayland_options>?) {
    guard let options else { return }
    var value = dl_wayland_options()
    value.size = UInt32(MemoryLayout<dl_wayland_options>.size)
    value.latency = Int32(DL_LATENCY_THROUGHPUT.rawValue)
    value.uses_fifo = false
    value.uses_commit_timing = false
    value.stall_timeout_ns = 500_000_000
    value.reply_timeout_ns = 30_000_000_000
    options.pointee = value
}

@_cdecl("dl_wayland_source_create")
public func dl_wayland_source_create(
    _ display: sending UnsafeMutableRawPointer?, _ surface: sending UnsafeMutableRawPointer?,
    _ options: sending UnsafePointer<dl_wayland_options>?, _ out: sending UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    entry { () throws(CFailure) in
        guard let out else { throw .invalidArgument("dl_wayland_source_create: out is NULL") }
        out.pointee = nil
        guard display != nil else { throw .invalidArgument("dl_wayland_source_create: wl_display is NULL") }
        guard surface != nil else { throw .invalidArgument("dl_wayland_source_create: wl_surface is NULL") }
        var settings = ForeignWaylandSurface.Options()
        if let options {
            guard options.pointee.size >= UInt32(MemoryLayout<dl_wayland_options>.size) else {
                throw .invalidArgument(
                    "dl_wayland_source_create: options.size is \(options.pointee.size); fill the options with dl_wayland_options_init")
            }
            let given = options.pointee
            settings.latency = try latency(given.latency)
            settings.usesFifo = given.uses_fifo
            settings.usesCommitTiming = given.uses_commit_timing
            guard given.stall_timeout_ns > 0, given.reply_timeout_ns > 0 else {
                throw .invalidArgument("dl_wayland_source_create: stall_timeout_ns and reply_timeout_ns must be greater than 0")
            }
            settings.stallTimeout = Nanoseconds(given.stall_timeout_ns)
            settings.replyTimeout = Nanoseconds(given.reply_timeout_ns)
        }
        let foreign: ForeignWaylandSurface
        do { foreign = try ForeignWaylandSurface(display: display, surface: surface, options: settings) } catch {
            throw .display("\(error)")
        }
        let source = CSource(.wayland(foreign))
        foreign.onError = { [weak source] failure in
            source?.failure = failure.description; CEventLoop.failed(failure.description)
        }
        foreign.onCommitHookMissing = {
            CEventLoop.warn(
                """
                no frame was committed through dl_source_will_commit in \
                \(ForeignWaylandSurface.missingCommitHookRefreshes) refreshes: the links tick on the predicted \
                vblanks (estimated timestamps). If the program draws, call dl_source_will_commit right before each call that \
                commits the surface (eglSwapBuffers, SDL_RenderPresent, SDL_GL_SwapWindow, vkQueuePresentKHR, wl_surface_commit)
                """)
        }
        source.watchedSocket = try CEventLoop.watch(foreign)
        return CSources.file(source, into: out)
    }
}

@_cdecl("dl_source_will_commit")
public func dl_source_will_commit(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        try CSources.table.object(handle).wayland(for: "dl_source_will_commit").willCommit()
        return DL_OK.rawValue
    }
}

@_cdecl("dl_source_set_suspended")
public func dl_source_set_suspended(_ handle: sending OpaquePointer?, _ suspended: Bool) -> Int32 {
    entry { () throws(CFailure) in
        try CSources.table.object(handle).wayland(for: "dl_source_set_suspended").isSuspended = suspended
        return DL_OK.rawValue
    }
}

// MARK: Fed

@_cdecl("dl_fed_source_create")
public func dl_fed_source_create(_ period: Int64, _ latencyCode: Int32, _ out: sending UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    entry { () throws(CFailure) in
        guard let out else { throw .invalidArgument("dl_fed_source_create: out is NULL") }
        out.pointee = nil
        let fed: FedFrameSource
        do { fed = try FedFrameSource(refreshPeriod: Nanoseconds(period), latency: try latency(latencyCode)) } catch let error
            as FedSourceError
        {
            throw .invalidArgument("dl_fed_source_create: \(error.description)")
        } catch let error as CFailure {
            throw error
        } catch {
            throw .invalidArgument("dl_fed_source_create: \(error)")
        }
        return CSources.file(CSource(.fed(fed)), into: out)
    }
}

@_cdecl("dl_source_will_submit")
public func dl_source_will_submit(_ handle: sending OpaquePointer?, _ time: Int64) -> Int32 {
    entry { () throws(CFailure) in
        let fed = try CSources.table.object(handle).fed(for: "dl_source_will_submit")
        guard time >= 0 else { throw .invalidArgument("dl_source_will_submit: time_ns \(time) is negative (0: now)") }
        let action = fed.willSubmit(at: time == 0 ? .now() : MonotonicInstant(nanoseconds: time))
        return action == .presentNow ? Int32(DL_SUBMIT_NOW.rawValue) : Int32(DL_SUBMIT_AFTER_PENDING.rawValue)
    }
}

@_cdecl("dl_source_presented")
public func dl_source_presented(_ handle: sending OpaquePointer?, _ time: Int64, _ sequence: UInt64) -> Int32 {
    entry { () throws(CFailure) in
        let fed = try CSources.table.object(handle).fed(for: "dl_source_presented")
        guard time > 0 else { throw .invalidArgument("dl_source_presented: time_ns \(time) is not a CLOCK_MONOTONIC time") }
        let before = CLinks.callbacksRun
        fed.presented(at: MonotonicInstant(nanoseconds: time), sequence: sequence == 0 ? nil : sequence)
        return Int32(clamping: CLinks.callbacksRun - before)
    }
}

// MARK: Destroying

@_cdecl("dl_source_destroy")
public func dl_source_destroy(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        let source = try CSources.table.object(handle)
        CSources.table.remove(handle)
        source.close()
        return DL_OK.rawValue
    }
}
