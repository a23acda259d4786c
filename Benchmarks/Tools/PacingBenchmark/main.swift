// Pacing benchmark: on one private headless weston, runs a peer client (weston-simple-egl unless
// --peer names another) and then the demo's client at the same size for the same time, and prints each one's presented frame rate (from
// weston's own timeline, so both are measured the same way), presentation intervals, CPU per
// presented frame, and the demo's prediction error.
//
//   PacingBenchmark --demo PATH [--seconds S] [--size 250] [--scene quad|bounce] [--views N] [--no-hud]
//                   [--peer "COMMAND ARGS"]   (default weston-simple-egl; stopped with SIGINT)
//   PacingBenchmark --demo PATH --scene bounce --compare-views 60,20000 [--seconds S]
//   PacingBenchmark --demo PATH --compare-scenes bounce,images,stroke [--seconds S] [--no-hud]
//                   (each scene at its defaults; the first is the reference of the ratios)
import Foundation
import DisplayLinkWaylandTesting

func complain(_ message: String) {
    FileHandle.standardError.write(Data(message.utf8))
}

struct Options {
    var demo = "../.build/release/displaylink-demo"
    var seconds = 10.0
    var size = 250
    var scene = "bounce"
    var extra: [String] = []
    var compareViews: [Int] = []
    var compareScenes: [String] = []
    var peer = ["weston-simple-egl"]

    init(_ args: [String]) {
        var i = 0
        while i < args.count {
            let a = args[i], v = i + 1 < args.count ? args[i + 1] : ""
            switch a {
            case "--demo": demo = v; i += 1
            case "--seconds": seconds = Double(v) ?? seconds; i += 1
            case "--size": size = Int(v) ?? size; i += 1
            case "--scene": scene = v; i += 1
            case "--views": extra += ["--views", v]; i += 1
            case "--no-hud": extra += ["--no-hud"]
            case "--peer": peer = v.split(separator: " ").map(String.init); i += 1
            case "--compare-views": compareViews = v.split(separator: ",").compactMap { Int($0) }; i += 1
            case "--compare-scenes": compareScenes = v.split(separator: ",").map(String.init); i += 1
            default: complain("PacingBenchmark: unknown argument \(a)\n"); exit(2)
            }
            i += 1
        }
    }
}

struct RunResult {
    var name: String
    var vblanks: [Double]  // presentation times (s, weston's presentation clock)
    var cpuSeconds: Double  // user + system, all threads
    var report: [String: Any]?  // the demo's summary
    var presentedRate: Double { vblanks.count > 1 ? Double(vblanks.count - 1) / (vblanks.last! - vblanks.first!) : 0 }
    var intervals: [Double] { zip(vblanks.dropFirst(), vblanks).map { $0 - $1 }.sorted() }
    func percentile(_ p: Double) -> Double { let s = intervals; return s.isEmpty ? 0 : s[min(s.count - 1, Int(p * Double(s.count - 1)))] }
    var cpuPerFrame: Double { vblanks.isEmpty ? 0 : cpuSeconds / Double(vblanks.count) }
}

func rawNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs a program against the compositor; stops it with SIGINT after `seconds` unless it exits by
/// itself; returns its CPU time (wait4's rusage covers all its threads).
@MainActor func runClient(_ argv: [String], weston: HeadlessWeston, seconds: Double?) -> (cpu: Double, status: Int32) {
    let dir = weston.runtimeDirectory
    let name = (weston.socketPath as NSString).lastPathComponent
    var env = ProcessInfo.processInfo.environment
    env["XDG_RUNTIME_DIR"] = dir
    env["WAYLAND_DISPLAY"] = name
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    let args = argv.map { strdup($0) } + [nil]
    defer { (envp + args).forEach { free($0) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, argv[0], nil, nil, args, envp) == 0 else {
        complain("PacingBenchmark: cannot start \(argv[0])\n"); exit(1)
    }
    if let seconds {
        usleep(useconds_t(seconds * 1_000_000))
        kill(pid, SIGINT)
    }
    var status: Int32 = 0
    var usage = rusage()
    // A client that neither stops by itself nor on SIGINT within 60 s is killed and reported.
    var waited = 0
    while wait4(pid, &status, WNOHANG, &usage) == 0 {
        if waited == 60_000 {
            complain("PacingBenchmark: \(argv[0]) did not exit; killing it\n")
            kill(pid, SIGKILL)
            wait4(pid, &status, 0, &usage)
            break
        }
        usleep(1000)
        waited += 1
    }
    let cpu =
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return (cpu, status)
}

/// weston's timeline: presentation (vblank) times of every repaint between two instants.
func vblanks(in log: String, from start: Double, to end: Double) -> [Double] {
    var out: [Double] = []
    for line in log.split(separator: "\n") where line.contains("core_repaint_finished") {
        guard let r = line.range(of: "\"vblank_monotonic\":[") else { continue }
        let rest = line[r.upperBound...]
        let nums = rest.prefix { $0 != "]" }.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard nums.count == 2 else { continue }
        let t = nums[0] + nums[1] / 1e9
        if t >= start && t <= end { out.append(t) }
    }
    return out
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
guard FileManager.default.isExecutableFile(atPath: options.demo) else {
    complain("PacingBenchmark: demo not found at \(options.demo) (build it first)\n"); exit(1)
}
let weston: HeadlessWeston
do {
    weston = try HeadlessWeston(width: 640, height: 480, extraArguments: ["--debug", "--logger-scopes=log,timeline"])
} catch {
    complain("PacingBenchmark: \(error)\n"); exit(1)
}
defer { weston.stop() }
let warmUp = 0.5
let size = "\(options.size)x\(options.size)"

@MainActor func measure(_ name: String, _ argv: [String], stopAfter: Double?, report: String?) -> RunResult {
    let start = rawNow()
    let (cpu, status) = runClient(argv, weston: weston, seconds: stopAfter)
    let end = rawNow()
    usleep(300_000)  // let the last presentations reach the log
    if status != 0 && stopAfter == nil { complain("PacingBenchmark: \(name) exited with status \(status)\n") }
    // Presentation times of the client's frames: the demo reports each of its frames' own
    // (wp_presentation, exact per frame); for other clients every compositor repaint in the
    // window is theirs (weston's timeline), which holds for a client that keeps up.
    var times = vblanks(in: weston.readLog(), from: start + warmUp, to: end)
    var summary: [String: Any]?
    if let report, let data = FileManager.default.contents(atPath: report),
        let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    {
        summary = json["summary"] as? [String: Any]
        let presented = (json["frames"] as? [[String: Any]] ?? []).compactMap { $0["presented"] as? Double }
        if let first = presented.first {
            times = presented.filter { $0 >= first + warmUp }
        }
    }
    usleep(700_000)  // a quiet gap between runs
    return RunResult(name: name, vblanks: times, cpuSeconds: cpu, report: summary)
}

func f(_ x: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", x) }

func printTable(_ results: [RunResult]) {
    print(
        "| client | presented fps | median interval ms | p99 interval ms | CPU ms / presented frame | median abs(target − presented) ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results {
        let err = (r.report?["median_prediction_error"] as? Double).map { f($0 * 1000) } ?? "n/a"
        print(
            """
            | \(r.name) | \(f(r.presentedRate, 2)) | \(f(r.percentile(0.5) * 1000)) | \(f(r.percentile(0.99) * 1000)) | \
            \(f(r.cpuPerFrame * 1000)) | \(err) |
            """
        )
    }
}

let reportPath = weston.runtimeDirectory + "/pacing-report.json"
print(
    """
    Pacing benchmark: one private headless weston (pixman), \(size) windows, \(f(options.seconds, 1)) s each, first \(warmUp) s not \
    counted.
    """
)
print("Presentation times: the demo's own wp_presentation feedback; the peer's from weston's repaint timeline.")
if options.compareViews.count == 2 {
    // Same scene at two sizes: does scene size cost cadence?
    var results: [RunResult] = []
    for views in options.compareViews {
        let r = measure(
            "demo \(options.scene) \(views) views",
            [
                options.demo, options.scene, "--backend", "wayland", "--size", size, "--views", String(views),
                "--seconds", String(options.seconds), "--report", reportPath
            ], stopAfter: nil, report: reportPath)
        results.append(r)
    }
    printTable(results)
    let ratio = results[1].presentedRate / max(results[0].presentedRate, 1e-9)
    print("presented-rate ratio (\(options.compareViews[1]) views / \(options.compareViews[0]) views): \(f(ratio)) (goal ≥ 0.98)")
} else if options.compareScenes.count >= 2 {
    // Other scenes against the first in one weston session, one after another: the ratios
    // compare runs on the same compositor under the same load, which a ratio of figures from
    // separate runs (rates swing by 2x between runs on a shared machine) would not.
    var results: [RunResult] = []
    for scene in options.compareScenes {
        var r = measure(
            "demo \(scene)",
            [
                options.demo, scene, "--backend", "wayland", "--size", size, "--seconds", String(options.seconds),
                "--report", reportPath
            ] + options.extra.filter { $0 == "--no-hud" }, stopAfter: nil, report: reportPath)
        // The scene's size as its report names it (views, images, points).
        if let field = ["views", "images", "points", "rows"].first(where: { r.report?[$0] is Int }), let n = r.report?[field] as? Int {
            r.name += " \(n) \(field)"
        }
        results.append(r)
    }
    printTable(results)
    let reference = results[0]
    for r in results.dropFirst() {
        let ratio = r.presentedRate / max(reference.presentedRate, 1e-9)
        let cpuRatio = r.cpuPerFrame / max(reference.cpuPerFrame, 1e-12)
        print("\(r.name) / \(reference.name): presented-rate ratio \(f(ratio)), CPU per presented frame ratio \(f(cpuRatio))")
    }
} else {
    let peerName = (options.peer[0] as NSString).lastPathComponent
    let peer = measure(peerName, options.peer, stopAfter: options.seconds, report: nil)
    let ours = measure(
        "displaylink-demo \(options.scene)" + (options.extra.contains("--no-hud") ? " (no HUD)" : ""),
        [
            options.demo, options.scene, "--backend", "wayland", "--size", size, "--seconds", String(options.seconds),
            "--report", reportPath
        ] + options.extra, stopAfter: nil, report: reportPath)
    printTable([peer, ours])
    let ratio = ours.presentedRate / max(peer.presentedRate, 1e-9)
    let cpuRatio = ours.cpuPerFrame / max(peer.cpuPerFrame, 1e-12)
    let goals = peerName == "weston-simple-egl"
    print("presented-rate ratio (demo / \(peerName)): \(f(ratio))" + (goals ? " (goal ≥ 1.00)" : ""))
    print("CPU per presented frame ratio (demo / \(peerName)): \(f(cpuRatio))" + (goals ? " (goal ≤ 1.00)" : ""))
    if let e = ours.report?["median_prediction_error"] as? Double {
        print("median abs(targetTimestamp − presented): \(f(e * 1000)) ms (goal < 0.5 ms)")
    }
}
