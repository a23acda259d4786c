import DisplayLinkCore
import EGLGraphics
import Foundation
import GLESRenderer
import Scenes
import Testing
import DisplayLinkWaylandTesting

/// llvmpipe builds code with LLVM for each combination of state a draw first meets: in the vkms VM
/// (qemu without KVM) 120-250 ms each, so a combination first met mid-animation costs a dozen
/// refreshes. ``Renderer/warmUp()`` exists to meet them all before the first frame. These tests
/// count LLVM's compiles (every `LLVMGetPointerToGlobal` call: llvmpipe asks for a function's
/// code only right after compiling its module) and check that none happens in the frames after
/// the warm-up, in the frames the renderer draws in part (buffer ages 2), with cached layers
/// redrawn within them, and through the scroll's row cache.
///
/// The count comes from a small library interposed with `LD_PRELOAD`, so the frames run in a child
/// process: this test binary again, running only ``child()``. Compiled here with the toolchain's
/// C compiler. A driver that compiles nothing at all during a warm-up (no LLVM: a GPU, softpipe)
/// has nothing to check; the test says so and passes.
@MainActor
@Suite("Warm-up: no shader code built after it", .serialized)
struct WarmUpCompileTests {
    nonisolated static let childVariable = "DISPLAYLINK_JIT_PROBE_CHILD"
    nonisolated static var isChild: Bool { ProcessInfo.processInfo.environment[childVariable] != nil }
    static let probeSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        static unsigned long compiles;
        unsigned long displaylink_jit_probe_count(void) { return compiles; }
        void *LLVMGetPointerToGlobal(void *engine, void *global) {
            static void *(*real)(void *, void *);
            if (!real) real = (void *(*)(void *, void *))dlsym(RTLD_NEXT, "LLVMGetPointerToGlobal");
            compiles++;
            return real(engine, global);
        }
        """

    /// The runs of the child: name, whether frames are redrawn in part (buffer age 2; else every
    /// frame whole, as on a surface that cannot tell ages, and the warm-up is told so), and how to
    /// make the scene on a renderer of 240x200.
    static let scenes: [(String, Bool, @MainActor (Renderer) -> Scene)] = [
        ("bounce 60", true, { BounceScene(renderer: $0, views: 60, width: 240, height: 200, seed: 7) }),
        ("bounce 60 whole", false, { BounceScene(renderer: $0, views: 60, width: 240, height: 200, seed: 7) }),
        ("bounce 2000", true, { BounceScene(renderer: $0, views: 2000, width: 240, height: 200, seed: 7) }),
        ("scroll", true, { ScrollScene(renderer: $0, rows: 300, width: 240, height: 200, duration: 1, curve: .easeInOut) }),
        ("scroll whole", false, { ScrollScene(renderer: $0, rows: 300, width: 240, height: 200, duration: 1, curve: .easeInOut) })
    ]

    @Test(
        """
        no LLVM compile in the frames after a warm-up (bounce with HUD, 60 and 2,000 views; scroll through the row cache; redrawn in part \
        and whole)
        """, .enabled(if: !isChild))
    func noCompileAfterWarmUp() throws {
        try PreloadLibrary.withLibrary(WarmUpCompileTests.probeSource, named: "jit-probe", for: "WarmUpCompileTests") { library in
            var environment = ChildProcess.inheritedEnvironment
            environment[WarmUpCompileTests.childVariable] = "1"
            environment["LD_PRELOAD"] = library
            let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            // A hang guard only: the child's frames take seconds, minutes on a loaded host.
            let child = try ChildProcess.run(
                [me, "--testing-library", "swift-testing", "--filter", "WarmUpCompileTests"],
                environment: environment, errors: .standardOutput, limit: .seconds(300))
            let lines = child.output.split(separator: "\n").filter { $0.hasPrefix("jit-probe ") }
            #expect(child.termination == .exited(0), "the child failed: \(child.output.suffix(2000))")
            try #require(lines.count == WarmUpCompileTests.scenes.count, "child output: \(child.output.suffix(2000))")
            for line in lines {
                // jit-probe NAME: warm-up W, after A
                let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                let (warm, after) = (numbers[numbers.count - 2], numbers[numbers.count - 1])
                if warm == 0 {
                    print("WarmUpCompileTests: \(line) (no LLVM compile at all: nothing to check on this driver)")
                    continue
                }
                #expect(after == 0, "\(line)")
            }
        }
    }

    /// Runs in the child only: each scene's warm-up, then 64 frames (moving, the HUD changing twice
    /// a second of the virtual clock; the scroll turned back halfway) into two pbuffers used in
    /// turn (buffer age 2: partial redraws; or 0, whole), counting compiles in each part.
    @Test("child: warm-up and frames, compiles counted", .enabled(if: isChild))
    func child() throws {
        let symbol = try #require(
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), "displaylink_jit_probe_count"),
            "the probe is not preloaded")
        let count = unsafeBitCast(symbol, to: (@convention(c) () -> UInt).self)
        for (name, partly, makeScene) in WarmUpCompileTests.scenes {
            let context = try EGLDisplayContext(platform: .surfaceless, alpha: true)
            let buffers = try (0..<2).map { _ in try EGLWindowSurface(context: context, pbufferWidth: 240, height: 200) }
            try buffers[0].beginFrame()
            let start = count()
            let renderer = try Renderer(atlas: sharedAtlas, glesMajorVersion: context.glesMajorVersion)
            let scene = makeScene(renderer)
            let hud = HUDOverlay(renderer: renderer)
            renderer.beginFrame(width: 240, height: 200, clearColor: scene.background)
            scene.draw()
            hud.draw(HUDValues())
            renderer.warmUp(partialRedraws: partly)
            let warmed = count()
            var values = HUDValues()
            for i in 0..<64 {
                try buffers[i % 2].beginFrame()
                let frame = PartialRedrawTests.frame(i + 1)
                if i == 32 { scene.toggleScroll() }
                scene.update(frame)
                values.record(frame)
                renderer.beginFrame(width: 240, height: 200, clearColor: scene.background, bufferAge: partly && i >= 2 ? 2 : 0)
                scene.draw()
                hud.draw(values)
                renderer.endFrame()
                renderer.finish()
            }
            print("jit-probe \(name): warm-up \(warmed - start), after \(count() - warmed)")
        }
    }
}
