import DRMBackend
import Glibc

/// Reads the first CRTC's state through one descriptor that is never DRM master, so watching the
/// display never keeps a program that starts meanwhile from becoming master (opening the device
/// anew for each look would: the opener is master while nobody else is).
final class CRTCWatcher {
    private let fd: Int32

    /// Nil if the device cannot be opened.
    init?(devicePath: String = "/dev/dri/card0") {
        fd = open(devicePath, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        DRMDisplay.dropMaster(fd: fd)
    }

    deinit { close(fd) }

    /// The current CRTC's framebuffer, mode validity and size.
    var state: (buffer: UInt32, modeValid: Bool, width: Int, height: Int)? { DRMDisplay.crtcState(fd: fd) }
}
