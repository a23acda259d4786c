import Foundation

/// A library preloaded into the demo that counts Swift's allocations per frame: the per-frame path
/// allocates nothing (display link, frame source, scene, renderer, present).
///
/// It interposes `swift_allocObject` (class instances, closure contexts, boxes, array and string
/// storage) and a function the program calls once per frame it presents, and reports every
/// allocation made on the main thread from the ``from``-th frame presented to the ``to``-th, the
/// first three with their call stacks. It also counts the main thread's `poll` calls with a zero
/// timeout in those frames: a loop that waits in `poll` has no need to ask a socket whether it
/// is still readable (the next wait says so). What C libraries allocate for themselves (libwayland's
/// event closures, Mesa's per-swap state) is not Swift's and not counted. Counting by frames, not
/// by time, gives the same figure on a host of any speed.
package enum AllocationProbe {
    /// The first frame counted, and the one after the last.
    package static let from = 40, to = 140

    /// What the program calls once per frame presented.
    package enum FrameCall: Sendable {
        /// `eglSwapBuffers` (frames presented through `eglSwapBuffersWithDamage`, which a program
        /// reaches through a pointer, are not seen).
        case eglSwapBuffers
        /// A KMS commit that is not a test: an atomic commit made with `drmIoctl`
        /// (`DRM_IOCTL_MODE_ATOMIC`, as DRMBackend does, not through libdrm's allocating
        /// `drmModeAtomicCommit`), or `drmModePageFlip` (legacy). One a frame; the mode set's
        /// commits come before the frames counted.
        case kmsCommit
    }

    /// The probe's last line: frames presented, and allocations in the frames counted.
    package struct Summary: Sendable {
        package var frames: Int
        package var allocations: Int
        /// `poll` calls with a zero timeout on the main thread in the frames counted.
        package var nonBlockingPolls: Int
        package var line: String
    }

    /// Compiles the probe (``PreloadLibrary``) into `directory` and returns its path.
    package static func build(counting call: FrameCall, in directory: URL) throws -> String {
        try PreloadLibrary.build(source(counting: call), named: "alloc-probe", in: directory)
    }

    /// Builds the probe and runs `body` with its path, as ``PreloadLibrary/withLibrary(_:named:for:_:)``
    /// does (nothing under a sanitizer).
    package static func withProbe(counting call: FrameCall, for test: String, _ body: (String) throws -> Void) throws {
        try PreloadLibrary.withLibrary(source(counting: call), named: "alloc-probe", for: test, body)
    }

    /// The summary the probe wrote to standard error when the program ended; nil when it wrote none.
    package static func summary(in standardError: String) -> Summary? {
        let lines = standardError.split(separator: "\n")
        guard let line = lines.last(where: { $0.hasPrefix("alloc-probe: ") && $0.contains("frames presented") }) else { return nil }
        // "alloc-probe: F frames presented, A allocations from frame FROM to TO, P non-blocking polls"
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard numbers.count >= 5 else { return nil }
        return Summary(frames: numbers[0], allocations: numbers[1], nonBlockingPolls: numbers[4], line: String(line))
    }

    static func source(counting call: FrameCall) -> String {
        let frameFunctions: String
        switch call {
        case .eglSwapBuffers:
            frameFunctions = """
                unsigned int eglSwapBuffers(void *display, void *surface) {
                    static unsigned int (*real)(void *, void *);
                    if (!real) real = (unsigned int (*)(void *, void *))dlsym(RTLD_NEXT, "eglSwapBuffers");
                    atomic_fetch_add(&frames, 1);
                    return real(display, surface);
                }
                """
        case .kmsCommit:
            frameFunctions = """
                int drmIoctl(int fd, unsigned long request, void *argument) {
                    static int (*real)(int, unsigned long, void *);
                    if (!real) real = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "drmIoctl");
                    /* DRM_IOCTL_MODE_ATOMIC (struct drm_mode_atomic: 56 bytes, flags first), not TEST_ONLY */
                    if (request == _IOC(_IOC_READ | _IOC_WRITE, 'd', 0xBC, 56) && argument
                        && !(*(uint32_t *)argument & 0x0100)) atomic_fetch_add(&frames, 1);
                    return real(fd, request, argument);
                }
                int drmModePageFlip(int fd, uint32_t crtc, uint32_t buffer, uint32_t flags, void *data) {
                    static int (*real)(int, uint32_t, uint32_t, uint32_t, void *);
                    if (!real) real = (int (*)(int, uint32_t, uint32_t, uint32_t, void *))dlsym(RTLD_NEXT, "drmModePageFlip");
                    atomic_fetch_add(&frames, 1);
                    return real(fd, crtc, buffer, flags, data);
                }
                """
        }
        return """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <execinfo.h>
            #include <poll.h>
            #include <stdatomic.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <sys/ioctl.h>
            #include <sys/syscall.h>
            #include <unistd.h>
            enum { FROM = \(from), TO = \(to) };
            static atomic_ulong frames, allocations, nonBlockingPolls;
            static int counting(void) {
                unsigned long frame = atomic_load(&frames);
                return frame >= FROM && frame < TO && syscall(SYS_gettid) == getpid();
            }
            void *swift_allocObject(void *metadata, size_t size, size_t alignMask) {
                static void *(*real)(void *, size_t, size_t);
                if (!real) real = (void *(*)(void *, size_t, size_t))dlsym(RTLD_NEXT, "swift_allocObject");
                if (counting()) {
                    if (atomic_fetch_add(&allocations, 1) < 3) {
                        void *stack[12];
                        int depth = backtrace(stack, 12);
                        fprintf(stderr, "alloc-probe: allocation of %zu bytes after frame %lu:\\n", size, atomic_load(&frames));
                        backtrace_symbols_fd(stack, depth, 2);
                    }
                }
                return real(metadata, size, alignMask);
            }
            int poll(struct pollfd *descriptors, nfds_t count, int timeout) {
                static int (*real)(struct pollfd *, nfds_t, int);
                if (!real) real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
                if (timeout == 0 && counting()) atomic_fetch_add(&nonBlockingPolls, 1);
                return real(descriptors, count, timeout);
            }
            \(frameFunctions)
            __attribute__((destructor)) static void report(void) {
                fprintf(stderr, "alloc-probe: %lu frames presented, %lu allocations from frame %d to %d, %lu non-blocking polls\\n",
                        (unsigned long)atomic_load(&frames), (unsigned long)atomic_load(&allocations), FROM, TO,
                        (unsigned long)atomic_load(&nonBlockingPolls));
            }
            """
    }
}
