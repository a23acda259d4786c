import DisplayLinkCore

/// Whether a commit may carry a target time (`wp_commit_timer_v1.set_timestamp`), decided per
/// output on what the compositor's feedback says (see <doc:WaylandScheduling>).
///
/// A compositor that holds a timed commit until a frame of its own applies it can hold it for good
/// when its frame clock predicts no presentation: mutter 48 to 50 do so whenever the output's last
/// presentation lacked `VSYNC` (virtual monitors always, real monitors after a mode-set fallback
/// or at a new frame clock's first frames). So commits are timed only while the latest
/// presentation on the surface's current output was in sync with its vblank, and only after one
/// such presentation since the surface entered that output or its mode changed. An output where a
/// timed commit was found held gets no timed commit again while the program runs.
///
/// The gate keeps a record per output (a handful at most; one is added only when the surface
/// enters an output it never was on). Nothing is allocated per frame.
public struct CommitTimingGate: Sendable, Hashable {
    /// Why a commit is timed or not, for reports and logs.
    public enum State: Sendable, Hashable, CustomStringConvertible {
        /// The latest presentation on the current output carried `VSYNC`.
        case open
        /// Timed commits are sent whatever the feedback says (``CommitTimingGate/requiresVsync`` false).
        case bypassed
        /// No presentation on this output yet since it was entered or its mode changed.
        case waitingForFeedback
        /// The latest presentation on this output lacked `VSYNC`.
        case noVsync
        /// A timed commit on this output was held: none is sent there again.
        case stopped

        public var description: String {
            switch self {
            case .open: "in use (VSYNC feedback)"
            case .bypassed: "in use (VSYNC gate bypassed)"
            case .waitingForFeedback: "waiting for VSYNC feedback"
            case .noVsync: "not used: presentations without VSYNC"
            case .stopped: "stopped: a timed commit was held"
            }
        }
    }

    struct Record: Sendable, Hashable {
        var output: UInt64
        var stopped = false
    }

    /// False: timed commits go out whatever the feedback says (measuring a compositor, or one
    /// known to apply timed commits without `VSYNC`); a held one still stops them on its output.
    public let requiresVsync: Bool
    var records: [Record] = []
    /// The output the surface is on (nil: none known yet), and what its feedback said since the
    /// surface entered it or its mode changed (nil: nothing yet).
    public private(set) var currentOutput: UInt64?
    var latestVsync: Bool?

    public init(requiresVsync: Bool = true) {
        self.requiresVsync = requiresVsync
    }

    /// The current output's state.
    public var state: State {
        if let currentOutput, records.contains(where: { $0.output == currentOutput && $0.stopped }) { return .stopped }
        if !requiresVsync { return .bypassed }
        switch latestVsync {
        case nil: return .waitingForFeedback
        case true?: return .open
        case false?: return .noVsync
        }
    }

    /// Whether the latest presentation on the current output carried `VSYNC` (its time is on the
    /// output's vblank grid).
    public var isOnVblankGrid: Bool { latestVsync == true }

    /// Whether a commit may carry a target time now.
    public var allowsTimedCommits: Bool { state == .open || state == .bypassed }

    /// Whether a timed commit was found held on some output.
    public var hasStoppedAnyOutput: Bool { records.contains(where: \.stopped) }

    /// The surface entered `output` (nil: an unknown one), or its output's mode changed: the
    /// feedback there must show `VSYNC` again before a commit is timed.
    public mutating func outputChanged(to output: UInt64?) {
        latestVsync = nil
        guard let output else { return }
        // A hold found before any output was known was on the first one entered.
        let heldBeforeKnown = currentOutput == CommitTimingGate.unknownOutput
        currentOutput = output
        if !records.contains(where: { $0.output == output }) { records.append(Record(output: output)) }
        if heldBeforeKnown { stopCurrentOutput() }
    }

    /// The record of a hold found before any output was known.
    static let unknownOutput = UInt64.max

    /// A presentation of the surface was reported with these flags.
    public mutating func presented(flags: PresentationFlags) {
        latestVsync = flags.contains(.vsync)
    }

    /// A timed commit on the current output was held: no timed commits there again. With no
    /// output known, on a record of its own, so that the gate stays shut, and on the first output
    /// entered after it.
    public mutating func stopCurrentOutput() {
        let output = currentOutput ?? CommitTimingGate.unknownOutput
        currentOutput = output
        if let index = records.firstIndex(where: { $0.output == output }) {
            records[index].stopped = true
        } else {
            records.append(Record(output: output, stopped: true))
        }
    }
}
