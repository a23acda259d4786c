import DRMBackend
import DisplayLinkCore
import DisplayLinkWaylandTesting
import Foundation
import GLESRenderer
import Testing

/// A link on a DRM display that draws (or not) and records frames and presentations.
@MainActor
final class FlipClient {
    let display: DRMDisplay
    var link: DisplayLink?
    var frames: [DisplayFrame] = []
    var presented: [UInt64: (time: MonotonicInstant, sequence: UInt64?)] = [:]
    /// The refreshes whose frames were never shown.
    var discarded: Set<UInt64> = []
    /// When each callback ran (`frames` has the refresh it was for).
    var callbackTimes: [MonotonicInstant] = []
    var draws = true
    /// Callbacks at the start that draw nothing (a program whose assets are still loading).
    var drawsNothingFirst = 0
    /// Simulates a renderer that needs more than the period: the frame is presented only this
    /// long after its vblank.
    var presentAfterVblank: Nanoseconds?
    var painter = ScissorPainter()
    var failure: Error?

    init(_ options: DRMDisplay.Options) throws {
        display = try DRMDisplay(options: options)
    }

    func start() {
        let link = DisplayLink(source: display, target: self) { client, link in client.tick(link) }
        link.presentationHandler = { [weak self] feedback in
            switch feedback.outcome {
            case .presented(let at, let sequence): self?.presented[feedback.refreshIndex] = (at, sequence)
            case .discarded: self?.discarded.insert(feedback.refreshIndex)
            }
        }
        self.link = link
    }

    func tick(_ link: DisplayLink) {
        frames.append(link.frame)
        callbackTimes.append(MonotonicInstant.now())
        guard frames.count > drawsNothingFirst else { return }
        guard draws || frames.count == drawsNothingFirst + 1 else { return }
        do {
            try display.beginFrame()
            painter.begin(width: display.width, height: display.height, background: RGBA(0.1, 0.1, 0.2))
            painter.fill(x: Int32(frames.count * 4 % 600), y: 200, width: 40, height: 40, color: RGBA(1, 0.5, 0))
            if let delay = presentAfterVblank {
                // A renderer that takes this long after its vblank (what the test is about), not a
                // wait for anything: the assertions hold however late the host runs it.
                let until = link.frame.timestamp + delay
                while MonotonicInstant.now() < until { usleep(200) }
            }
            try display.present()
        } catch { failure = error }
    }
}

/// Waits until `count` page flips were seen (the CRTC's framebuffer changing to one that is not
/// `other`, the console's), or `run` ended; false then, or after 120 s.
@MainActor
func seeFlips(_ count: Int, on crtc: CRTCWatcher, other: UInt32?, while run: ChildProcess) async -> Bool {
    var last = crtc.state?.buffer, seen = 0
    let happened = await eventually(within: .seconds(120)) {
        let now = crtc.state?.buffer
        if now != last, now != other { seen += 1 }
        last = now
        return seen >= count || !run.isRunning
    }
    return happened && seen >= count
}

extension ChildProcess {
    /// A child of the tests here: `arguments` in this process's environment with `environment`
    /// set on top, its standard error captured (read with ``errorLines``).
    static func start(_ arguments: [String], environment: [String: String] = [:], input: String = "/dev/null") throws -> ChildProcess {
        try ChildProcess(
            arguments, environment: ChildProcess.inheritedEnvironment.merging(environment) { $1 }, input: input,
            output: .discarded, errors: .captured)
    }

    /// The lines the child wrote to standard error so far.
    var errorLines: [String] { capturedErrors.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    /// Waits for a line of standard error containing `text` while the child runs (and reads once
    /// more after it ended); nil when none came (a hang guard of 120 s).
    func line(containing text: String) async -> String? {
        var found: String?
        var ended = false
        _ = await eventually(within: .seconds(120)) {
            found = errorLines.first { $0.contains(text) }
            if found == nil && ended { return true }
            ended = !isRunning
            return found != nil
        }
        return found
    }

    /// Waits for the child to end and returns its status (128 + signal when killed); after 300 s
    /// (a hang guard: the demo's 120 frames in the VM took 74 s under `stress-ng --cpu 2`, and a
    /// host twice as slow must pass too) it is killed, its kernel state printed, and nil returned.
    func ended() async -> Int32? {
        guard await eventually(within: .seconds(300), { !isRunning }) else {
            print("[child \(pid)] still running after 300 s: \(ProcessTable.kernelState(of: pid))")
            kill()
            return nil
        }
        return termination?.status
    }
}

/// Runs the demo (`arguments`, with enough `--frames`) with ``AllocationProbe`` preloaded, frames
/// counted by KMS commits, passing its standard error on; expects it to exit 0 having allocated
/// nothing on its main thread from the probe's first counted frame to its last: the per-frame
/// path allocates nothing on DRM either (DemoAllocationTests is the Wayland counterpart).
@MainActor
func expectNoAllocationPerFrame(
    _ arguments: [String], label: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    try AllocationProbe.withProbe(counting: .kmsCommit, for: label) { probe in
        let run = try ChildProcess.start(arguments, environment: ["LD_PRELOAD": probe])
        let status = run.wait(upTo: .seconds(600))?.status
        if status == nil { run.kill() }
        let lines = run.errorLines
        for line in lines { print("[\(label)] demo: \(line)") }
        #expect(status == 0, sourceLocation: sourceLocation)
        let summary = try #require(
            AllocationProbe.summary(in: lines.joined(separator: "\n")), "no allocation probe summary",
            sourceLocation: sourceLocation)
        #expect(summary.frames >= AllocationProbe.to, "\(summary.line)", sourceLocation: sourceLocation)
        #expect(summary.allocations == 0, "\(summary.line): see the demo's lines above", sourceLocation: sourceLocation)
    }
}
