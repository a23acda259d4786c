import Foundation

/// The contract of the demo's `input` section (the follow scene's report), as the tests on sway
/// and in the vkms VM check it: what holds at any speed, whatever the display presented.
///
/// Each event names the first frame drawn with it (the frame's `input_sequence`, the newest event
/// it showed, is at least the event's `sequence`, the frames before it that were kept are below)
/// that was not discarded; that frame's callback began after the event was delivered, and the
/// event happened before (`time ≤ delivered_at ≤ callback_at`); its `presented` is the frame's,
/// and its `latency` is `presented − time` (to the nanosecond), never negative; events come in
/// order. An event with no frame was shown by none (no kept frame was drawn with it). The
/// summary counts the events and the latencies and gives their median and p99.
package enum DemoInputReportContract {
    /// What in `report` (the parsed JSON) breaks the contract; empty when it holds.
    package static func violations(in report: [String: Any]) -> [String] {
        var problems: [String] = []
        guard let events = report["input"] as? [[String: Any]] else { return ["no input section"] }
        let frames = report["frames"] as? [[String: Any]] ?? []
        let summary = report["summary"] as? [String: Any] ?? [:]
        let kinds: Set = ["pointer_enter", "pointer_motion", "touch_down", "touch_motion"]
        let sources: Set = ["precise", "milliseconds", "received"]
        func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
        func integer(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }
        func kept(_ index: Int) -> Bool { (frames[index]["discarded"] as? Bool) != true }
        for (index, frame) in frames.enumerated() where !frame.keys.contains("input_sequence") {
            problems.append("frame \(index) has no input_sequence")
        }
        var latencies: [Double] = []
        var previous: (sequence: Int, time: Double, frame: Int)?
        for (i, event) in events.enumerated() {
            guard let sequence = integer(event["sequence"]), let time = number(event["time"]),
                let delivered = number(event["delivered_at"]), let kind = event["kind"] as? String,
                let source = event["time_source"] as? String, number(event["x"]) != nil, number(event["y"]) != nil
            else {
                problems.append("event \(i) incomplete: \(event)")
                continue
            }
            if !kinds.contains(kind) { problems.append("event \(i): kind \(kind)") }
            if !sources.contains(source) { problems.append("event \(i): time source \(source)") }
            if time > delivered { problems.append("event \(i) happened at \(time), after its delivery at \(delivered)") }
            if let previous, sequence <= previous.sequence || time < previous.time {
                problems.append("event \(i) (\(sequence) at \(time)) out of order after (\(previous.sequence) at \(previous.time))")
            }
            // The frames drawn with it: the first kept one is its frame.
            let first = frames.indices.first { kept($0) && (integer(frames[$0]["input_sequence"]) ?? 0) >= sequence }
            let frameIndex = integer(event["frame"])
            if frameIndex != first {
                let named = String(describing: frameIndex), firstKept = String(describing: first)
                problems.append("event \(i): frame \(named), the first kept frame drawn with it is \(firstKept)")
            }
            guard let frameIndex, frames.indices.contains(frameIndex) else {
                if !(event["presented"] is NSNull) || !(event["latency"] is NSNull) || !(event["refresh_index"] is NSNull) {
                    problems.append("event \(i): no frame, yet a presentation, latency or refresh index")
                }
                previous = (sequence, time, previous?.frame ?? 0)
                continue
            }
            let frame = frames[frameIndex]
            if integer(event["refresh_index"]) != integer(frame["refresh_index"]) {
                let own = String(describing: event["refresh_index"]), theirs = String(describing: frame["refresh_index"])
                problems.append("event \(i): refresh index \(own), its frame's \(theirs)")
            }
            if let callback = number(frame["callback_at"]), callback < delivered {
                problems.append("event \(i) delivered at \(delivered), after its frame \(frameIndex)'s callback at \(callback)")
            }
            if let previous, frameIndex < previous.frame { problems.append("event \(i): frame \(frameIndex) before \(previous.frame)") }
            previous = (sequence, time, frameIndex)
            let presented = number(event["presented"])
            if presented != number(frame["presented"]) {
                let own = String(describing: presented), theirs = String(describing: frame["presented"])
                problems.append("event \(i): presented \(own), its frame \(frameIndex)'s \(theirs)")
            }
            guard let presented else {
                if !(event["latency"] is NSNull) { problems.append("event \(i): a latency without a presentation") }
                continue
            }
            guard let latency = number(event["latency"]) else {
                problems.append("event \(i): presented at \(presented) but no latency")
                continue
            }
            // Seconds as doubles from whole nanoseconds: the difference within a nanosecond.
            if abs(latency - (presented - time)) >= 1e-9 {
                problems.append("event \(i): latency \(latency) ≠ presented \(presented) − time \(time)")
            }
            if presented < time || latency < 0 { problems.append("event \(i): presented at \(presented), before it happened at \(time)") }
            latencies.append(latency)
        }
        if integer(summary["input_events"]) != events.count {
            problems.append("summary: input_events \(String(describing: summary["input_events"])), \(events.count) events")
        }
        if integer(summary["input_events_presented"]) != latencies.count {
            problems.append(
                "summary: input_events_presented \(String(describing: summary["input_events_presented"])), \(latencies.count) latencies")
        }
        let sorted = latencies.sorted()
        for (field, p) in [("input_latency_median", 0.5), ("input_latency_p99", 0.99)] {
            let expected = sorted.isEmpty ? nil : sorted[Int((p * Double(sorted.count - 1)).rounded())]
            if number(summary[field]) != expected || (expected == nil && !(summary[field] is NSNull)) {
                problems.append("summary: \(field) \(String(describing: summary[field])), expected \(String(describing: expected))")
            }
        }
        return problems
    }
}
