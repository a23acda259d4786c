import Glibc

/// A Debian root newer than the host, built and cached by `Scripts/os-root RELEASE build`, in
/// which today's compositors run chrooted (see ``HeadlessMutter`` and ``HeadlessRootCompositor``).
public enum DebianRoot: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Debian 13: mutter 48.
    case trixie
    /// Debian testing: weston 16, mutter 50, kwin 6.7.
    case forky

    /// The layout number of `Scripts/os-root` for this release (the root's folder is `root-<layout>`).
    public var layout: Int {
        switch self {
        case .trixie: 1
        case .forky: 2
        }
    }

    public var description: String {
        switch self {
        case .trixie: "the Debian 13 root"
        case .forky: "the Debian forky root"
        }
    }

    /// The root's path when it is ready and usable here: `$DISPLAYLINK_<RELEASE>_ROOT` if set,
    /// else `$DISPLAYLINK_ROOT_CACHE/displaylink-<release>/root-<layout>` (default cache
    /// `~/.cache`; trixie also honours `$TRIXIE_ROOT_CACHE`). The error names why not and how to
    /// build it, so a test that needs the root fails with an actionable message, never passes
    /// silently.
    public func path(needing program: String) -> Result<String, CompositorLaunchError> {
        let path: String
        if let explicit = getenv("DISPLAYLINK_\(rawValue.uppercased())_ROOT") {
            path = String(cString: explicit)
        } else if self == .trixie, let legacy = getenv("TRIXIE_ROOT_CACHE") {
            path = String(cString: legacy) + "/root-\(layout)"
        } else {
            let base =
                getenv("DISPLAYLINK_ROOT_CACHE").map { String(cString: $0) }
                ?? (getenv("HOME").map { String(cString: $0) } ?? "/root") + "/.cache"
            path = base + "/displaylink-\(rawValue)/root-\(layout)"
        }
        let build = "build it with Scripts/os-root \(rawValue) build"
        // The error names the program's compositor (its file name); its message is the reason alone.
        let unusable = { (why: String) in
            CompositorLaunchError(String(program.split(separator: "/").last ?? ""), .noRoot(why))
        }
        guard access(path + "/ready", F_OK) == 0 else {
            return .failure(unusable("\(self): \(path)/ready does not exist (\(build))"))
        }
        guard access(path + program, X_OK) == 0 else {
            return .failure(unusable("\(self) at \(path) has no \(program) (\(build))"))
        }
        guard geteuid() == 0 else {
            return .failure(unusable("running a compositor in \(self) needs root (chroot, mount)"))
        }
        return .success(path)
    }
}
