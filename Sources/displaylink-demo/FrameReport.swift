import DisplayLinkCore

/// The demo's report: the JSON contract other tools read. Field names are fixed (add, never
/// rename or drop). All times in seconds on CLOCK_MONOTONIC.
struct FrameReport {
    var backend: String
    var scene: String
    var environment: [(String, JSONValue)]
    var records: [FrameRecord]
    var discarded: Int
    var sceneCount: (name: String, value: Int)  // "views" or "rows"
    /// How the run ended (nil: not ended yet).
    var ending: RunEnding? = nil
    /// Input events and the frames that first showed them (follow scene; nil for the others).
    var input: InputLatencyReport? = nil

    struct Summary {
        var frames: Int
        var presented: Int
        var discarded: Int
        var missed: Int
        var medianInterval: Double?
        var p99Interval: Double?
        var stddevInterval: Double?
        var medianPredictionError: Double?
        /// Median and 99th percentile of presented − callback_at over the presented frames from
        /// ``FrameReport/latencyWarmupFrames`` on (nil: none).
        var medianLatency: Double?
        var p99Latency: Double?
        var cpuPerFrame: Double
        var presentedRate: Double?
        /// The share of the display's refreshes that showed a new frame, from the first
        /// presentation to the last (1.0: a new frame at every refresh); see ``RefreshShare``.
        var presentedPerRefresh: Double?
        /// The same from frame ``FrameReport/startupFrames`` on: without the mode set or first
        /// commit, and, under emulation, without the first runs of new code (translated on first use).
        var presentedPerRefreshAfterStartup: Double?
        /// The counts ``presentedPerRefresh`` and ``presentedPerRefreshAfterStartup`` are ratios of.
        var refreshShare: RefreshShare?
        var refreshShareAfterStartup: RefreshShare?
    }

    /// Frames counted as start-up in ``Summary/presentedPerRefreshAfterStartup``.
    static let startupFrames = 10

    /// Frames left out of ``Summary/medianLatency`` and ``Summary/p99Latency``: the first
    /// commit and the shaders' first use (the benchmark scripts leave out the same three).
    static let latencyWarmupFrames = 3

    /// Refreshes that showed a new frame, out of the refreshes that happened from the first
    /// presentation to the last.
    ///
    /// Definition: sort the distinct presentation times t₀ < t₁ < … < tₙ and take the period p,
    /// the median frame duration. Each tᵢ after t₀ is one refresh that showed a new frame
    /// (``presented`` = n); the gap tᵢ − tᵢ₋₁ holds max(1, round((tᵢ − tᵢ₋₁) / p)) refreshes,
    /// the one at tᵢ and those before it that showed nothing new (``refreshes`` = their sum).
    /// Every gap counts at least the refresh that ends it, so ``presented`` ≤ ``refreshes`` and
    /// the share is in (0, 1] whatever p is. The period is only an estimate (weston 10 headless
    /// advertises 16.7 ms, repaints every ~25.4 ms and sends `seq` 0, so the scheduler measures
    /// it, with some lag and bias): here it only decides how many refreshes a long gap holds,
    /// whereas the span t₀…tₙ divided by it, rounded, is a count with no tie to the presentations
    /// in it: with a period 2 % long, 107 presentations fit in 105 such "refreshes".
    struct RefreshShare: Equatable, CustomStringConvertible {
        var presented: Int
        var refreshes: Int
        var share: Double { Double(presented) / Double(refreshes) }
        /// "presented/refreshes", for the printed summary.
        var description: String { "\(presented)/\(refreshes)" }
    }

    /// Gaps longer than this many periods count as this many (a stall, not skipped refreshes;
    /// and it keeps the sum an `Int`).
    static let maximumRefreshesPerGap = 1 << 32

    /// The ``RefreshShare`` of `records` (nil: fewer than two distinct presentation times, or
    /// no positive period).
    static func refreshShare(_ records: ArraySlice<FrameRecord>) -> RefreshShare? {
        var times = records.compactMap { $0.presented?.nanoseconds }
        times.sort()
        guard let period = Statistics.percentile(records.map { Double($0.frame.duration.value) }, 0.5),
            period > 0
        else { return nil }
        var presented = 0, refreshes = 0
        for (later, earlier) in zip(times.dropFirst(), times) where later > earlier {
            // Exact in nanoseconds; in Double only when the difference overflows.
            let (gap, overflow) = later.subtractingReportingOverflow(earlier)
            let periods = ((overflow ? Double(later) - Double(earlier) : Double(gap)) / period).rounded()
            presented += 1
            refreshes += Int(min(max(periods, 1), Double(maximumRefreshesPerGap)))
        }
        return presented > 0 ? RefreshShare(presented: presented, refreshes: refreshes) : nil
    }

