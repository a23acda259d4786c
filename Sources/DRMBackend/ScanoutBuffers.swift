import KernelCall
internal import CDRM
internal import CGBM

/// A buffer object locked for scan-out with its framebuffer.
struct ScanoutBuffer {
    let bo: OpaquePointer
    let fb: UInt32
    let modifier: UInt64
}

/// The GBM surface's buffers on their way to the screen: each buffer object's framebuffer is made
/// the first time it is scanned out and lives and dies with it (removed when GBM frees the buffer,
/// which EGL's surface does as it goes), and one rotation moves them along: the frame on screen,
/// the one flipping to it, and one held until that flip completes.
@MainActor
final class ScanoutBuffers {
    nonisolated static let xrgb8888: UInt32 = 0x3432_5258  // 'X' 'R' '2' '4'

    let gbmDevice: OpaquePointer
    let gbmSurface: OpaquePointer
    private let fd: Int32
    private let width: UInt32, height: UInt32
    /// Whether each buffer stays mapped for its lifetime (``DRMQuirks/softwareRendering``).
    var keepsBuffersMapped = false
    private(set) var shown: ScanoutBuffer?
    private(set) var flipping: ScanoutBuffer?
    private(set) var held: ScanoutBuffer?
    /// A framebuffer to show again after a pause when no frame is on screen.
    private var anyFramebuffer: UInt32?

    init(fd: Int32, path: String, width: Int, height: Int) throws(DRMError) {
        guard let device = gbm_create_device(fd) else { throw .graphics("gbm_create_device failed on \(path)") }
        guard
            let surface = gbm_surface_create(
                device, UInt32(width), UInt32(height), ScanoutBuffers.xrgb8888,
                UInt32(GBM_BO_USE_SCANOUT.rawValue | GBM_BO_USE_RENDERING.rawValue))
        else {
            gbm_device_destroy(device)
            throw .graphics("gbm_surface_create(\(width)×\(height), XRGB8888) failed")
        }
        self.fd = fd
        self.width = UInt32(width)
        self.height = UInt32(height)
        gbmDevice = device
        gbmSurface = surface
    }

    /// Destroys the GBM surface and device: after EGL (which frees the buffers, and with them
    /// their framebuffers), before the descriptor is closed.
    func destroy() {
        gbm_surface_destroy(gbmSurface)
        gbm_device_destroy(gbmDevice)
    }

    var hasFreeBuffer: Bool { gbm_surface_has_free_buffers(gbmSurface) != 0 }

    /// The buffer EGL just swapped to the front, locked.
    func lockFront() throws(DRMError) -> OpaquePointer {
        guard let bo = gbm_surface_lock_front_buffer(gbmSurface) else { throw .graphics("gbm_surface_lock_front_buffer failed") }
        return bo
    }

    /// Gives a locked buffer back to the GBM surface.
    func release(_ bo: OpaquePointer) { gbm_surface_release_buffer(gbmSurface, bo) }

    /// `bo` with its framebuffer, made on its first use; on failure `bo` is released.
    func scanoutBuffer(for bo: OpaquePointer) throws(DRMError) -> ScanoutBuffer {
        if let data = gbm_bo_get_user_data(bo) {
            let known = Unmanaged<Framebuffer>.fromOpaque(data).takeUnretainedValue()
            return ScanoutBuffer(bo: bo, fb: known.id, modifier: known.modifier)
        }
        let framebuffer: Framebuffer
        do { framebuffer = try Framebuffer(bo: bo, fd: fd, width: width, height: height, keepMapped: keepsBuffersMapped) } catch {
            release(bo)
            throw error
        }
        gbm_bo_set_user_data(bo, Unmanaged.passRetained(framebuffer).toOpaque(), ScanoutBuffers.destroyFramebuffer)
        if anyFramebuffer == nil { anyFramebuffer = framebuffer.id }
        return ScanoutBuffer(bo: bo, fb: framebuffer.id, modifier: framebuffer.modifier)
    }

    private static let destroyFramebuffer: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { bo, data in
        guard let bo, let data else { return }
        Unmanaged<Framebuffer>.fromOpaque(data).takeRetainedValue().remove(from: bo)
    }

    // MARK: The rotation

    /// The mode was set with `buffer` on screen.
    func modeSet(with buffer: ScanoutBuffer) { shown = buffer }

    /// A page flip to `buffer` is queued.
    func flipQueued(_ buffer: ScanoutBuffer) { flipping = buffer }

    /// The queued flip completed: its buffer is on screen, and the one shown before goes back.
    func flipCompleted() {
        if let shown { release(shown.bo) }
        shown = flipping
        flipping = nil
    }

