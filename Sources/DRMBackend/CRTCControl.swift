import DisplayLinkCore
import Glibc
import KernelCall
import SystemPackage
internal import CDRM

/// The kernel commands for the one CRTC a display drives, through the KMS API in use: the mode
/// set (the first one validated, atomic falling back to legacy under `.automatic`), page flips,
/// vblank reads and queued vblank events, and the restore of what was there before.
@MainActor
final class CRTCControl {
    private let target: KMSTarget
    var fd: Int32 { target.fd }
    var crtcID: UInt32 { target.crtcID }
    private let requestedAPI: KMSAPI
    private(set) var output: any KMSOutput
    /// Atomic was wanted (`.automatic`) but the driver offers or accepts only legacy.
    private(set) var fellBackToLegacy = false
    private var validated = false
    private let saved: UnsafeMutablePointer<drmModeCrtc>?

    init(device: DRMDevice, selection: OutputSelection, kmsAPI: KMSAPI) throws(DRMError) {
        let target = KMSTarget(
            fd: device.fd, crtcID: selection.crtcID, connectorID: selection.connectorID, modeInfo: selection.modeInfo,
            modeName: "\(selection.mode)")
        self.target = target
        requestedAPI = kmsAPI
        if kmsAPI == .atomic && !device.atomic { throw .atomicUnavailable(path: device.path, driver: device.driverName) }
        let legacy = LegacyKMS(target)
        if device.atomic, let plane = selection.plane {
            do {
                output = try AtomicKMS(target, plane: plane, alternativeMode: selection.alternativeMode)
            } catch {
                if kmsAPI == .atomic { throw error }
                DRMDisplay.log.debug("atomic modesetting unusable (\(error)); legacy KMS")
                output = legacy
                fellBackToLegacy = true
            }
        } else {
            if kmsAPI == .atomic { throw .atomicUnavailable(path: device.path, driver: device.driverName) }
            output = legacy
            fellBackToLegacy = kmsAPI == .automatic
        }
        saved = drmModeGetCrtc(target.fd, target.crtcID)
    }

    isolated deinit {
        if let saved { drmModeFreeCrtc(saved) }
    }

    var api: KMSAPI { output.api }

    /// Sets the mode with `buffer` on screen. The first time it is validated: atomic with a
    /// `TEST_ONLY` commit, whose refusal under `.automatic` means legacy from then on.
    func setMode(_ buffer: ScanoutBuffer) throws(DRMError) {
        if !validated {
            validated = true
            do {
                try output.validate(fb: buffer.fb, format: ScanoutBuffers.xrgb8888, modifier: buffer.modifier)
            } catch {
                guard requestedAPI == .automatic, output.api == .atomic else { throw error }
                DRMDisplay.log.debug("atomic test commit refused (\(error)); legacy KMS")
                output.release()
                fellBackToLegacy = true
                output = LegacyKMS(target)
            }
        }
        try output.setMode(fb: buffer.fb)
    }

    /// Sets the mode again with framebuffer `fb` (after a pause).
    func setModeAgain(fb: UInt32) throws(DRMError) { try output.setMode(fb: fb) }

    /// Queues a page flip to `fb`, with a completion event carrying `userData` when `event`.
    /// Allocation-free.
    func flip(fb: UInt32, event: Bool, userData: UnsafeMutableRawPointer) -> Errno? {
        output.flip(fb: fb, event: event, userData: userData)
    }

    var flipOperation: String {
        output.api == .atomic ? "drmModeAtomicCommit(NONBLOCK | PAGE_FLIP_EVENT)" : "drmModePageFlip"
    }

    /// The CRTC's current vblank; nil when the kernel gives none (the CRTC is off, or the driver
    /// has no vblank support).
    func currentVblank() -> (sequence: UInt64, time: MonotonicInstant)? {
        var sequence: UInt64 = 0, nanoseconds: UInt64 = 0
        guard KernelCall.status({ drmCrtcGetSequence(fd, crtcID, &sequence, &nanoseconds) }) == nil else { return nil }
        return (sequence, MonotonicInstant(nanoseconds: Int64(truncatingIfNeeded: nanoseconds)))
    }

    /// Queues an event for the next vblank carrying `token`: nil, or the kernel's refusal.
    func queueVblank(token: UInt64) -> Errno? {
        var queued: UInt64 = 0
        return KernelCall.status { drmCrtcQueueSequence(fd, crtcID, UInt32(DRM_CRTC_SEQUENCE_RELATIVE), 1, &queued, token) }
    }

    /// Whether an event waits to be read on the device.
    var hasPendingEvent: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// Puts back what the CRTC showed before the display opened; what was done, for the log.
    func restore() -> String? {
        guard let saved = saved?.pointee else { return nil }
        return output.restore(saved)
    }

    /// Frees what the KMS API holds (before the device is closed).
    func release() { output.release() }
}
