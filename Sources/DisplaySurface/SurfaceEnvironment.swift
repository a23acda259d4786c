import DisplayLinkCore

/// One fact about the display a surface is on, for reports and logs.
public struct EnvironmentEntry: Sendable, Hashable {
    /// A fact's value. Its `description` is the value alone, as a person reads it: `weston`,
    /// `60.0`, `true`, `[wp_presentation 2, xdg_wm_base 6]`, `unknown`.
    public enum Value: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        case int(Int)
        case number(Double)
        case bool(Bool)
        /// A list of names (e.g. the timing protocols in use).
        case list([String])
        /// Not known (e.g. no presentation clock without `wp_presentation`).
        case unknown

        public var description: String {
            switch self {
            case .string(let text): text
            case .int(let value): String(value)
            case .number(let value): String(value)
            case .bool(let value): String(value)
            case .list(let names): "[" + names.joined(separator: ", ") + "]"
            case .unknown: "unknown"
            }
        }
    }

    public var key: String
    public var value: Value

    public init(_ key: String, _ value: Value) {
        self.key = key
        self.value = value
    }
}

extension DisplaySurface {
    /// What this surface runs on, as named facts in a fixed order.
    ///
    /// - Wayland: `compositor`, `socket`, `presentation_clock`, `refresh_advertised`, `egl_vendor`,
    ///   `gles_version`, `swap_with_damage`, `timing_protocols` (those in use, with their versions,
    ///   e.g. `wp_presentation 2`, `wp_commit_timing_v1 1`, `wp_fifo_v1 1`, `xdg_wm_base 6`; commit
    ///   timing is no longer listed once it fell back), `commit_timing` (`in use`, `fell back`:
    ///   the compositor held timed commits and the surface went on untimed, `not used on a
    ///   virtual monitor`: mutter's virtual monitors hold timed commits, `off`: offered but
    ///   turned off by `DisplaySurface.Options.waylandCommitTiming`, or `not offered`).
    /// - DRM/KMS: `device`, `driver`, `connector`, `mode`, `presentation_clock`,
    ///   `refresh_advertised`, `refresh_exact`, `period_exact`, `flips_submitted`,
    ///   `flips_completed`, `egl_driver`, `buffers_kept_mapped`, `kms_api` (`atomic` or `legacy`),
    ///   `pacing` (`vblank`, or `timer` on a driver without vblank events).
    ///
    /// After ``close()`` it is what it was at the moment of closing.
    public var environment: [EnvironmentEntry] {
        if let environmentAtClose { return environmentAtClose }
        if let connection, let window, let eglWindow, let waylandSource {
            let advertised = window.outputs.first?.advertisedPeriod ?? waylandSource.timeline.advertisedPeriod
            return [
                EnvironmentEntry("compositor", .string(connection.compositorName ?? "unknown")),
                EnvironmentEntry("socket", .string(connection.socketName)),
                EnvironmentEntry("presentation_clock", connection.presentationClock.map { .string($0.description) } ?? .unknown),
                EnvironmentEntry("refresh_advertised", advertised.value > 0 ? .number(1 / advertised.seconds) : .unknown),
                EnvironmentEntry("egl_vendor", .string(eglWindow.context.vendor)),
                EnvironmentEntry("gles_version", .int(Int(eglWindow.context.glesMajorVersion))),
                EnvironmentEntry("swap_with_damage", .bool(eglWindow.context.supportsSwapWithDamage)),
                EnvironmentEntry("timing_protocols", .list(waylandSource.timingProtocolsInUse)),
                EnvironmentEntry("commit_timing", .string(waylandSource.commitTimingState)),
            ]
        }
        if let display {
            return [
                EnvironmentEntry("device", .string(display.devicePath)),
                EnvironmentEntry("driver", .string(display.driverName)),
                EnvironmentEntry("connector", .string(display.connectorName)),
                EnvironmentEntry("mode", .string(display.mode.description)),
                EnvironmentEntry("presentation_clock", .string("CLOCK_MONOTONIC")),
                EnvironmentEntry("refresh_advertised", .number(Double(display.mode.vrefresh))),
                EnvironmentEntry("refresh_exact", .number(display.mode.refreshRate)),
                EnvironmentEntry("period_exact", .number(display.mode.period.seconds)),
                EnvironmentEntry("flips_submitted", .int(display.flipsSubmitted)),
                EnvironmentEntry("flips_completed", .int(display.flipsCompleted)),
                EnvironmentEntry("egl_driver", display.context.driverName.map { .string($0) } ?? .unknown),
                EnvironmentEntry("buffers_kept_mapped", .bool(display.keepsBuffersMapped)),
                EnvironmentEntry("kms_api", .string(display.kmsAPI.rawValue)),
                EnvironmentEntry("pacing", .string(display.pacing.rawValue)),
            ]
        }
        return []
    }
}
