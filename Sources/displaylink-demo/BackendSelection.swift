import DRMBackend
import Glibc
import WaylandBackend

/// The only place that chooses a backend.
enum BackendSelection {
    struct NoBackend: Error, CustomStringConvertible {
        var reasons: [String]
        var description: String {
            "no display to run on:\n" + reasons.map { "  - " + $0 }.joined(separator: "\n")
                + "\nUse --headless to start a private weston compositor for this run."
        }
    }

    @MainActor
    static func makeHost(options: RunOptions, title: String) throws -> DisplayHost {
        let size = options.size
        switch options.backend {
        case .wayland:
            return try makeWayland(options: options, title: title)
        case .drm:
            return try makeDRM(options: options)
        case .auto:
            if options.headless { return try makeWayland(options: options, title: title) }
            var reasons: [String] = []
            do {
                return try WaylandHost(socket: nil, weston: nil, width: size.width, height: size.height, title: title)
            } catch {
                reasons.append("Wayland: \(error)")
            }
            do {
                return try makeDRM(options: options)
            } catch {
                reasons.append("DRM/KMS: \(error)")
            }
            throw NoBackend(reasons: reasons)
        }
    }

    @MainActor
    private static func makeDRM(options: RunOptions) throws -> DisplayHost {
        let mode = try options.mode.map { text throws(DRMError) in try ModeRequest(parsing: text) }
        return try DRMHost(options: DRMDisplay.Options(devicePath: options.device, mode: mode))
    }

    @MainActor
    private static func makeWayland(options: RunOptions, title: String) throws -> DisplayHost {
        let weston = options.headless ? try HeadlessWeston(width: Int(max(options.size.width, 640)),
                                                           height: Int(max(options.size.height, 480))) : nil
        return try WaylandHost(socket: nil, weston: weston, width: options.size.width, height: options.size.height,
                               title: title)
    }
}
