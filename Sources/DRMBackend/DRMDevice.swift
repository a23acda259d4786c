import Glibc
import KernelCall
import SystemPackage
import ConsoleSeat
internal import CDRM

/// An opened DRM device that is master, with the capabilities and quirks the display acts on.
struct DRMDevice {
    let path: String
    let fd: Int32
    let driverName: String
    /// Whether atomic modesetting was granted (`DRM_CLIENT_CAP_ATOMIC`; never asked for when the
    /// legacy API is wanted).
    let atomic: Bool
    var quirks: DRMQuirks

    /// Becomes master of `fd` (through a seat it is already), checks the timestamps are monotonic,
    /// and turns on universal planes and, unless `kmsAPI` is `.legacy`, atomic modesetting.
    static func probe(fd: Int32, path: String, kmsAPI: KMSAPI) throws(DRMError) -> DRMDevice {
        if drmIsMaster(fd) == 0 && drmSetMaster(fd) != 0 { throw .notMaster(path: path) }
        var value: UInt64 = 0
        guard drmGetCap(fd, UInt64(DRM_CAP_TIMESTAMP_MONOTONIC), &value) == 0, value == 1 else { throw .noMonotonicTimestamps }
        value = 0
        let crtcInVblankEvent = drmGetCap(fd, UInt64(DRM_CAP_CRTC_IN_VBLANK_EVENT), &value) == 0 && value == 1
        // Universal planes list the primary plane and its formats.
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let atomic = kmsAPI != .legacy && drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1) == 0
        var driverName = "unknown"
        if let version = drmGetVersion(fd) {
            driverName = version.pointee.name.map { String(cString: $0) } ?? "unknown"
            drmFreeVersion(version)
        }
        var quirks: DRMQuirks = crtcInVblankEvent ? [] : .noCRTCInVblankEvent
        if kmsAPI != .legacy && !atomic { quirks.insert(.legacyOnly) }
        return DRMDevice(path: path, fd: fd, driverName: driverName, atomic: atomic, quirks: quirks)
    }

    /// Whether the driver refuses vblank queries on `crtc` outright (EOPNOTSUPP: it has no vblank
    /// support). An inactive CRTC answers EINVAL, which says nothing yet: the first queued vblank
    /// tells.
    func refusesVblankQueries(crtc: UInt32) -> Bool {
        var sequence: UInt64 = 0, time: UInt64 = 0
        return KernelCall.status { drmCrtcGetSequence(fd, crtc, &sequence, &time) } == .notSupported
    }

    /// The first /dev/dri/cardN with a connected connector (each opened in the session: through
    /// the seat, or directly).
    @MainActor static func find(session: SeatSession) throws(DRMError) -> String {
        var sawDevice = false
        for n in 0..<16 {
            let path = "/dev/dri/card\(n)"
            guard access(path, F_OK) == 0 else { continue }
            sawDevice = true
            let device: SeatSession.Device
            do { device = try session.openDevice(path) } catch {
                switch error {
                case .noDevice, .openFailed: continue
                default: throw .session(error)
                }
            }
            defer { session.closeDevice(device) }
            if OutputSelection.hasConnectedConnector(fd: device.fd) { return path }
        }
        if sawDevice { throw .noConnectedConnector(path: "/dev/dri/card*") }
        throw .noDevices
    }
}

extension DRMDisplay {
    /// Opens a session as `options` say.
    @MainActor static func openSession(_ options: SeatSession.Options) throws(DRMError) -> SeatSession {
        do { return try SeatSession.open(options: options) } catch { throw .session(error) }
    }

    /// Opens the DRM device at `path` in `session`.
    @MainActor static func openDevice(_ path: String, in session: SeatSession) throws(DRMError) -> SeatSession.Device {
        do { return try session.openDevice(path) } catch {
            switch error {
            case .noDevice: throw .noDevice(path: path)
            case .openFailed(_, let code): throw openError(path: path, errno: code)
            default: throw .session(error)
            }
        }
    }

    /// The error for a failed open of a DRM device.
    public nonisolated static func openError(path: String, errno code: Errno) -> DRMError {
        switch code {
        case .noSuchFileOrDirectory, .operationNotSupportedByDevice, .noSuchAddressOrDevice: .noDevice(path: path)
        case .permissionDenied, .notPermitted: .permissionDenied(path: path)
        default: .kernel(operation: "open(\(path))", errno: code)
        }
    }
}
