import DisplayLinkCore
import DisplayLinkWaylandTesting
import Foundation
import SurfaceInput
import Testing

@testable import displaylink_demo

/// The follow scene's input section on synthetic frames and events (exact, no display): which
/// frame shows an event, its latency, the ring, the JSON and its contract checker.
@Suite("The report's input section: events matched to the frames that showed them")
struct InputLatencyReportTests {
    /// Frame `index`: its callback at 1 s + index·10 ms, drawn with input up to `input`,
    /// presented 25 ms after its callback (nil: unknown) or discarded.
    static func frame(_ index: Int, input: Int?, presented: Bool = true, discarded: Bool = false) -> FrameRecord {
        let callback = MonotonicInstant(nanoseconds: 1_000_000_000 + Int64(index) * 10_000_000)
        let frame = DisplayFrame(
            timestamp: callback, targetTimestamp: callback + Nanoseconds(20_000_000), duration: Nanoseconds(10_000_000),
            delta: Nanoseconds(index == 0 ? 0 : 10_000_000), sequence: UInt64(index), missedFrames: 0, provenance: .hardwareVBlank,
            refreshIndex: UInt64(100 + index), frameInterval: 1)
        var record = FrameRecord(
            frame: frame, presented: presented && !discarded ? callback + Nanoseconds(25_000_000) : nil, cpuTime: 0,
            callbackAt: callback, encodedAt: callback, submittedAt: callback + Nanoseconds(2_000_000), inputSequence: input)
        record.discarded = discarded
        return record
    }

    /// Event `sequence` at `ms` milliseconds after 1 s, delivered 1 ms later.
    static func event(_ sequence: Int, at ms: Int64) -> InputRecord {
        let time = MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000 + 123)
        return InputRecord(
            sequence: sequence, kind: .pointerMotion, x: Double(sequence), y: 2, time: InputTime(time: time, source: .precise),
            deliveredAt: time + Nanoseconds(1_000_000))
    }

    static func report(frames: [FrameRecord], ring: InputRing) -> [String: Any] {
        let report = FrameReport(
            backend: "drm", scene: "follow", environment: [], records: frames, discarded: frames.filter(\.discarded).count,
            sceneCount: ("views", 2), input: InputLatencyReport(ring: ring, frames: frames))
        return (try? JSONSerialization.jsonObject(with: Data(report.json().utf8))) as? [String: Any] ?? [:]
    }

    @Test(
        """
        each event goes to the first frame drawn with it that was kept (a discarded one passes it on; one of unknown fate keeps it, \
        with no latency); latency = presented − time to the nanosecond; the summary's median and p99; the contract checker agrees
        """)
    func matching() throws {
        // Events 1, 2 before frame 1; 3 before frame 2 (discarded); 4 before frame 4 (unknown); 5 after the last frame.
        let frames = [
            Self.frame(0, input: nil), Self.frame(1, input: 2), Self.frame(2, input: 3, discarded: true), Self.frame(3, input: 3),
            Self.frame(4, input: 4, presented: false)
        ]
        var ring = InputRing(capacity: 8)
        for (sequence, ms) in [(1, 3), (2, 7), (3, 15), (4, 35), (5, 45)] { ring.append(Self.event(sequence, at: Int64(ms))) }
        let samples = InputLatencySample.match(ring.records, frames: frames)
        #expect(samples.map(\.frame) == [1, 1, 3, 4, nil])
        #expect(samples.map(\.refreshIndex) == [101, 101, 103, 104, nil])
        // Frame k is presented at 1 s + 10k ms + 25 ms; event e happened at 1 s + ms + 123 ns.
        #expect(samples.map { $0.latency?.value } == [31_999_877, 27_999_877, 39_999_877, nil, nil])
        #expect(samples.map { $0.toSubmit?.value } == [8_999_877, 4_999_877, 16_999_877, 6_999_877, nil])

        let json = Self.report(frames: frames, ring: ring)
        #expect(DemoInputReportContract.violations(in: json) == [])
        let summary = json["summary"] as? [String: Any] ?? [:]
        #expect(summary["input_events"] as? Int == 5)
        #expect(summary["input_events_presented"] as? Int == 3)
        #expect(summary["input_events_dropped"] as? Int == 0)
        #expect(summary["input_latency_median"] as? Double == 0.031999877)
        #expect(summary["input_latency_p99"] as? Double == 0.039999877)
        let events = json["input"] as? [[String: Any]] ?? []
        #expect(events.map { $0["kind"] as? String } == Array(repeating: "pointer_motion", count: 5))
        #expect((json["frames"] as? [[String: Any]])?.map { $0["input_sequence"] as? Int } == [nil, 2, 3, 3, 4])

        // The checker notices a latency that is not presented − time, a frame that is not the
        // first to show its event, and events out of order.
        var broken = json
        var changed = events
        changed[0]["latency"] = 0.032
        changed[1]["frame"] = 3
        changed.swapAt(3, 4)
        broken["input"] = changed
        let problems = DemoInputReportContract.violations(in: broken)
        #expect(problems.contains { $0.contains("event 0: latency") }, "\(problems)")
        #expect(problems.contains { $0.contains("event 1: frame") }, "\(problems)")
        #expect(problems.contains { $0.contains("out of order") }, "\(problems)")
    }

    @Test("the ring keeps the newest records at its fixed capacity and counts those that made room")
    func ring() {
        var ring = InputRing(capacity: 3)
        for sequence in 1...5 { ring.append(Self.event(sequence, at: Int64(sequence))) }
        #expect(ring.records.map(\.sequence) == [3, 4, 5])
        #expect(ring.dropped == 2)
        #expect(ring.count == 5)
    }
}
