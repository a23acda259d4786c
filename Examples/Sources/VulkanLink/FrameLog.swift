// What the run saw, frame by frame, and what is checked and printed from it: the link's frames,
// the compositor's presentation of each (wp_presentation, through the link's presentation
// handler) and Vulkan's (VK_KHR_present_wait), joined by the refresh that drew the frame.
import DisplayLinkCore

struct FrameLog {
    struct Row {
        var frame: DisplayFrame
        /// When the callback began.
        var callback: MonotonicInstant
        /// The present id the frame went out with (nil: not presented, or no present ids).
        var presentID: UInt64?
        /// When `vkQueuePresentKHR` was called for it (right after the commit hook).
        var submitted: MonotonicInstant?
        /// The compositor's presentation time of this frame, when it was shown.
        var presented: MonotonicInstant?
        var discarded = false
        /// When VK_KHR_present_wait said this frame was shown (the wait's return).
        var vulkanPresented: MonotonicInstant?
        var vulkanTimedOut = false
    }

    private(set) var rows: [Row] = []
    /// Every presentation time the link's source was told (the compositor's feedback, or the
    /// times fed from Vulkan's present wait), for the check that each `timestamp` of a
    /// presentation is one of them.
    private(set) var sourceTimes: Set<MonotonicInstant> = []
    /// The row whose present went out with the requests of each refresh of the window's frame
    /// source (its feedback names that refresh).
    private var rowOfRefresh: [UInt64: Int] = [:]
    private var rowOfPresent: [UInt64: Int] = [:]
    private var lastMappedRefresh: UInt64?

    mutating func began(_ frame: DisplayFrame, at callback: MonotonicInstant) {
        rows.append(Row(frame: frame, callback: callback))
    }

    /// The latest row was presented with `id` (0: no present ids), its commit carrying the
    /// requests of the window source's refresh `windowRefresh` (each refresh's are sent once: a
    /// second present in one refresh gets no feedback of its own).
    mutating func presented(id: UInt64, windowRefresh: UInt64?, submitted: MonotonicInstant) {
        guard !rows.isEmpty else { return }
        let row = rows.count - 1
        rows[row].submitted = submitted
        if let windowRefresh, windowRefresh != lastMappedRefresh {
            rowOfRefresh[windowRefresh] = row
            lastMappedRefresh = windowRefresh
        }
        guard id != 0 else { return }
        rows[row].presentID = id
        rowOfPresent[id] = row
    }

    /// A presentation time the link's source was told.
    mutating func sourceTold(_ time: MonotonicInstant) {
        sourceTimes.insert(time)
    }

    mutating func feedback(_ feedback: PresentationFeedback) {
        let row = rowOfRefresh[feedback.refreshIndex]
        switch feedback.outcome {
        case .presented(let time, _):
            guard feedback.isTimePlausible else { return }
            if let row { rows[row].presented = time }
        case .discarded:
            if let row { rows[row].discarded = true }
        }
    }

    mutating func vulkan(id: UInt64, _ result: PresentWaiter.Result) {
        guard let row = rowOfPresent[id] else { return }
        switch result {
        case .presented(let time): rows[row].vulkanPresented = time
        case .timedOut, .failed: rows[row].vulkanTimedOut = true
        }
    }

    // MARK: The check (what holds at any speed)

    struct Check {
        var firstDeltaZero: Bool
        var deltasExact: Bool
        var targetsForward: Bool
        /// Every timestamp of a presentation (not a predicted vblank) is a time the source was told.
        var timestampsFromSource: Bool
        var presentationTimestamps: Int
        var ok: Bool { firstDeltaZero && deltasExact && targetsForward && timestampsFromSource }
    }

    func check(frames count: Int) -> Check {
        let frames = rows.prefix(count).map(\.frame)
        let pairs = zip(frames, frames.dropFirst())
        let fromFeedback = frames.filter { $0.provenance == .presentationFeedback || $0.provenance == .hardwareVBlank }
        return Check(
            firstDeltaZero: frames.first?.delta == .zero,
            // The time between the two timestamps, or 0 after a stall (the link's default policy).
            deltasExact: pairs.allSatisfy { $1.delta == $1.timestamp - $0.timestamp || $1.delta == .zero },
            targetsForward: pairs.allSatisfy { $1.targetTimestamp >= $0.targetTimestamp },
            timestampsFromSource: fromFeedback.allSatisfy { sourceTimes.contains($0.timestamp) },
            presentationTimestamps: fromFeedback.count)
    }

    // MARK: Figures (printed, never asserted)

    /// The median of `values` (nil when empty).
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// From frame 3 on (the first frames are the start-up's): median |target − presented|, median
    /// callback-to-presented, median callback-to-present-call (the frame's CPU side: acquire,
    /// record, submit), and the largest |Vulkan − compositor| presentation time (ms).
    func figures(frames count: Int) -> (
        targetError: Double?, latency: Double?, render: Double?, vulkanDifference: Double?, compared: Int
    ) {
        let steady = rows.prefix(count).dropFirst(2)
        let shown = steady.compactMap { row in row.presented.map { (row, $0) } }
        let targetErrors = shown.map { abs(($1 - $0.frame.targetTimestamp).seconds) * 1000 }
        let latencies = shown.map { ($1 - $0.callback).seconds * 1000 }
        let differences = shown.compactMap { row, presented in row.vulkanPresented.map { abs(($0 - presented).seconds) * 1000 } }
        let renders = steady.compactMap { row in row.submitted.map { ($0 - row.callback).seconds * 1000 } }
        return (FrameLog.median(targetErrors), FrameLog.median(latencies), FrameLog.median(renders), differences.max(), differences.count)
    }

    /// The first `count` frames: callback, target, deadline, presented (compositor), presented
    /// (Vulkan), in ms after the first callback.
    func table(first count: Int) -> [String] {
        guard let origin = rows.first?.callback else { return [] }
        func ms(_ t: MonotonicInstant?) -> String { t.map { fixed(($0 - origin).seconds * 1000) } ?? "—" }
        var lines = ["frame   callback    present     target   deadline  presented     vulkan   (ms after the first callback)"]
        for (i, row) in rows.prefix(count).enumerated() {
            let presented = row.discarded ? "discarded" : ms(row.presented)
            let vulkan = row.vulkanTimedOut ? "timed out" : row.presentID == nil ? "—" : ms(row.vulkanPresented)
            let columns = [
                ms(row.callback), ms(row.submitted), ms(row.frame.targetTimestamp), ms(row.frame.deadline?.time), presented, vulkan
            ]
            lines.append(pad(String(i), 5) + columns.map { pad($0, 11) }.joined())
        }
        return lines
    }
}

/// `value` with two decimals.
func fixed(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let magnitude = abs(hundredths)
    return (hundredths < 0 ? "-" : "") + "\(magnitude / 100)." + (magnitude % 100 < 10 ? "0" : "") + "\(magnitude % 100)"
}

/// `text` right-aligned in `width` columns.
func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}
