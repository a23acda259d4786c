import EGLGraphics
public import SystemPackage

/// Everything the Wayland backend can fail with, worded so a person can act on it.
public enum WaylandError: Error, CustomStringConvertible, Sendable, Equatable {
    /// No compositor at the socket.
    case cannotConnect(socket: String, errno: Errno?)
    /// The compositor lacks globals this backend cannot work without.
    case missingGlobals([String])
    /// The connection failed: the compositor closed it (it exited or crashed), or sent an event
    /// libwayland rejects (an unknown opcode, an event for an object of another interface); the
    /// error libwayland or the socket gave, when one did.
    case connectionLost(errno: Errno?)
    /// The compositor killed the connection for a protocol error.
    case protocolError(interface: String, objectID: UInt32, code: UInt32)
    /// The surface never got its first configure.
    case notConfigured
    /// EGL refused something.
    case egl(String)
    /// An output that is not (or no longer) one of the connection's outputs was asked for: its
    /// name (or how it is known), and the names of the outputs the compositor has.
    case unknownOutput(String, available: [String])
    /// The compositor accepted the connection but sent no reply within the time allowed
    /// (``WaylandConnection/Options/replyTimeout``): stopped, hung, or far too busy.
    case notResponding(socket: String, seconds: Double)
    /// The connection was closed by the program (``WaylandConnection/close()``).
    case closed
    /// The pointer the program passed as its surface is not a `wl_surface`.
    case notASurface
    /// The program's surface already has a `wp_fifo_v1` or `wp_commit_timer_v1` of the library's
    /// (the protocols allow one per surface).
    case timingObjectTaken

    public var description: String {
        switch self {
        case .cannotConnect(let socket, let errno):
            "Cannot connect to the Wayland compositor at '\(socket)' (\(WaylandError.text(errno))). "
                + "Is a compositor running? Check WAYLAND_DISPLAY and XDG_RUNTIME_DIR, or connect to the socket of a running compositor."
        case .missingGlobals(let names):
            "The Wayland compositor does not offer \(names.joined(separator: ", ")), which this program needs."
        case .connectionLost(let errno):
            "The connection to the Wayland compositor failed (\(WaylandError.text(errno))): the compositor went away, "
                + "or sent an event libwayland rejects (it logs which). The connection is closed."
        case .protocolError(let interface, let id, let code):
            "The Wayland compositor reported protocol error \(code) on \(interface)@\(id) and closed the connection."
        case .notConfigured:
            "The compositor never configured the window (no xdg_surface.configure after the first commit)."
        case .egl(let message):
            message
        case .unknownOutput(let output, let available):
            "The Wayland compositor has no output \(output) (its outputs: "
                + (available.isEmpty ? "none" : available.map { "'\($0)'" }.joined(separator: ", "))
                + "). Name one of them in DisplaySurface.Options.waylandOutput, or pass one of WaylandConnection.outputs to WaylandWindow."
        case .closed:
            "The connection to the Wayland compositor was closed by the program."
        case .notASurface:
            "The surface passed is not a wl_surface (libwayland names its proxy otherwise): pass the window's struct wl_surface *."
        case .timingObjectTaken:
            "Another source on this surface already uses its wp_fifo_v1 or wp_commit_timer_v1 (one per surface): "
                + "leave usesFifo / usesCommitTiming (uses_fifo / uses_commit_timing) off for the second."
        case .notResponding(let socket, let seconds):
            "The Wayland compositor at '\(socket)' accepted the connection but did not reply within \(seconds.formatted2) s: "
                + "it is stopped, hung or overloaded. Check the compositor, or allow it longer "
                + "(waylandReplyTimeout in DisplaySurface.Options, replyTimeout in WaylandConnection.Options)."
        }
    }

    private static func text(_ code: Errno?) -> String {
        guard let code else { return "no error code" }
        return "\(code), errno \(code.rawValue)"
    }
}

extension Double {
    /// Seconds as a person writes them: "30", "0.5", "1.25".
    var formatted2: String {
        let hundredths = (self * 100).rounded()
        guard hundredths.isFinite, abs(hundredths) < 1e15 else { return "\(self)" }
        let whole = Int64(hundredths) / 100, fraction = abs(Int64(hundredths) % 100)
        return fraction == 0
            ? "\(whole)" : fraction % 10 == 0 ? "\(whole).\(fraction / 10)" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
