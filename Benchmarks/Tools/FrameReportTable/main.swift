// One table from the demo's frame timing reports (the JSON written by `displaylink-demo ...
// --report FILE`), a row per report: frames, presented, new frames per refresh, prediction error
// and the per-frame budget. Prints figures and asserts nothing: exits 0 whatever they are, and
// non-zero only when a report cannot be read.
//
//   FrameReportTable [--title TEXT] [[--label LABEL] REPORT.json]...
//
// `--label` names the next report's run (e.g. "atomic" / "legacy" for the same scene), so runs
// of one scene under different settings sit side by side. DRM reports add their driver, KMS API
// and pacing (vblank events or a timer). When a scene has several runs, a second table gives each
// later run's figures as ratios to the scene's first run (measured in the same invocation).
import Foundation

func complain(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

struct Run {
    var label: String?
    var path: String
}

var title: String?
var runs: [Run] = []
do {
    var args = Array(CommandLine.arguments.dropFirst())[...]
    var label: String?
    while let a = args.popFirst() {
        switch a {
        case "--title", "--label":
            guard let v = args.popFirst() else { complain("FrameReportTable: \(a) needs a value"); exit(2) }
            if a == "--title" { title = v } else { label = v }
        case "-h", "--help":
            print("usage: FrameReportTable [--title TEXT] [[--label LABEL] REPORT.json]...")
            exit(0)
        default:
            if a.hasPrefix("-") { complain("FrameReportTable: unknown option \(a)"); exit(2) }
            runs.append(Run(label: label, path: a))
            label = nil
        }
    }
}
guard !runs.isEmpty else { complain("usage: FrameReportTable [--title TEXT] [[--label LABEL] REPORT.json]..."); exit(2) }

/// The same percentile as the demo's summary (nearest rank, rounded), so a median here equals the
/// report's own.
func percentile(_ values: [Double], _ p: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let rank = Int((p * Double(sorted.count - 1)).rounded())
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

func ms(_ seconds: Double?) -> String { seconds.map { String(format: "%.2f", $0 * 1000) } ?? "n/a" }
func ratio(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "n/a" }

struct Row {
    var run: String
    var scene: String
    var cells: [String]
    /// For the ratios: swap+flip median, |target − presented| median, CPU per frame, new frames/refresh.
    var figures: [Double?]
}

var rows: [Row] = []
var failed = false
for run in runs {
    guard let data = FileManager.default.contents(atPath: run.path),
        let report = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
        let summary = report["summary"] as? [String: Any],
        let frames = report["frames"] as? [[String: Any]]
    else {
        complain("FrameReportTable: cannot read a report from \(run.path)")
        failed = true
        continue
    }
    let scene = report["scene"] as? String ?? "?"
    let backend = report["backend"] as? String ?? "?"
    // Per frame: |target − presented| (presented frames only), encode = encoded_at − callback_at,
    // swap+flip = submitted_at − encoded_at.
    var errors: [Double] = [], encode: [Double] = [], submit: [Double] = []
    for f in frames {
        if let t = f["target_timestamp"] as? Double, let p = f["presented"] as? Double { errors.append(abs(t - p)) }
        if let c = f["callback_at"] as? Double, let e = f["encoded_at"] as? Double, let s = f["submitted_at"] as? Double {
            encode.append(e - c)
            submit.append(s - e)
        }
    }
    let name = [scene, run.label].compactMap { $0 }.joined(separator: " ")
    let environment = report["environment"] as? [String: Any] ?? [:]
    let drm = [environment["driver"], environment["kms_api"], environment["pacing"]].compactMap { $0 as? String }
    rows.append(
        Row(
            run: name, scene: scene,
            cells: [
                backend + (drm.isEmpty ? "" : " (" + drm.joined(separator: ", ") + ")"),
                (summary["frames"] as? Int).map(String.init) ?? "n/a",
                (summary["presented"] as? Int).map(String.init) ?? "n/a",
                ratio(summary["presented_per_refresh_after_startup"] as? Double),
                ratio(summary["presented_per_refresh"] as? Double),
                ms(percentile(errors, 0.5)), ms(percentile(errors, 0.99)),
                ms(percentile(encode, 0.5)), ms(percentile(encode, 0.99)),
                ms(percentile(submit, 0.5)), ms(percentile(submit, 0.99)),
                ms(summary["cpu_per_frame"] as? Double)
            ],
            figures: [
                percentile(submit, 0.5), percentile(errors, 0.5), summary["cpu_per_frame"] as? Double,
                summary["presented_per_refresh_after_startup"] as? Double
            ]))
}

let startup = "after start-up"
let header = [
    "run", "backend", "frames", "presented", "new frames/refresh \(startup)", "new frames/refresh from frame 0",
    "median abs(target − presented) ms", "p99 abs(target − presented) ms",
    "encode median ms", "encode p99 ms", "swap+flip median ms", "swap+flip p99 ms", "CPU ms / frame"
]
if let title { print(title) }
print("| " + header.joined(separator: " | ") + " |")
print("|---|---|" + String(repeating: "---:|", count: header.count - 2))
for row in rows { print("| " + ([row.run] + row.cells).joined(separator: " | ") + " |") }
print("(start-up: the reports' startup_frames; encode = encoded_at − callback_at; swap+flip = submitted_at − encoded_at)")
// Ratios to each scene's first run.
var firstOfScene: [String: Row] = [:]
var ratioRows: [String] = []
for row in rows {
    guard let first = firstOfScene[row.scene] else { firstOfScene[row.scene] = row; continue }
    let cells = zip(row.figures, first.figures).map { a, b -> String in
        guard let a, let b, b > 1e-6 else { return "n/a" }  // no ratio to (nearly) nothing
        return String(format: "%.2f", a / b)
    }
    ratioRows.append("| \(row.run) / \(first.run) | " + cells.joined(separator: " | ") + " |")
}
if !ratioRows.isEmpty {
    print()
    print("| ratio | swap+flip median | median abs(target − presented) | CPU / frame | new frames/refresh after start-up |")
    print("|---|---:|---:|---:|---:|")
    ratioRows.forEach { print($0) }
}
exit(failed ? 1 : 0)
