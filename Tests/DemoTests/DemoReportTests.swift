import Foundation
import Testing
import DisplayLinkCore
import DisplayLinkWaylandTesting
@testable import displaylink_demo

@Suite("The demo under a real weston: the report's contract", .serialized)
struct DemoReportTests {
    static let frameFields = [
        "index", "timestamp", "target_timestamp", "duration", "delta", "sequence", "missed",
        "provenance", "presented", "cpu_time", "callback_at", "encoded_at", "submitted_at", "deadline",
        "deadline_provenance", "render_estimate"
    ]
    static let summaryFields = [
        "frames", "presented", "discarded", "missed", "median_interval", "p99_interval",
        "stddev_interval", "median_prediction_error", "cpu_per_frame", "presented_rate",
        "presented_per_refresh", "startup_frames", "presented_per_refresh_after_startup",
        "refreshes", "refreshes_after_startup", "median_latency", "p99_latency"
    ]

    /// The contract every report keeps, at any machine speed: nothing here depends on how fast the
    /// host draws or how often weston presents (a loaded host presents less often, and frames are
    /// then further apart; none of that may fail a test). `expected` is the frame count of a
    /// `--frames` run, nil for a `--seconds` run (its count depends on the speed).
    func checkCommon(_ report: [String: Any], scene: String, frames expected: Int?) -> [[String: Any]] {
        #expect(report["backend"] as? String == "wayland")
        #expect(report["scene"] as? String == scene)
        let environment = report["environment"] as? [String: Any] ?? [:]
        #expect(environment["compositor"] as? String == "weston")
        #expect(environment["presentation_clock"] as? String == "CLOCK_MONOTONIC_RAW")
        #expect(environment["refresh_advertised"] is Double)
        #expect(environment["size"] as? String == "320x240")
        let frames = report["frames"] as? [[String: Any]] ?? []
        if let expected { #expect(frames.count == expected) } else { #expect(frames.count >= 2) }
        for (i, frame) in frames.enumerated() {
            for field in Self.frameFields { #expect(frame.keys.contains(field), "frame \(i) lacks \(field)") }
            #expect(frame["index"] as? Int == i)
            #expect((frame["cpu_time"] as? Double ?? -1) >= 0)
            // Drawing is encoded, then handed over; a callback with a measured presentation time
            // begins after it (estimates may lie a little ahead). The frame being prepared is seen
            // at or after the last vblank.
            if let t = frame["timestamp"] as? Double, let c = frame["callback_at"] as? Double,
                let e = frame["encoded_at"] as? Double, let s = frame["submitted_at"] as? Double,
                let target = frame["target_timestamp"] as? Double
            {
                #expect(c <= e && e <= s, "frame \(i): callback \(c), encoded \(e), submitted \(s)")
                if frame["provenance"] as? String == "presentation-feedback" {
                    #expect(t <= c, "frame \(i): vblank \(t) after callback \(c)")
                }
                #expect(target >= t, "frame \(i): target \(target) before its vblank \(t)")
            } else {
                Issue.record("frame \(i): missing times")
            }
            if i > 0, let t = frame["timestamp"] as? Double, let p = frames[i - 1]["timestamp"] as? Double,
                let d = frame["delta"] as? Double
            {
                #expect(abs(d - (t - p)) < 1e-6, "frame \(i): delta \(d) ≠ \(t - p)")
            }
        }
        #expect(frames.first?["delta"] as? Double == 0)
        // Every frame's fate is known except the last one or two: weston sends a frame's
        // presentation feedback when the repaint that showed it completes, before the frame
        // callback that starts the frame after next, so only frames still in flight when the run
        // stops may be unknown, whatever the speed (the demo then waits a bounded time for them,
        // which a slow host may not meet). So: no unknown frame before the last known one, at most
        // two unknown at the end. (Not "all but two presented within 400 ms": that is a speed.)
        let presented = frames.filter { $0["presented"] is Double }.count
        let known = frames.map { $0["presented"] is Double || $0["discarded"] as? Bool == true }
        let unknownAtEnd = known.reversed().prefix { !$0 }.count
        #expect(known.dropLast(unknownAtEnd).allSatisfy { $0 }, "a frame before the last known one has no fate: \(known)")
        #expect(unknownAtEnd <= 2, "\(unknownAtEnd) frames at the end have no fate")
        let summary = report["summary"] as? [String: Any] ?? [:]
        for field in Self.summaryFields { #expect(summary.keys.contains(field), "summary lacks \(field)") }
        #expect(summary["frames"] as? Int == frames.count)
        #expect(summary["presented"] as? Int == presented)
        #expect(summary["discarded"] as? Int == frames.filter { $0["discarded"] as? Bool == true }.count)
        // New frames per refresh: the summary says what its frames say (recomputed here). Its
        // value depends on the host's speed (a loaded host presents less often), but it is a
        // share of refreshes, so in (0, 1] at any speed.
        let startup = summary["startup_frames"] as? Int ?? -1
        #expect(startup >= 0)
        let perRefresh = Self.refreshShare(frames[...])
        #expect(
            Self.same(summary["presented_per_refresh"] as? Double, perRefresh?.share),
            "presented_per_refresh \(String(describing: summary["presented_per_refresh"])) ≠ \(String(describing: perRefresh))")
        #expect(summary["refreshes"] as? Int == perRefresh?.refreshes)
        if presented >= 2 { #expect((perRefresh?.share ?? 0) > 0 && (perRefresh?.share ?? 2) <= 1, "\(String(describing: perRefresh))") }
        let afterStartup = frames.count > startup + 1 ? Self.refreshShare(frames.dropFirst(max(startup, 0))) : nil
        #expect(Self.same(summary["presented_per_refresh_after_startup"] as? Double, afterStartup?.share))
        #expect(summary["refreshes_after_startup"] as? Int == afterStartup?.refreshes)
        if let share = afterStartup?.share { #expect(share > 0 && share <= 1, "\(String(describing: afterStartup))") }
        let times = frames.compactMap { $0["presented"] as? Double }
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 }, "presentation times go back or repeat")
        return frames
    }

    /// The report's definition (FrameReport.RefreshShare), from the JSON: the distinct
    /// presentation times after the first, over the refreshes between consecutive ones, each gap
    /// counted in periods of the median frame duration, rounded, at least 1.
    static func refreshShare(_ frames: ArraySlice<[String: Any]>) -> (presented: Int, refreshes: Int, share: Double)? {
        let times = Set(frames.compactMap { $0["presented"] as? Double }).sorted()
        let durations = frames.compactMap { $0["duration"] as? Double }.sorted()
        guard times.count > 1, !durations.isEmpty else { return nil }
        let period = durations[Int((0.5 * Double(durations.count - 1)).rounded())]
        guard period > 0 else { return nil }
        let refreshes = zip(times.dropFirst(), times).reduce(0) { $0 + max(1, Int((($1.0 - $1.1) / period).rounded())) }
        return (times.count - 1, refreshes, Double(times.count - 1) / Double(refreshes))
    }

    static func same(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (a?, b?): return abs(a - b) <= 1e-9 * max(1, abs(b))
        default: return false
        }
    }

    // MARK: Presented per refresh, on synthetic frames (exact, no display)

    /// A frame of `duration` ns presented at `presented` ns (nil: not presented).
    static func record(duration: Int64, presented: Int64?, at index: Int = 0) -> FrameRecord {
        let t = MonotonicInstant(nanoseconds: 1_000_000_000 + Int64(index) * 1_000_000)
        let frame = DisplayFrame(
            timestamp: t, targetTimestamp: t, duration: Nanoseconds(duration), delta: Nanoseconds(0),
            sequence: UInt64(index + 1), missedFrames: 0, provenance: .presentationFeedback,
            refreshIndex: UInt64(index), frameInterval: 1)
        return FrameRecord(
            frame: frame, presented: presented.map { MonotonicInstant(nanoseconds: $0) }, cpuTime: 0,
            callbackAt: t, encodedAt: t, submittedAt: t)
    }

    /// Frames with these durations presented after these gaps (the first at 2 s).
    static func records(durations: [Int64], gaps: [Int64]) -> [FrameRecord] {
        var at: Int64 = 2_000_000_000
        return durations.indices.map { i in
            if i > 0 { at += gaps[i - 1] }
            return record(duration: durations[i], presented: at, at: i)
        }
    }

    /// The refreshes the span from the first presentation to the last holds in median frame
    /// durations, rounded: a count with no tie to the presentations in it.
    static func spanOverPeriod(_ records: ArraySlice<FrameRecord>) -> Int64 {
        let times = records.compactMap { $0.presented?.nanoseconds }
        let period = Statistics.percentile(records.map { Double($0.frame.duration.value) }, 0.5) ?? .nan
        return Int64((Double(times.last! - times.first!) / period).rounded())
    }

    @Test(
        """
        presented per refresh, weston 10's shape: a first commit three repaints long and a period measured 2 % long give 117/119 and \
        107/107, never more presentations than refreshes
        """
    )
    func presentedPerRefreshWeston10() throws {
        // weston 10 headless: advertised 16.67 ms (the first two frames' duration), repaints
        // every 25.4 ms; the scheduler's measured period, 25.9 ms, is 2 % long.
        let records = Self.records(
            durations: [16_666_667, 16_666_667] + Array(repeating: 25_900_000, count: 116),
            gaps: [76_200_000] + Array(repeating: 25_400_000, count: 116))
        // The span over the period counts 117 refreshes for the 117 presentations after the
        // first, and 105 for the 107 after start-up: the 1.0 and 1.019 of such a run.
        #expect(Self.spanOverPeriod(records[...]) == 117)
        #expect(Self.spanOverPeriod(records.dropFirst(FrameReport.startupFrames)) == 105)

        // The first gap is three repaints, two without a new frame; every other one is one.
        let all = try #require(FrameReport.refreshShare(records[...]))
        #expect(all == FrameReport.RefreshShare(presented: 117, refreshes: 119))
        #expect(all.share == 117.0 / 119.0)
        let afterStartup = try #require(FrameReport.refreshShare(records.dropFirst(FrameReport.startupFrames)))
        #expect(afterStartup == FrameReport.RefreshShare(presented: 107, refreshes: 107))
        #expect(afterStartup.share == 1)

        // The summary, the JSON and the printed figures say the same.
        let report = FrameReport(
            backend: "wayland", scene: "scroll", environment: [], records: records, discarded: 0,
            sceneCount: ("rows", 1000))
        let summary = report.summary
        #expect(summary.presentedPerRefresh == 117.0 / 119.0)
        #expect(summary.presentedPerRefreshAfterStartup == 1)
        #expect(summary.refreshShare?.description == "117/119")
        #expect(summary.refreshShareAfterStartup?.description == "107/107")
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let fields = try #require(json["summary"] as? [String: Any])
        for field in Self.summaryFields { #expect(fields.keys.contains(field), "summary lacks \(field)") }
        #expect(fields["refreshes"] as? Int == 119)
        #expect(fields["refreshes_after_startup"] as? Int == 107)
        let frames = try #require(json["frames"] as? [[String: Any]])
        let recomputed = try #require(Self.refreshShare(frames[...]))
        #expect(recomputed.presented == 117 && recomputed.refreshes == 119)
        #expect(Self.same(fields["presented_per_refresh"] as? Double, recomputed.share))
    }

    @Test(
        """
        presented per refresh: a new frame at every repaint, a few of them late, is 1 (the span over the median period counts one refresh \
        too many)
        """
    )
    func presentedPerRefreshLateRepaints() throws {
        // 107 repaints 25.3 ms apart and 10 late ones, 28.4 ms; the measured period 25.39 ms.
        let gaps = (0..<117).map { $0 % 12 == 5 ? Int64(28_400_000) : 25_300_000 }
        #expect(gaps.filter { $0 == 28_400_000 }.count == 10)
        let records = Self.records(durations: Array(repeating: 25_390_000, count: 118), gaps: gaps)
        #expect(Self.spanOverPeriod(records[...]) == 118)
        #expect(FrameReport.refreshShare(records[...]) == FrameReport.RefreshShare(presented: 117, refreshes: 117))
        #expect(FrameReport.presentedPerRefresh(records[...]) == 1)
    }

    @Test(
        """
        presented per refresh: every other refresh is 1/2; unpresented frames and repeated presentation times add no presentation; under \
        two presentation times or no period, none
        """
    )
    func presentedPerRefreshCounts() {
        let halves = Self.records(durations: Array(repeating: 16_666_667, count: 21), gaps: Array(repeating: 33_333_334, count: 20))
        #expect(FrameReport.refreshShare(halves[...]) == FrameReport.RefreshShare(presented: 20, refreshes: 40))
        // Gaps of 1, 1 and 3 periods, with a discarded frame, one never known, and a frame
        // reported at the same time as the one before it (the same refresh).
        let p: Int64 = 20_000_000, t0: Int64 = 5_000_000_000
        let mixed = [
            Self.record(duration: p, presented: t0, at: 0), Self.record(duration: p, presented: nil, at: 1),
            Self.record(duration: p, presented: t0 + p, at: 2), Self.record(duration: p, presented: t0 + p, at: 3),
            Self.record(duration: p, presented: t0 + 2 * p, at: 4), Self.record(duration: p, presented: nil, at: 5),
            Self.record(duration: p, presented: t0 + 5 * p + p / 3, at: 6)
        ]
        #expect(FrameReport.refreshShare(mixed[...]) == FrameReport.RefreshShare(presented: 3, refreshes: 5))
        #expect(FrameReport.refreshShare(mixed.prefix(2)) == nil)
        #expect(FrameReport.refreshShare(mixed[2..<4]) == nil)
        #expect(FrameReport.refreshShare([]) == nil)
        let noPeriod = [Self.record(duration: 0, presented: t0, at: 0), Self.record(duration: 0, presented: t0 + p, at: 1)]
        #expect(FrameReport.refreshShare(noPeriod[...]) == nil)
    }

    @Test(
        """
        latency: presented − callback_at over the presented frames from frame 3 on, median and p99 by nearest rank, in the summary and \
        the JSON; render_estimate per frame, null when unknown
        """
    )
    func latencySummary() throws {
        // Callbacks 1 ms apart (the helper's times); frames 0–2 took 100 ms (left out), frame 5
        // was never presented, the others 10, 11, … ms after their callbacks.
        let milliseconds: [Int64?] = [100, 100, 100, 10, 11, nil, 12, 13, 14, 40]
        var records = milliseconds.indices.map { i in
            Self.record(duration: 16_666_667, presented: milliseconds[i].map { 1_000_000_000 + (Int64(i) + $0) * 1_000_000 }, at: i)
        }
        records[4].frame.renderEstimate = Nanoseconds(2_000_000)
        let report = FrameReport(
            backend: "wayland", scene: "bounce", environment: [], records: records, discarded: 0, sceneCount: ("views", 60))
        // Six latencies, 10…14 and 40 ms: rank 0.5 · 5 = 2.5, rounded away from zero, → the 4th (13 ms);
        // 0.99 · 5 → the 6th (40 ms).
        let summary = report.summary
        #expect(Self.same(summary.medianLatency, 0.013))
        #expect(Self.same(summary.p99Latency, 0.040))
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let fields = try #require(json["summary"] as? [String: Any])
        #expect(Self.same(fields["median_latency"] as? Double, 0.013))
        #expect(Self.same(fields["p99_latency"] as? Double, 0.040))
        let frames = try #require(json["frames"] as? [[String: Any]])
        #expect(frames[4]["render_estimate"] as? Double == 0.002)
        #expect(frames[3]["render_estimate"] is NSNull)
        // None presented after the warm-up: no latency.
        let early = FrameReport(
            backend: "wayland", scene: "bounce", environment: [], records: Array(records.prefix(3)), discarded: 0,
            sceneCount: ("views", 60))
        #expect(early.summary.medianLatency == nil && early.summary.p99Latency == nil)
    }

    @Test("presented per refresh: for arbitrary frame lists, a share in (0, 1] of the distinct presentation times after the first")
    func presentedPerRefreshBounds() {
        // SplitMix64: the same lists on every run.
        var state: UInt64 = 0x5EED_0F_DEC0DE
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func below(_ n: UInt64) -> Int64 { Int64(next() % n) }
        for list in 0..<2000 {
            let count = Int(below(40))
            var at = below(1 << 40)
            let records = (0..<count).map { i -> FrameRecord in
                // Durations from 0 to 60 ms; gaps back, none, fractions of a period, long stalls;
                // now and then a time anywhere in Int64 (the Double path).
                let duration = below(8) == 0 ? below(3) : below(60_000_000)
                switch below(10) {
                case 0: at = at &- below(50_000_000)
                case 1: break
                case 2: at = Int64(bitPattern: next())
                case 3: at = at &+ below(10_000_000_000)
                default: at = at &+ below(80_000_000)
                }
                return Self.record(duration: duration, presented: below(6) == 0 ? nil : at, at: i)
            }
            let distinct = Set(records.compactMap { $0.presented?.nanoseconds }).count
            let durations = records.map { Double($0.frame.duration.value) }
            let hasPeriod = (Statistics.percentile(durations, 0.5) ?? 0) > 0
            guard let result = FrameReport.refreshShare(records[...]) else {
                #expect(distinct < 2 || !hasPeriod, "list \(list): no share for \(distinct) presentation times")
                continue
            }
            #expect(distinct >= 2 && hasPeriod)
            #expect(result.presented == distinct - 1, "list \(list)")
            #expect(result.presented <= result.refreshes, "list \(list): \(result)")
            #expect(result.share > 0 && result.share <= 1, "list \(list): \(result)")
        }
    }

    @Test("bounce: every contract field, deltas, presentation times")
    func bounceReport() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("bounce.json"), shot = temporaryPath("bounce.png"), plot = temporaryPath("plot.png")
        let run = try DemoProcess.run(
            [
                "bounce", "--views", "30", "--size", "320x240", "--frames", "40", "--report", path,
                "--screenshot", shot, "--plot", plot
            ], weston: weston)
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

    @Test("scroll: each frame's offset is the curve at its target time, rows drawn follow it, the end is exact")
    func scrollReport() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("scroll.json")
        // Stopped by time, not by a frame count: the run ends at the first frame whose vblank is
        // ≥ 1.5 s after the first one, so its target (≥ its vblank) is past the 1 s scroll
        // however slow the host (60 frames were past it only at weston's usual ~26 ms a frame).
        let duration = 1.0, seconds = 1.5
        let run = try DemoProcess.run(
            [
                "scroll", "--rows", "1000", "--duration", String(duration), "--size", "320x240",
                "--seconds", String(seconds), "--report", path
            ], weston: weston)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let report = try loadJSON(path)
        let frames = checkCommon(report, scene: "scroll", frames: nil)
        #expect((report["summary"] as? [String: Any])?["rows"] as? Int == 1000)
        let end = 1000 * 44.0 - 208  // 44-pixel rows, 208-pixel viewport
        // The scroll starts at the first frame (no --delay): fraction = (target − first vblank) / duration.
        let start = frames.first?["timestamp"] as? Double ?? .nan
        var previousOffset = -1.0, previousFraction = -Double.infinity, ended = false, midScroll = 0
        for (i, frame) in frames.enumerated() {
            guard let offset = frame["scroll_offset"] as? Double, let first = frame["first_row"] as? Int,
                let last = frame["last_row"] as? Int, let target = frame["target_timestamp"] as? Double
            else { Issue.record("frame \(i): scroll fields missing"); continue }
            #expect(frame.keys.contains("fraction"))
            let fraction = frame["fraction"] as? Double
            if ended {
                // Once finished the scroll is idle: no fraction, exactly at the end.
                #expect(fraction == nil, "frame \(i): fraction \(String(describing: fraction)) after the end")
                #expect(offset == end, "frame \(i): offset \(offset) after the end")
            } else if let fraction {
                let expected = (target - start) / duration
                #expect(abs(fraction - expected) < 1e-9, "frame \(i): fraction \(fraction), target says \(expected)")
                if fraction >= 1 || fraction < previousFraction {
                    // At the end (or if the target went back) it snaps exactly to the end.
                    #expect(offset == end, "frame \(i): fraction \(fraction), offset \(offset)")
                    ended = true
                } else {
                    let t = fraction, curve = t * t * (3 - 2 * t)  // ease-in-out
                    #expect(abs(offset - end * curve) < 1e-6, "frame \(i): offset \(offset), curve says \(end * curve)")
                    if offset > 0 && offset < end { midScroll += 1 }
                }
                previousFraction = fraction
            } else {
                Issue.record("frame \(i): no fraction while scrolling")
            }
            #expect(offset >= previousOffset, "frame \(i): the scroll to the end only moves forward")
            previousOffset = offset
            // The rows drawn are exactly those visible at this offset.
            #expect(first == Int(offset / 44), "frame \(i)")
            #expect(last == min(999, Int(((offset + 208) / 44).rounded(.up)) - 1), "frame \(i)")
        }
        // Animated, not a jump: the first frame is one or a few predicted periods past its vblank,
        // so at least that one is strictly between the ends. (Which rows of the middle of the list
        // a run draws depends on when its frames fall, so it is not asserted here; the rows drawn
        // at every frame are checked above, and MotionTests/ScenePixelTests pin mid-list rows.)
        #expect(midScroll >= 1, "no frame was drawn mid-scroll")
        // The last frame's vblank is ≥ 1.5 s after the first, its target no earlier: at the end.
        #expect(ended, "the scroll never reached its end")
        #expect(frames.last?["scroll_offset"] as? Double == end)
        #expect(frames.last?["last_row"] as? Int == 999)
    }

    @Test("--fixed-step: the scene moves on a virtual clock, one step a frame whatever the real times; the report keeps the real ones")
    func fixedStep() throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let path = temporaryPath("fixed-step.json")
        // A linear scroll over 100 s of the 43,792-pixel list: 437.92 px a second, 4.3792 px a 10 ms step.
        let run = try DemoProcess.run(
            [
                "scroll", "--rows", "1000", "--duration", "100", "--curve", "linear", "--size", "320x240",
                "--fixed-step", "0.01", "--frames", "12", "--report", path
            ], weston: weston)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let frames = checkCommon(try loadJSON(path), scene: "scroll", frames: 12)
        let end = 1000 * 44.0 - 208, speed = end / 100
        for (n, frame) in frames.enumerated() {
            // Frame n is drawn at its virtual target: (n + 1) steps after the first frame.
            let offset = frame["scroll_offset"] as? Double ?? .nan
            #expect(abs(offset - speed * 0.01 * Double(n + 1)) < 1e-6, "frame \(n): offset \(offset)")
        }
        // The real timeline is reported as it was (presented frames ~16-40 ms apart, not 10 ms).
        let first = frames.first?["timestamp"] as? Double ?? .nan, last = frames.last?["timestamp"] as? Double ?? .nan
        #expect(last - first > 11 * 0.01, "real timestamps span \(last - first) s")
        for value in ["-1", "2", "nan"] {
            let bad = try DemoProcess.run(["bounce", "--fixed-step", value], weston: nil)
            #expect(bad.status == 2 && bad.stderr.contains("--fixed-step"), "\(value): \(bad.status) \(bad.stderr)")
        }
    }

    @Test("bad arguments: a clear message and exit status 2")
    func badArguments() throws {
        for arguments in [
            ["bounce", "--views", "0"], ["scroll", "--curve", "bouncy"], ["bounce", "--size", "12x"],
            ["bounce", "--frames", "5", "--seconds", "1"], ["fly"], ["bounce", "--mode", "12x"],
            ["bounce", "--mode", "640x480@0"], ["bounce", "--latency", "fast"], ["bounce", "--latency", "throughput", "--low-latency"]
        ] {
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