    /// Keeps `buffer` until the pending flip completes; an older held one goes back. Returns
    /// whether there was one.
    func hold(_ buffer: ScanoutBuffer) -> Bool {
        let stale = held
        if let stale { release(stale.bo) }
        held = buffer
        return stale != nil
    }

    /// The held buffer, no longer held.
    func takeHeld() -> ScanoutBuffer? {
        defer { held = nil }
        return held
    }

    /// Gives the held buffer back, if any.
    func dropHeld() {
        if let held { release(held.bo) }
        held = nil
    }

    /// The framebuffer to set the mode with again after a pause: the frame on screen.
    var framebufferToShowAgain: UInt32 { shown?.fb ?? anyFramebuffer ?? 0 }
}

/// A framebuffer registered for one buffer object; removed (and unmapped) when GBM frees it.
private final class Framebuffer {
    let id: UInt32
    let modifier: UInt64
    private let fd: Int32
    private let mapping: UnsafeMutableRawPointer?

    static let modInvalid: UInt64 = 0x00FF_FFFF_FFFF_FFFF

    init(bo: OpaquePointer, fd: Int32, width: UInt32, height: UInt32, keepMapped: Bool) throws(DRMError) {
        self.fd = fd
        modifier = gbm_bo_get_modifier(bo)
        var handles: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        var modifiers: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let planes = max(1, min(4, Int(gbm_bo_get_plane_count(bo))))
        let modifier = self.modifier
        withUnsafeMutableBytes(of: &handles) { h in
            withUnsafeMutableBytes(of: &pitches) { p in
                withUnsafeMutableBytes(of: &offsets) { o in
                    withUnsafeMutableBytes(of: &modifiers) { m in
                        for plane in 0..<planes {
                            h.storeBytes(of: gbm_bo_get_handle_for_plane(bo, Int32(plane)).u32, toByteOffset: plane * 4, as: UInt32.self)
                            p.storeBytes(of: gbm_bo_get_stride_for_plane(bo, Int32(plane)), toByteOffset: plane * 4, as: UInt32.self)
                            o.storeBytes(of: gbm_bo_get_offset(bo, Int32(plane)), toByteOffset: plane * 4, as: UInt32.self)
                            m.storeBytes(of: modifier, toByteOffset: plane * 8, as: UInt64.self)
                        }
                    }
                }
            }
        }
        var fb: UInt32 = 0
        // Modifiers only when the buffer has a real one: DRM_FORMAT_MOD_INVALID with
        // DRM_MODE_FB_MODIFIERS is what makes vkms reject kmscube's buffers.
        let withModifiers = modifier != Framebuffer.modInvalid
        let format = ScanoutBuffers.xrgb8888
        let status = KernelCall.status {
            withUnsafePointer(to: &handles) { hp in
                withUnsafePointer(to: &pitches) { pp in
                    withUnsafePointer(to: &offsets) { op in
                        withUnsafePointer(to: &modifiers) { mp in
                            let h = UnsafeRawPointer(hp).assumingMemoryBound(to: UInt32.self)
                            let p = UnsafeRawPointer(pp).assumingMemoryBound(to: UInt32.self)
                            let o = UnsafeRawPointer(op).assumingMemoryBound(to: UInt32.self)
                            return withModifiers
                                ? drmModeAddFB2WithModifiers(
                                    fd, width, height, format, h, p, o, UnsafeRawPointer(mp).assumingMemoryBound(to: UInt64.self),
                                    &fb, UInt32(DRM_MODE_FB_MODIFIERS))
                                : drmModeAddFB2(fd, width, height, format, h, p, o, &fb, 0)
                        }
                    }
                }
            }
        }
        if let status { throw .kernel(operation: "drmModeAddFB2", errno: status) }
        id = fb
        mapping = keepMapped ? Framebuffer.holdMapping(bo, width: width, height: height) : nil
    }

    func remove(from bo: OpaquePointer) {
        if let mapping { gbm_bo_unmap(bo, mapping) }
        drmModeRmFB(fd, id)
    }

    /// Maps a buffer for its lifetime (``DRMQuirks/softwareRendering``): an open mapping keeps its
    /// pages in place between frames. Only for software drivers: a GPU driver would answer
    /// `gbm_bo_map` with a staging copy. Failure only costs the speed-up.
    private static func holdMapping(_ bo: OpaquePointer, width: UInt32, height: UInt32) -> UnsafeMutableRawPointer? {
        var stride: UInt32 = 0
        var mapping: UnsafeMutableRawPointer?
        guard gbm_bo_map(bo, 0, 0, width, height, UInt32(GBM_BO_TRANSFER_READ.rawValue), &stride, &mapping) != nil else {
            return nil
        }
        return mapping
    }
}
