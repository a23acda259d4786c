import Foundation
import Testing
import DisplayLinkWaylandTesting

/// The per-frame path allocates nothing: display link, Wayland frame source and presentation
/// feedback, scene, renderer (with the HUD's cached layer) and present, on a real weston.
///
/// Swift's allocations (`swift_allocObject`: class instances, closure contexts, boxes, array and
/// string storage) are counted by a small library interposed with `LD_PRELOAD` into the demo,
/// which also counts the frames presented (`eglSwapBuffers`): every allocation made on the main
/// thread from the 40th frame presented to the 140th is reported, with its call stack. What C
/// libraries allocate for themselves (libwayland's event closures, Mesa's per-swap state) is
/// not Swift's and not counted. The count is by frames, not by time, so it is the same on a host
/// of any speed. Compiled here with the toolchain's C compiler.
@Suite("No allocation per frame", .serialized)
struct DemoAllocationTests {
    static let probeSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <execinfo.h>
        #include <stdatomic.h>
        #include <stdio.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        enum { FROM = 40, TO = 140 };
        static atomic_ulong swaps, allocations;
        void *swift_allocObject(void *metadata, size_t size, size_t alignMask) {
            static void *(*real)(void *, size_t, size_t);
            if (!real) real = (void *(*)(void *, size_t, size_t))dlsym(RTLD_NEXT, "swift_allocObject");
            unsigned long frame = atomic_load(&swaps);
            if (frame >= FROM && frame < TO && syscall(SYS_gettid) == getpid()) {
                if (atomic_fetch_add(&allocations, 1) < 3) {
                    void *stack[12];
                    int depth = backtrace(stack, 12);
                    fprintf(stderr, "alloc-probe: allocation of %zu bytes after frame %lu:\\n", size, frame);
                    backtrace_symbols_fd(stack, depth, 2);
                }
            }
            return real(metadata, size, alignMask);
        }
        unsigned int eglSwapBuffers(void *display, void *surface) {
            static unsigned int (*real)(void *, void *);
            if (!real) real = (unsigned int (*)(void *, void *))dlsym(RTLD_NEXT, "eglSwapBuffers");
            atomic_fetch_add(&swaps, 1);
            return real(display, surface);
        }
        __attribute__((destructor)) static void report(void) {
            fprintf(stderr, "alloc-probe: %lu frames presented, %lu allocations from frame %d to %d\\n",
                    (unsigned long)atomic_load(&swaps), (unsigned long)atomic_load(&allocations), FROM, TO);
        }
        """

    @Test("frames 40 to 140 allocate nothing on the main thread (quad, bounce with its HUD, scroll)",
          arguments: [["quad"], ["bounce", "--views", "60"], ["scroll"]])
    func noAllocationPerFrame(scene: [String]) throws {
        guard !PreloadLibrary.underSanitizer else {
            print("DemoAllocationTests: skipped under a sanitizer (the probe cannot be preloaded before its runtime)")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alloc-probe-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let probe = try PreloadLibrary.build(DemoAllocationTests.probeSource, named: "alloc-probe", in: directory)
        let weston = try HeadlessWeston()
        defer { weston.stop() }
        let demo = try DemoProcess.run(scene + ["--backend", "wayland", "--size", "250x250", "--frames", "160"],
                                       weston: weston, extraEnvironment: ["LD_PRELOAD": probe])
        #expect(demo.status == 0, "stderr: \(demo.stderr.suffix(2000))")
        let summary = demo.stderr.split(separator: "\n").last { $0.hasPrefix("alloc-probe: ") && $0.contains("frames presented") }
        let line = try #require(summary, "no probe summary; stderr: \(demo.stderr.suffix(2000))")
        let numbers = line.split(separator: " ").compactMap { Int($0) }
        try #require(numbers.count >= 2, "\(line)")
        let (frames, allocations) = (numbers[0], numbers[1])
        guard frames >= 140 else {
            // Frames presented by another call than eglSwapBuffers (eglSwapBuffersWithDamage, reached
            // through a pointer): no frames to count by here.
            print("DemoAllocationTests: \(scene[0]): only \(frames) frames presented through eglSwapBuffers; nothing to count")
            return
        }
        #expect(allocations == 0, "\(scene[0]): \(line)\n\(demo.stderr.suffix(4000))")
    }
}
