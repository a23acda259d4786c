import Foundation
import Testing
import DisplayLinkWaylandTesting

/// The per-frame path allocates nothing: display link, Wayland frame source and presentation
/// feedback, scene, renderer (with the HUD's cached layer) and present, on a real weston, and the
/// same on the offscreen backend's virtual time. Counted by ``AllocationProbe`` preloaded into the
/// demo (frames: `eglSwapBuffers`), compiled here with the toolchain's C compiler. The DRM path's
/// counterpart is in VKMSTests. The same frames make no non-blocking `poll` on the main thread:
/// the main loop waits in `poll` for the socket, and a wake-up reads what is there without asking
/// the socket again whether more is (the next wait says so).
@Suite("No allocation per frame", .serialized)
struct DemoAllocationTests {
    @Test(
        "frames 40 to 140 allocate nothing and poll nothing without waiting, on the main thread (quad, bounce with its HUD, scroll, follow)",
        arguments: [["quad"], ["bounce", "--views", "60"], ["scroll"], ["follow"]])
    func noAllocationPerFrame(scene: [String]) throws {
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        try expectNoAllocation(scene + ["--backend", "wayland"], weston: weston)
    }

    /// The images scene's pictures are uploaded at set-up; its frames add instances only. The
    /// stroke scene's stroke grows through these frames (it is full at frame 200): its arrays,
    /// and the renderer's, have their final size from the set-up and the warm-up frame.
    @Test(
        "offscreen on virtual time: frames 40 to 140 allocate nothing (bounce with its HUD, 200 images, a growing stroke)",
        arguments: [["bounce", "--views", "60"], ["images"], ["stroke"]])
    func noAllocationPerFrameOffscreen(scene: [String]) throws {
        try expectNoAllocation(scene + ["--backend", "offscreen"], weston: nil)
    }

    /// The caption's glyphs are rasterised once, in the warm-up; every counted frame lays the
    /// line out again from the atlas's table.
    @Test("offscreen: frames 40 to 140 allocate nothing with a non-ASCII caption laid out every frame (quad)")
    func noAllocationPerFrameUnicodeCaption() throws {
        try expectNoAllocation(["quad", "--caption", "Grüße, Ελλάδα, Привет, € 中", "--backend", "offscreen"], weston: nil)
    }

    private func expectNoAllocation(_ arguments: [String], weston: HeadlessWeston?) throws {
        try AllocationProbe.withProbe(counting: .eglSwapBuffers, for: "DemoAllocationTests") { probe in
            let demo = try DemoProcess.run(
                arguments + ["--size", "250x250", "--frames", "160"],
                weston: weston, extraEnvironment: ["LD_PRELOAD": probe])
            #expect(demo.status == 0, "stderr: \(demo.stderr.suffix(2000))")
            let summary = try #require(AllocationProbe.summary(in: demo.stderr), "no probe summary; stderr: \(demo.stderr.suffix(2000))")
            let (frames, allocations, line) = (summary.frames, summary.allocations, summary.line)
            guard frames >= AllocationProbe.to else {
                // Frames presented by another call than eglSwapBuffers (eglSwapBuffersWithDamage, reached
                // through a pointer): no frames to count by here.
                print("DemoAllocationTests: \(arguments[0]): only \(frames) frames presented through eglSwapBuffers; nothing to count")
                return
            }
            #expect(allocations == 0, "\(arguments[0]): \(line)\n\(demo.stderr.suffix(4000))")
            #expect(summary.nonBlockingPolls == 0, "\(arguments[0]): \(line)")
        }
    }
}