    /// ``RefreshShare/share`` of `records`.
    static func presentedPerRefresh(_ records: ArraySlice<FrameRecord>) -> Double? {
        refreshShare(records)?.share
    }

    var summary: Summary {
        let presentedTimes = records.compactMap { $0.presented?.seconds }
        let intervals = zip(presentedTimes.dropFirst(), presentedTimes).map { $0 - $1 }
        let errors = records.compactMap { r in r.presented.map { abs(r.frame.targetTimestamp.seconds - $0.seconds) } }
        let latencies = records.dropFirst(FrameReport.latencyWarmupFrames).compactMap { r in
            r.presented.map { $0.seconds - r.callbackAt.seconds }
        }
        let cpu = records.map(\.cpuTime)
        var rate: Double?
        if let first = presentedTimes.first, let last = presentedTimes.last, last > first {
            rate = Double(presentedTimes.count - 1) / (last - first)
        }
        let share = FrameReport.refreshShare(records[...])
        let shareAfterStartup =
            records.count > FrameReport.startupFrames + 1
            ? FrameReport.refreshShare(records.dropFirst(FrameReport.startupFrames)) : nil
        return Summary(
            frames: records.count,
            presented: presentedTimes.count,
            discarded: discarded,
            missed: records.reduce(0) { $0 + $1.frame.missedFrames },
            medianInterval: Statistics.percentile(intervals, 0.5),
            p99Interval: Statistics.percentile(intervals, 0.99),
            stddevInterval: Statistics.standardDeviation(intervals),
            medianPredictionError: Statistics.percentile(errors, 0.5),
            medianLatency: Statistics.percentile(latencies, 0.5),
            p99Latency: Statistics.percentile(latencies, 0.99),
            cpuPerFrame: cpu.isEmpty ? 0 : cpu.reduce(0, +) / Double(cpu.count),
            presentedRate: rate,
            presentedPerRefresh: share?.share,
            presentedPerRefreshAfterStartup: shareAfterStartup?.share,
            refreshShare: share,
            refreshShareAfterStartup: shareAfterStartup
        )
    }

    func json() -> String {
        var frames: [JSONValue] = []
        frames.reserveCapacity(records.count)
        for (index, r) in records.enumerated() {
            var fields: [(String, JSONValue)] = [
                ("index", .int(index)),
                ("timestamp", .number(r.frame.timestamp.seconds)),
                ("target_timestamp", .number(r.frame.targetTimestamp.seconds)),
                ("deadline", r.frame.deadline.map { .number($0.time.seconds) } ?? .null),
                ("deadline_provenance", r.frame.deadline.map { .string($0.provenance.rawValue) } ?? .null),
                ("duration", .number(r.frame.duration.seconds)),
                ("delta", .number(r.frame.delta.seconds)),
                ("sequence", .int(Int(truncatingIfNeeded: r.frame.sequence))),
                ("missed", .int(r.frame.missedFrames)),
                ("provenance", .string(r.frame.provenance.rawValue)),
                ("presented", r.presented.map { .number($0.seconds) } ?? .null),
                ("discarded", .bool(r.discarded)),
                ("presented_time_implausible", .bool(r.presentedAtImplausibleTime)),
                ("cpu_time", .number(r.cpuTime)),
                ("callback_at", .number(r.callbackAt.seconds)),
                ("encoded_at", .number(r.encodedAt.seconds)),
                ("submitted_at", .number(r.submittedAt.seconds)),
                ("refresh_index", .int(Int(truncatingIfNeeded: r.frame.refreshIndex))),
                ("presentation_flags", r.presentationFlags.map { .array($0.names.map { .string($0) }) } ?? .null),
                ("commit_target", r.commitTarget.map { .number($0.seconds) } ?? .null),
                ("render_estimate", r.frame.renderEstimate.map { .number($0.seconds) } ?? .null)
            ]
            if input != nil { fields.append(("input_sequence", r.inputSequence.map { .int($0) } ?? .null)) }
            if let s = r.scroll {
                fields += [
                    ("scroll_offset", .number(s.offset)),
                    ("fraction", s.fraction.map { .number($0) } ?? .null),
                    ("first_row", .int(s.firstRow)),
                    ("last_row", .int(s.lastRow))
                ]
            }
            frames.append(.object(fields))
        }
        let s = summary
        let summaryFields: [(String, JSONValue)] =
            [
                ("frames", .int(s.frames)),
                ("presented", .int(s.presented)),
                ("discarded", .int(s.discarded)),
                ("missed", .int(s.missed)),
                ("median_interval", s.medianInterval.map { .number($0) } ?? .null),
                ("p99_interval", s.p99Interval.map { .number($0) } ?? .null),
                ("stddev_interval", s.stddevInterval.map { .number($0) } ?? .null),
                ("median_prediction_error", s.medianPredictionError.map { .number($0) } ?? .null),
                ("median_latency", s.medianLatency.map { .number($0) } ?? .null),
                ("p99_latency", s.p99Latency.map { .number($0) } ?? .null),
                ("cpu_per_frame", .number(s.cpuPerFrame)),
                ("presented_rate", s.presentedRate.map { .number($0) } ?? .null),
                ("presented_per_refresh", s.presentedPerRefresh.map { .number($0) } ?? .null),
                ("startup_frames", .int(FrameReport.startupFrames)),
                ("presented_per_refresh_after_startup", s.presentedPerRefreshAfterStartup.map { .number($0) } ?? .null),
                ("refreshes", s.refreshShare.map { .int($0.refreshes) } ?? .null),
                ("refreshes_after_startup", s.refreshShareAfterStartup.map { .int($0.refreshes) } ?? .null),
                (sceneCount.name, .int(sceneCount.value))
            ] + (input?.summaryFields ?? []) + (ending?.summaryFields ?? [])
        var rootFields: [(String, JSONValue)] = [
            ("backend", .string(backend)),
            ("scene", .string(scene)),
            ("environment", .object(environment)),
            ("frames", .array(frames))
        ]
        if let input { rootFields.append(("input", .array(input.events))) }
        rootFields.append(("summary", .object(summaryFields)))
        let root: JSONValue = .object(rootFields)
        return root.serialized() + "\n"
    }
}

