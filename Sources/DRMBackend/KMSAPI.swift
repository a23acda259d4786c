internal import CDRM
import Glibc
import KernelCall
import SystemPackage

/// Which KMS API a ``DRMDisplay`` drives the display with.
public enum KMSAPI: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Atomic modesetting when the driver offers it (`DRM_CLIENT_CAP_ATOMIC` accepted and the
    /// `TEST_ONLY` commit of the first frame passes), else legacy.
    case automatic
    /// Atomic modesetting only: an error if the driver has none or refuses the test commit.
    case atomic
    /// The legacy API (`drmModeSetCrtc`, `drmModePageFlip`), for drivers without atomic and for
    /// comparison.
    case legacy

    public var description: String { rawValue }
}

/// How a ``DRMDisplay`` paces its refreshes.
public enum KMSPacing: String, Sendable, Hashable, CustomStringConvertible {
    /// The kernel's vblank events (page-flip and queued vblank events): timestamps are hardware
    /// vblank times.
    case vblank
    /// A timer at the mode's exact period, for drivers without vblank events (virtual GPUs,
    /// firmware framebuffers, USB displays): timestamps come from the timer's schedule
    /// (provenance `timer-fallback`), at most one flip per period.
    case timer

    public var description: String { rawValue }
}

/// The CRTC, connector and mode a KMS API drives, on the device `fd`.
struct KMSTarget {
    let fd: Int32
    let crtcID: UInt32
    let connectorID: UInt32
    let modeInfo: drmModeModeInfo
    let modeName: String
}

/// The calls of one KMS API for one CRTC, connector and mode: validate, mode set, page flip and
/// restore. The display does everything else the same on both.
protocol KMSOutput: AnyObject {
    var target: KMSTarget { get }
    var api: KMSAPI { get }
    /// Checks, changing nothing, that the mode can be set with `fb` (format `format`, modifier
    /// `modifier`) on screen; a refusal names what was refused.
    func validate(fb: UInt32, format: UInt32, modifier: UInt64) throws(DRMError)
    /// Sets the mode with `fb` on screen (blocking).
    func setMode(fb: UInt32) throws(DRMError)
    /// Queues a page flip to `fb`, with a completion event carrying `userData` when `event`: nil,
    /// or the kernel's refusal. Allocation-free.
    func flip(fb: UInt32, event: Bool, userData: UnsafeMutableRawPointer) -> Errno?
    /// Puts back what the CRTC showed before; returns what was done, for the log.
    func restore(_ saved: drmModeCrtc) -> String
    /// Frees what the output holds in the kernel and in memory (before the device is closed).
    func release()
}

extension KMSOutput {
    var fd: Int32 { target.fd }
    var crtcID: UInt32 { target.crtcID }
    var connectorID: UInt32 { target.connectorID }
    var modeName: String { target.modeName }
}

/// The legacy KMS API: `drmModeSetCrtc` and `drmModePageFlip`.
final class LegacyKMS: KMSOutput {
    let target: KMSTarget

    init(_ target: KMSTarget) {
        self.target = target
    }

    var api: KMSAPI { .legacy }

    func validate(fb: UInt32, format: UInt32, modifier: UInt64) throws(DRMError) {}

    func setMode(fb: UInt32) throws(DRMError) {
        var connector = connectorID
        var modeInfo = target.modeInfo
        if let code = KernelCall.status({ drmModeSetCrtc(fd, crtcID, fb, 0, 0, &connector, 1, &modeInfo) }) {
            throw .kernel(operation: "drmModeSetCrtc(\(modeName))", errno: code)
        }
    }

    func flip(fb: UInt32, event: Bool, userData: UnsafeMutableRawPointer) -> Errno? {
        KernelCall.status { drmModePageFlip(fd, crtcID, fb, event ? UInt32(DRM_MODE_PAGE_FLIP_EVENT) : 0, userData) }
    }

    func restore(_ saved: drmModeCrtc) -> String {
        LegacyKMS.restore(fd: fd, connectorID: connectorID, saved)
    }

    /// `drmModeSetCrtc` back to the saved framebuffer and mode, or off.
    static func restore(fd: Int32, connectorID: UInt32, _ saved: drmModeCrtc) -> String {
        var connector = connectorID
        var savedMode = saved.mode
        if saved.mode_valid != 0 && saved.buffer_id != 0 {
            let refusal = KernelCall.status {
                drmModeSetCrtc(fd, saved.crtc_id, saved.buffer_id, saved.x, saved.y, &connector, 1, &savedMode)
            }
            return "CRTC \(saved.crtc_id) restored (legacy) to framebuffer \(saved.buffer_id) \(saved.mode.hdisplay)x\(saved.mode.vdisplay)"
                + (refusal.map { " failed: \($0)" } ?? "")
        }
        let refusal = KernelCall.status { drmModeSetCrtc(fd, saved.crtc_id, 0, 0, 0, nil, 0, nil) }
        return "CRTC \(saved.crtc_id) restored (legacy) to off (nothing was on it before)" + (refusal.map { " failed: \($0)" } ?? "")
    }

    func release() {}
}
