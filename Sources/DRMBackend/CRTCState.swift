import Glibc
internal import CDRM

/// The first CRTC's state as the kernel reports it, for checking what a display left on screen.
extension DRMDisplay {
    /// The current CRTC's framebuffer, mode validity and size (for checking the restore).
    /// Opening the device makes the opener master while no other program is: a program that
    /// opens it at the same moment cannot become master. To watch while a program starts, keep
    /// one descriptor that is not master and use ``crtcState(fd:)``.
    public static func crtcState(devicePath: String) -> (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? {
        let fd = open(devicePath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return crtcState(fd: fd)
    }

    /// The current CRTC's framebuffer, mode validity and size, read through `fd`.
    public nonisolated static func crtcState(fd: Int32) -> (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? {
        guard let resources = drmModeGetResources(fd) else { return nil }
        defer { drmModeFreeResources(resources) }
        guard resources.pointee.count_crtcs > 0, let crtc = drmModeGetCrtc(fd, resources.pointee.crtcs[0]) else { return nil }
        defer { drmModeFreeCrtc(crtc) }
        return (crtc.pointee.buffer_id, crtc.pointee.mode_valid != 0, Int(crtc.pointee.width), Int(crtc.pointee.height))
    }

    /// Gives up DRM master on `fd` if it holds it (a descriptor only for watching).
    public nonisolated static func dropMaster(fd: Int32) {
        if drmIsMaster(fd) != 0 { drmDropMaster(fd) }
    }
}
