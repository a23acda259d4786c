import DisplayLinkCore
import DisplaySurface
public import CDisplayLinkABI

// A surface of the library's own (a Wayland window, a KMS output, offscreen) with a GLES context
// the program draws into.

@_cdecl("dl_surface_options_init")
public func dl_surface_options_init(_ options: sending UnsafeMutablePointer<dl_surface_options>?) {
    guard let options else { return }
    var value = dl_surface_options()
    value.size = UInt32(MemoryLayout<dl_surface_options>.size)
    value.backend = 0
    value.width = 0
    value.height = 0
    value.latency = Int32(DL_LATENCY_THROUGHPUT.rawValue)
    value.fullscreen = false
    value.title = nil
    options.pointee = value
}

@_cdecl("dl_surface_source_create")
public func dl_surface_source_create(
    _ options: sending UnsafePointer<dl_surface_options>?, _ out: sending UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    entry { () throws(CFailure) in
        guard let out else { throw .invalidArgument("dl_surface_source_create: out is NULL") }
        out.pointee = nil
        var settings = DisplaySurface.Options()
        if let options {
            let given = options.pointee
            guard given.size >= UInt32(MemoryLayout<dl_surface_options>.size) else {
                throw .invalidArgument(
                    "dl_surface_source_create: options.size is \(given.size); fill the options with dl_surface_options_init")
            }
            let backends: [DisplaySurface.BackendChoice] = [.auto, .wayland, .drm, .offscreen]
            guard backends.indices.contains(Int(given.backend)) else {
                throw .invalidArgument(
                    "dl_surface_source_create: backend \(given.backend) is not 0 (auto), 1 (Wayland), 2 (DRM/KMS) or 3 (offscreen)")
            }
            settings.backend = backends[Int(given.backend)]
            guard given.width >= 0, given.height >= 0 else {
                throw .invalidArgument("dl_surface_source_create: width and height must not be negative (0: the default size)")
            }
            if given.width > 0 { settings.width = given.width }
            if given.height > 0 { settings.height = given.height }
            switch given.latency {
            case Int32(DL_LATENCY_THROUGHPUT.rawValue): settings.latency = .throughput
            case Int32(DL_LATENCY_LOW.rawValue): settings.latency = .lowLatency
            default: throw .invalidArgument("dl_surface_source_create: latency \(given.latency) is not a dl_latency")
            }
            settings.fullscreen = given.fullscreen
            if let title = given.title { settings.title = String(cString: title) }
        }
        let surface: DisplaySurface
        do { surface = try DisplaySurface(options: settings) } catch { throw .display("\(error)") }
        surface.releaseContext()
        let source = CSource(.surface(surface))
        surface.onError = { [weak source] failure in
            source?.failure = failure.description; CEventLoop.failed(failure.description)
        }
        return CSources.file(source, into: out)
    }
}

@_cdecl("dl_surface_begin_frame")
public func dl_surface_begin_frame(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        do { try CSources.table.object(handle).surface(for: "dl_surface_begin_frame").beginFrame() } catch let error as CFailure {
            throw error
        } catch {
            throw .display("dl_surface_begin_frame: \(error)")
        }
        return DL_OK.rawValue
    }
}

@_cdecl("dl_surface_present")
public func dl_surface_present(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        do { try CSources.table.object(handle).surface(for: "dl_surface_present").present() } catch let error as CFailure {
            throw error
        } catch {
            throw .display("dl_surface_present: \(error)")
        }
        return DL_OK.rawValue
    }
}

@_cdecl("dl_surface_get_size")
public func dl_surface_get_size(
    _ handle: sending OpaquePointer?, _ width: sending UnsafeMutablePointer<Int32>?, _ height: sending UnsafeMutablePointer<Int32>?
) -> Int32 {
    entry { () throws(CFailure) in
        let surface = try CSources.table.object(handle).surface(for: "dl_surface_get_size")
        guard let width, let height else { throw .invalidArgument("dl_surface_get_size: width or height is NULL") }
        width.pointee = surface.width
        height.pointee = surface.height
        return DL_OK.rawValue
    }
}

@_cdecl("dl_surface_get_gles_version")
public func dl_surface_get_gles_version(_ handle: sending OpaquePointer?, _ major: sending UnsafeMutablePointer<Int32>?) -> Int32 {
    entry { () throws(CFailure) in
        let surface = try CSources.table.object(handle).surface(for: "dl_surface_get_gles_version")
        guard let major else { throw .invalidArgument("dl_surface_get_gles_version: major is NULL") }
        major.pointee = surface.glesMajorVersion
        return DL_OK.rawValue
    }
}
