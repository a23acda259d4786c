import Foundation
import Testing
import DisplayLinkWaylandTesting

@Suite("The demo under a real weston: the report's contract", .serialized)
struct DemoReportTests {
    static let frameFields = ["index", "timestamp", "target_timestamp", "duration", "delta", "sequence", "missed",
                              "provenance", "presented", "cpu_time", "callback_at", "encoded_at", "submitted_at"]
    static let summaryFields = ["frames", "presented", "discarded", "missed", "median_interval", "p99_interval",
                                "stddev_interval", "median_prediction_error", "cpu_per_frame", "presented_rate",
                                "presented_per_refresh", "startup_frames", "presented_per_refresh_after_startup"]

    func checkCommon(_ report: [String: Any], scene: String, frames expected: Int) -> [[String: Any]] {
        #expect(report["backend"] as? String == "wayland")
        #expect(report["scene"] as? String == scene)
        let environment = report["environment"] as? [String: Any] ?? [:]
        #expect(environment["compositor"] as? String == "weston")
        #expect(environment["presentation_clock"] as? String == "CLOCK_MONOTONIC_RAW")
        #expect(environment["refresh_advertised"] is Double)
        #expect(environment["size"] as? String == "320x240")
        let frames = report["frames"] as? [[String: Any]] ?? []
        #expect(frames.count == expected)
        for (i, frame) in frames.enumerated() {
            for field in Self.frameFields { #expect(frame.keys.contains(field), "frame \(i) lacks \(field)") }
            #expect(frame["index"] as? Int == i)
            #expect((frame["cpu_time"] as? Double ?? -1) >= 0)
            // Drawing is encoded, then handed over; a callback with a measured presentation time
            // begins after it (estimates may lie a little ahead).
            if let t = frame["timestamp"] as? Double, let c = frame["callback_at"] as? Double,
               let e = frame["encoded_at"] as? Double, let s = frame["submitted_at"] as? Double {
                #expect(c <= e && e <= s, "frame \(i): callback \(c), encoded \(e), submitted \(s)")
                if frame["provenance"] as? String == "presentation-feedback" { #expect(t <= c, "frame \(i): vblank \(t) after callback \(c)") }
            } else {
                Issue.record("frame \(i): missing times")
            }
            if i > 0, let t = frame["timestamp"] as? Double, let p = frames[i - 1]["timestamp"] as? Double,
               let d = frame["delta"] as? Double {
                #expect(abs(d - (t - p)) < 1e-6, "frame \(i): delta \(d) ≠ \(t - p)")
            }
        }
        #expect(frames.first?["delta"] as? Double == 0)
        let presented = frames.filter { $0["presented"] is Double }.count
        #expect(presented >= expected - 2, "\(presented) of \(expected) frames have a presentation time")
        let summary = report["summary"] as? [String: Any] ?? [:]
        for field in Self.summaryFields { #expect(summary.keys.contains(field), "summary lacks \(field)") }
        #expect(summary["frames"] as? Int == expected)
        #expect(summary["presented"] as? Int == presented)
        let perRefresh = summary["presented_per_refresh"] as? Double ?? -1
        #expect(perRefresh > 0 && perRefresh <= 1.05, "presented per refresh \(perRefresh)")
        return frames
    }

    @Test("bounce: every contract field, deltas, presentation times")
    func bounceReport() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("bounce.json"), shot = temporaryPath("bounce.png"), plot = temporaryPath("plot.png")
        let run = try DemoProcess.run(["bounce", "--views", "30", "--size", "320x240", "--frames", "40", "--report", path,
                                       "--screenshot", shot, "--plot", plot], weston: weston)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try loadJSON(path)
        _ = checkCommon(report, scene: "bounce", frames: 40)
        #expect((report["summary"] as? [String: Any])?["views"] as? Int == 30)
        // The pictures are real PNGs.
        for file in [shot, plot] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(file) is not a PNG")
            #expect(data.count > 1000)
        }
    }

    @Test("scroll: offsets, fractions and the rows drawn; rows in the middle of the list are drawn")
    func scrollReport() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("scroll.json")
        let run = try DemoProcess.run(["scroll", "--rows", "1000", "--duration", "1", "--size", "320x240",
                                       "--frames", "60", "--report", path], weston: weston)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try loadJSON(path)
        let frames = checkCommon(report, scene: "scroll", frames: 60)
        #expect((report["summary"] as? [String: Any])?["rows"] as? Int == 1000)
        var middleDrawn = false
        var previousOffset = -1.0
        for frame in frames {
            guard let offset = frame["scroll_offset"] as? Double, let first = frame["first_row"] as? Int,
                  let last = frame["last_row"] as? Int else { Issue.record("scroll fields missing"); continue }
            #expect(frame.keys.contains("fraction"))
            #expect(offset >= previousOffset, "the scroll to the end only moves forward")
            previousOffset = offset
            // The rows drawn are exactly those visible at this offset (44-pixel rows, 208-pixel viewport).
            #expect(first == Int(offset / 44))
            #expect(last == min(999, Int(((offset + 208) / 44).rounded(.up)) - 1))
            if (400...600).contains(first) { middleDrawn = true }
        }
        #expect(middleDrawn, "no frame drew rows from the middle (400…600) of the list")
        // 60 frames at ~26 ms is past the 1 s duration: the scroll ended exactly at the end.
        #expect(abs((frames.last?["scroll_offset"] as? Double ?? 0) - (44_000 - 208)) < 1e-9)
        #expect(frames.last?["last_row"] as? Int == 999)
    }

    @Test("bad arguments: a clear message and exit status 2")
    func badArguments() throws {
        for arguments in [["bounce", "--views", "0"], ["scroll", "--curve", "bouncy"], ["bounce", "--size", "12x"],
                          ["bounce", "--frames", "5", "--seconds", "1"], ["fly"], ["bounce", "--mode", "12x"],
                          ["bounce", "--mode", "640x480@0"]] {
            let run = try DemoProcess.run(arguments, weston: nil)
            #expect(run.status == 2, "\(arguments): status \(run.status)")
            #expect(run.stderr.contains("Error:") || run.stderr.contains("error"), "\(arguments): \(run.stderr)")
        }
    }

    @Test("no display anywhere: auto says exactly what is missing and exits 1")
    func noDisplay() throws {
        let run = try DemoProcess.run(["bounce", "--frames", "5"], weston: nil)
        #expect(run.status == 1)
        #expect(run.stderr.contains("no display to run on"))
        #expect(run.stderr.contains("Wayland:"))
        #expect(run.stderr.contains("DRM"))
        #expect(run.stderr.contains("--headless"))
    }
}
