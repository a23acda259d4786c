import Foundation
import Testing
import DisplayLinkWaylandTesting

@Suite("The demo's private compositor and signals", .serialized)
struct DemoSignalTests {
    @Test("--headless: SIGTERM mid-run ends the demo with status 0 and stops its private weston (no compositor left behind)")
    func headlessSIGTERM() async throws {
        let demo = try DemoProcess.start(["bounce", "--headless", "--size", "320x240", "--seconds", "600"], weston: nil)
        defer { demo.kill() }
        // The demo's weston is named by the demo's pid in its socket name.
        let marker = "--socket=wayland-dl-\(demo.pid)-"
        _ = await eventually(pollingEvery: .milliseconds(20)) {
            !ProcessTable.live(commandLineContaining: marker).isEmpty || !demo.isRunning
        }
        let westons = ProcessTable.live(commandLineContaining: marker, parent: demo.pid)
        #expect(westons.count == 1, "the demo's weston was not found; stderr: \(demo.capturedErrors)")
        // Whatever the demo is doing when the signal comes (warming up, drawing, waiting for a
        // callback), the signal ends it cleanly: no waiting for a moment when it "should" be drawing.
        #expect(demo.isRunning)
        kill(demo.pid, SIGTERM)
        let ended = await eventually(pollingEvery: .milliseconds(20)) { !demo.isRunning }
        #expect(ended)
        if ended { #expect(demo.termination == .exited(0), "stderr: \(demo.capturedErrors)") }
        #expect(ProcessTable.live(commandLineContaining: marker).isEmpty, "the private weston outlived the demo")
        for pid in ProcessTable.live(commandLineContaining: marker) { kill(pid, SIGKILL) }
    }
}
