import DisplayLinkCore
import DisplaySurface

/// One pointer or touch event that moved the follow scene's marker, as delivered.
struct InputRecord {
    enum Kind: String {
        case pointerEnter = "pointer_enter"
        case pointerMotion = "pointer_motion"
        case touchDown = "touch_down"
        case touchMotion = "touch_motion"
    }

    /// Counts every recorded event of the run from 1 (frames name the newest they reflect by it).
    var sequence: Int
    var kind: Kind
    /// The position, in points.
    var x: Double
    var y: Double
    var time: InputTime
    /// When `onInput` was called with it.
    var deliveredAt: MonotonicInstant

    /// The event's kind and position when it moves the marker (pointer enter and motion, touch
    /// down and motion), else nil.
    static func position(of event: InputEvent) -> (Kind, SurfacePoint)? {
        switch event.kind {
        case .pointer(.entered(let point)): (.pointerEnter, point)
        case .pointer(.moved(let point)): (.pointerMotion, point)
        case .touch(.down(_, let point)): (.touchDown, point)
        case .touch(.moved(_, let point)): (.touchMotion, point)
        default: nil
        }
    }
}

/// The newest ``InputRecord``s of a run in a ring of fixed capacity, allocated once at the start:
/// recording allocates nothing; when full, the oldest record makes room (``dropped`` counts them).
struct InputRing {
    private var storage: [InputRecord]
    /// Records ever added (the newest is at `(count - 1) % capacity`).
    private(set) var count = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        let empty = InputRecord(
            sequence: 0, kind: .pointerMotion, x: 0, y: 0, time: InputTime(time: MonotonicInstant(nanoseconds: 0), source: .precise),
            deliveredAt: MonotonicInstant(nanoseconds: 0))
        storage = Array(repeating: empty, count: self.capacity)
    }

    mutating func append(_ record: InputRecord) {
        storage[count % capacity] = record
        count += 1
    }

    /// Records that made room for newer ones.
    var dropped: Int { max(0, count - capacity) }

    /// The records kept, oldest first.
    var records: [InputRecord] {
        (dropped..<count).map { storage[$0 % capacity] }
    }
}

/// An input event with the frame that first showed it: the first frame drawn with it (whose
/// ``FrameRecord/inputSequence`` is at least its sequence) that was not discarded; its latency
/// is that frame's presentation time less the event's time.
struct InputLatencySample {
    var record: InputRecord
    /// The frame's index in the report's frames (nil: no frame after it was drawn and kept).
    var frame: Int?
    var refreshIndex: UInt64?
    var presented: MonotonicInstant?
    /// The frame's `submitted_at` (its swap and flip or commit done).
    var submittedAt: MonotonicInstant?

    var latency: Nanoseconds? { presented.map { $0 - record.time.time } }
    var toSubmit: Nanoseconds? { submittedAt.map { $0 - record.time.time } }

    /// Pairs each record (in sequence order) with its frame (`frames` in refresh order). A
    /// discarded frame was never seen, so its events go to the next frame kept, which shows them
    /// or a newer position; a frame whose fate is unknown (feedback lost, or still in flight at
    /// the end) is kept, with no presentation time.
    static func match(_ records: [InputRecord], frames: [FrameRecord]) -> [InputLatencySample] {
        var samples: [InputLatencySample] = []
        samples.reserveCapacity(records.count)
        var frameIndex = 0
        for record in records {
            while frameIndex < frames.count
                && (frames[frameIndex].discarded || (frames[frameIndex].inputSequence ?? 0) < record.sequence)
            {
                frameIndex += 1
            }
            guard frameIndex < frames.count else {
                samples.append(InputLatencySample(record: record))
                continue
            }
            let frame = frames[frameIndex]
            samples.append(
                InputLatencySample(
                    record: record, frame: frameIndex, refreshIndex: frame.frame.refreshIndex, presented: frame.presented,
                    submittedAt: frame.submittedAt))
        }
        return samples
    }
}

/// The report's input section: each event and the frame that first showed it, and per run the
/// median and p99 of the latencies known.
struct InputLatencyReport {
    var samples: [InputLatencySample]
    var dropped: Int

    init(ring: InputRing, frames: [FrameRecord]) {
        samples = InputLatencySample.match(ring.records, frames: frames)
        dropped = ring.dropped
    }

    var latencies: [Double] { samples.compactMap { $0.latency?.seconds } }

    var events: [JSONValue] {
        samples.map { s in
            .object([
                ("sequence", .int(s.record.sequence)),
                ("kind", .string(s.record.kind.rawValue)),
                ("x", .number(s.record.x)),
                ("y", .number(s.record.y)),
                ("time", .number(s.record.time.time.seconds)),
                ("time_source", .string(s.record.time.source.rawValue)),
                ("delivered_at", .number(s.record.deliveredAt.seconds)),
                ("frame", s.frame.map { .int($0) } ?? .null),
                ("refresh_index", s.refreshIndex.map { .int(Int(truncatingIfNeeded: $0)) } ?? .null),
                ("presented", s.presented.map { .number($0.seconds) } ?? .null),
                ("latency", s.latency.map { .number($0.seconds) } ?? .null)
            ])
        }
    }

    var summaryFields: [(String, JSONValue)] {
        let latencies = self.latencies
        let toSubmit = samples.compactMap { $0.toSubmit?.seconds }
        return [
            ("input_events", .int(samples.count)),
            ("input_events_dropped", .int(dropped)),
            ("input_events_presented", .int(latencies.count)),
            ("input_latency_median", Statistics.percentile(latencies, 0.5).map { .number($0) } ?? .null),
            ("input_latency_p99", Statistics.percentile(latencies, 0.99).map { .number($0) } ?? .null),
            ("input_to_submit_median", Statistics.percentile(toSubmit, 0.5).map { .number($0) } ?? .null),
            ("input_to_submit_p99", Statistics.percentile(toSubmit, 0.99).map { .number($0) } ?? .null)
        ]
    }

    /// One line for standard output.
    var line: String {
        let latencies = self.latencies
        let toSubmit = samples.compactMap { $0.toSubmit?.seconds }
        return "input: \(samples.count) events, \(latencies.count) presented, latency median "
            + "\(ms(Statistics.percentile(latencies, 0.5))) ms, p99 \(ms(Statistics.percentile(latencies, 0.99))) ms; "
            + "to submit median \(ms(Statistics.percentile(toSubmit, 0.5))) ms, p99 \(ms(Statistics.percentile(toSubmit, 0.99))) ms"
    }
}