enum Statistics {
    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count - 1)).rounded())
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func standardDeviation(_ values: [Double]) -> Double? {
        guard values.count > 1 else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)
        return variance.squareRoot()
    }
}

/// A minimal JSON value with deterministic field order.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case int(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    func serialized() -> String {
        var out = ""
        write(into: &out, indent: "")
        return out
    }

    private func write(into out: inout String, indent: String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .number(let d): out += d.isFinite ? String(d) : "null"
        case .string(let s): JSONValue.quote(s, into: &out)
        case .array(let items):
            // Arrays of objects one per line; keeps reports readable and diffable.
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += indent + "  "
                item.writeInline(into: &out)
                out += i + 1 < items.count ? ",\n" : "\n"
            }
            out += indent + "]"
        case .object(let fields):
            out += "{\n"
            for (i, (key, value)) in fields.enumerated() {
                out += indent + "  "
                JSONValue.quote(key, into: &out)
                out += ": "
                value.write(into: &out, indent: indent + "  ")
                out += i + 1 < fields.count ? ",\n" : "\n"
            }
            out += indent + "}"
        }
    }

    private func writeInline(into out: inout String) {
        switch self {
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += ", " }
                item.writeInline(into: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out += ", " }
                JSONValue.quote(key, into: &out)
                out += ": "
                value.writeInline(into: &out)
            }
            out += "}"
        default:
            write(into: &out, indent: "")
        }
    }

    private static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

/// How a run ended, for the report's summary.
struct RunEnding {
    enum Reason: String {
        /// `--frames` callbacks done.
        case frames
        /// `--seconds` up (in a frame, or by the timer when the link stalled).
        case seconds
        /// q or Escape.
        case key
        /// SIGINT or SIGTERM.
        case signal
        /// The compositor asked the window to close.
        case close
        /// The display failed.
        case error
    }
    var reason: Reason
    var endedAt: MonotonicInstant
    var linkStartedAt: MonotonicInstant?
    var lastCallbackAt: MonotonicInstant?
    /// Set when the run ended because its time was up while no callback came (the link stalled):
    /// the last callback's time, or the link's start when none came.
    var stallBeganAt: MonotonicInstant?

    var summaryFields: [(String, JSONValue)] {
        [
            ("ended_by", .string(reason.rawValue)),
            ("ended_at", .number(endedAt.seconds)),
            ("link_started_at", linkStartedAt.map { .number($0.seconds) } ?? .null),
            ("last_callback_at", lastCallbackAt.map { .number($0.seconds) } ?? .null),
            ("stalled", .bool(stallBeganAt != nil)),
            ("stall_began_at", stallBeganAt.map { .number($0.seconds) } ?? .null)
        ]
    }
}
