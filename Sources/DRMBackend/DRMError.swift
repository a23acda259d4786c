import Glibc
public import SystemPackage
import ConsoleSeat

/// Everything the DRM/KMS backend can fail with, worded so a person can act on it.
public enum DRMError: Error, CustomStringConvertible, Sendable, Equatable {
    case noDevice(path: String)
    case noDevices
    case permissionDenied(path: String)
    case notMaster(path: String)
    case noConnectedConnector(path: String)
    case noCRTC(connector: String)
    case modeNotFound(requested: String, available: [String])
    case noMonotonicTimestamps
    case kernel(operation: String, errno: Errno)
    case graphics(String)
    /// Atomic modesetting was asked for (``DRMDisplay/Options/kmsAPI`` `.atomic`) but the driver has none.
    case atomicUnavailable(path: String, driver: String)
    /// The driver refused an atomic commit, or lacks a property it needs: `property` of `object`
    /// (e.g. `MODE_ID` of `CRTC 37`, `FB_ID` of `plane 31`) is the part refused.
    case atomicRefused(property: String, object: String, detail: String, errno: Errno?)
    /// Opening the device through the seat (or directly, without one) failed.
    case session(SeatSessionError)

    public var description: String {
        switch self {
        case .noDevice(let path):
            "No DRM device at \(path). List the devices with `ls /dev/dri` and open one of them."
        case .noDevices:
            "No DRM/KMS device with a connected display was found under /dev/dri (no GPU or KMS driver is loaded)."
        case .permissionDenied(let path):
            "Permission denied opening \(path). Add your user to the 'video' group (then log in again), "
                + "or run through a seat manager (seatd, systemd-logind)."
        case .notMaster(let path):
            "Cannot become DRM master of \(path): another program (usually a Wayland or X compositor) owns the display. "
                + "Run from a text console, stop the compositor, or draw through the compositor (Wayland) instead."
        case .noConnectedConnector(let path):
            "No connected display on \(path): plug in a monitor, or open another card."
        case .noCRTC(let connector):
            "No display controller (CRTC) can drive \(connector)."
        case .modeNotFound(let requested, let available):
            "The display has no \(requested) mode. It offers: \(available.joined(separator: ", "))."
        case .noMonotonicTimestamps:
            "The DRM driver does not report vblank times on CLOCK_MONOTONIC (DRM_CAP_TIMESTAMP_MONOTONIC is 0), "
                + "so frame times cannot be trusted."
        case .kernel(let operation, let errno):
            "\(operation) failed: \(errno) (errno \(errno.rawValue))." + DRMError.advice(operation: operation, errno: errno)
        case .graphics(let message):
            message
        case .atomicUnavailable(let path, let driver):
            "The DRM driver \(driver) of \(path) has no atomic modesetting (DRM_CLIENT_CAP_ATOMIC refused). "
                + "Use the legacy API: kmsAPI = .legacy in DisplaySurface.Options or DRMDisplay.Options "
                + "(or .automatic, which falls back to it)."
        case .atomicRefused(let property, let object, let detail, let errno):
            "The driver refused the atomic commit at \(property) of \(object): \(detail)"
                + (errno.map { " (TEST_ONLY commit: \($0), errno \($0.rawValue))" } ?? "")
                + ". Choose another mode (mode in DisplaySurface.Options or DRMDisplay.Options), "
                + "or the legacy API (kmsAPI = .legacy there)."
        case .session(let error):
            error.description
        }
    }

    /// What a person can do about a kernel call that failed.
    private static func advice(operation: String, errno: Errno) -> String {
        if errno == .operationNotSupportedByDevice {
            return " The DRM device is gone (unplugged, or its driver unbound or unloaded): close the display, "
                + "and open it again once a device is back (devicePath in DisplaySurface.Options or DRMDisplay.Options)."
        }
        if operation.hasPrefix("drmModeSetCrtc") || operation.hasPrefix("drmModeAtomicCommit(ALLOW_MODESET") {
            return " The driver refused to show this mode: choose another (mode in DisplaySurface.Options or DRMDisplay.Options), "
                + "or the other KMS API (kmsAPI there)."
        }
        if operation.hasPrefix("drmModePageFlip") || operation.hasPrefix("drmModeAtomicCommit(NONBLOCK") {
            return " The driver refused a page flip of a frame it had accepted before: close the display and open it again, "
                + "or use the other KMS API (kmsAPI in DisplaySurface.Options or DRMDisplay.Options)."
        }
        return ""
    }
}
