/* Preloaded into the demo for callgrind runs (Benchmarks/Scripts/callgrind-frames), not shipped.
 *
 * valgrind 3.19 (Debian 12) stops with an internal SIGSEGV as soon as a Swift program calls
 * dispatchMain(): libdispatch's dispatch_main() ends the main thread with pthread_exit() and a
 * TSD destructor that parks it in sigsuspend(), which valgrind does not survive (a three-line
 * program shows it). This dispatch_main() instead serves the main queue on the main thread, as
 * a run loop does (the same libdispatch entry points CoreFoundation uses): wait on the main
 * queue's eventfd, then drain the queue, forever. The work each frame does is the same; only the
 * thread that runs it differs (always the main thread). */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

/* Weak: resolved in the Swift program (which loads libdispatch); other programs, such as the
 * shell that starts it, load this library without them. */
extern int _dispatch_get_main_queue_handle_4CF(void) __attribute__((weak));
extern void _dispatch_main_queue_callback_4CF(void *message) __attribute__((weak));

void dispatch_main(void) {
    int fd = _dispatch_get_main_queue_handle_4CF();
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, -1) < 0) continue;
        uint64_t count;
        (void)!read(fd, &count, sizeof count);
        _dispatch_main_queue_callback_4CF(NULL);
    }
}
