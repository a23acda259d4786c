import Dispatch
import DisplayLinkCore
public import CDisplayLinkABI

public typealias CFrameCallback = @convention(c) (OpaquePointer?, UnsafePointer<dl_frame>?, UnsafeMutableRawPointer?) -> Void
public typealias CPresentationCallback = @convention(c) (OpaquePointer?, UnsafePointer<dl_presentation>?, UnsafeMutableRawPointer?) -> Void

/// What a `dl_link *` stands for: a ``DisplayLink`` whose target calls the program's function.
@MainActor
final class CLink {
    var link: DisplayLink?
    var handle: OpaquePointer?
    let callback: CFrameCallback
    let userData: UnsafeMutableRawPointer?
    var presentationCallback: CPresentationCallback?
    var presentationUserData: UnsafeMutableRawPointer?

    init(callback: @escaping CFrameCallback, userData: UnsafeMutableRawPointer?) {
        self.callback = callback
        self.userData = userData
    }

    func start(on source: some FrameSource) {
        link = DisplayLink(source: source, target: self) { me, link in me.fire(link.frame) }
    }

    private func fire(_ frame: DisplayFrame) {
        CLinks.callbacksRun &+= 1
        var value = CFrames.make(frame)
        callback(handle, &value, userData)
    }

    func presentationReported(_ feedback: PresentationFeedback) {
        guard let presentationCallback else { return }
        var value = dl_presentation()
        value.refresh_index = feedback.refreshIndex
        switch feedback.outcome {
        case .presented(let time, let sequence):
            value.presented = 1
            value.presented_ns = time.nanoseconds
            value.sequence = sequence ?? 0
        case .discarded:
            value.presented = 0
        }
        value.target_timestamp_ns = feedback.targetTimestamp?.nanoseconds ?? 0
        value.flags = feedback.flags?.rawValue ?? 0
        presentationCallback(handle, &value, presentationUserData)
    }
}

/// Every live link.
@MainActor
enum CLinks {
    static var table = HandleTable<CLink>(noun: "link")
    /// Callbacks run so far (`dl_dispatch` returns how many ran in it).
    static var callbacksRun: UInt64 = 0

    /// The link of `handle`, still calling back.
    static func valid(_ handle: OpaquePointer?, for call: String) throws(CFailure) -> DisplayLink {
        let entry = try table.object(handle)
        guard let link = entry.link, link.isValid else {
            throw .invalidated("\(call): the link was invalidated (dl_link_invalidate, or its source was destroyed or failed)")
        }
        return link
    }
}

@_cdecl("dl_link_create")
public func dl_link_create(
    _ sourceHandle: sending OpaquePointer?, _ callback: sending CFrameCallback?, _ userData: sending UnsafeMutableRawPointer?,
    _ out: sending UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    entry { () throws(CFailure) in
        guard let out else { throw .invalidArgument("dl_link_create: out is NULL") }
        out.pointee = nil
        let source = try CSources.table.object(sourceHandle)
        guard let callback else { throw .invalidArgument("dl_link_create: callback is NULL") }
        if let failure = source.failure { throw .display(failure) }
        let entry = CLink(callback: callback, userData: userData)
        let handle = CLinks.table.add(entry)
        entry.handle = handle
        entry.start(on: source.frameSource)
        out.pointee = handle
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_set_paused")
public func dl_link_set_paused(_ handle: sending OpaquePointer?, _ paused: Bool) -> Int32 {
    entry { () throws(CFailure) in
        try CLinks.valid(handle, for: "dl_link_set_paused").isPaused = paused
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_is_paused")
public func dl_link_is_paused(_ handle: sending OpaquePointer?, _ paused: sending UnsafeMutablePointer<Bool>?) -> Int32 {
    entry { () throws(CFailure) in
        let entry = try CLinks.table.object(handle)
        guard let paused else { throw .invalidArgument("dl_link_is_paused: paused is NULL") }
        paused.pointee = entry.link?.isPaused ?? false
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_set_preferred_frames_per_second")
public func dl_link_set_preferred_frames_per_second(_ handle: sending OpaquePointer?, _ rate: Int32) -> Int32 {
    entry { () throws(CFailure) in
        guard rate >= 0 else {
            throw .invalidArgument("dl_link_set_preferred_frames_per_second: \(rate) is negative (0: the display's rate)")
        }
        try CLinks.valid(handle, for: "dl_link_set_preferred_frames_per_second").preferredFramesPerSecond = Int(rate)
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_set_presentation_callback")
public func dl_link_set_presentation_callback(
    _ handle: sending OpaquePointer?, _ callback: sending CPresentationCallback?, _ userData: sending UnsafeMutableRawPointer?
) -> Int32 {
    entry { () throws(CFailure) in
        let link = try CLinks.valid(handle, for: "dl_link_set_presentation_callback")
        let entry = try CLinks.table.object(handle)
        entry.presentationCallback = callback
        entry.presentationUserData = userData
        link.presentationHandler = callback == nil ? nil : { [weak entry] feedback in entry?.presentationReported(feedback) }
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_get_frame")
public func dl_link_get_frame(_ handle: sending OpaquePointer?, _ frame: sending UnsafeMutablePointer<dl_frame>?) -> Int32 {
    entry { () throws(CFailure) in
        let entry = try CLinks.table.object(handle)
        guard let frame else { throw .invalidArgument("dl_link_get_frame: frame is NULL") }
        frame.pointee = entry.link.map { CFrames.make($0.frame) } ?? dl_frame()
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_invalidate")
public func dl_link_invalidate(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        try CLinks.table.object(handle).link?.invalidate()
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_is_valid")
public func dl_link_is_valid(_ handle: sending OpaquePointer?, _ valid: sending UnsafeMutablePointer<Bool>?) -> Int32 {
    entry { () throws(CFailure) in
        let entry = try CLinks.table.object(handle)
        guard let valid else { throw .invalidArgument("dl_link_is_valid: valid is NULL") }
        valid.pointee = entry.link?.isValid ?? false
        return DL_OK.rawValue
    }
}

@_cdecl("dl_link_destroy")
public func dl_link_destroy(_ handle: sending OpaquePointer?) -> Int32 {
    entry { () throws(CFailure) in
        let entry = try CLinks.table.object(handle)
        CLinks.table.remove(handle)
        entry.link?.invalidate()
        // Released at the next turn of the main queue: this may run inside the link's own callback.
        let held = entry
        DispatchQueue.main.async { withExtendedLifetime(held) {} }
        return DL_OK.rawValue
    }
}
