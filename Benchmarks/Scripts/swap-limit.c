/* Preloaded into weston-simple-egl for callgrind runs (Benchmarks/Scripts/callgrind-frames), not
 * shipped. simple-egl draws until it is interrupted; counted by callgrind it must instead stop
 * after a known number of frames, as the demo does with --frames. This eglSwapBuffers passes each
 * call on to EGL's and ends the program (exit(0), which lets callgrind write its counts) after the
 * SWAP_LIMIT-th. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned (*swap_buffers_fn)(void *display, void *surface);

unsigned eglSwapBuffers(void *display, void *surface) {
    static swap_buffers_fn next;
    static long limit = -1, count;
    if (!next) next = (swap_buffers_fn)dlsym(RTLD_NEXT, "eglSwapBuffers");
    if (!next) {
        fprintf(stderr, "swap-limit: no eglSwapBuffers after this library\n");
        exit(2);
    }
    if (limit < 0) {
        const char *s = getenv("SWAP_LIMIT");
        limit = s ? strtol(s, NULL, 10) : 0;
    }
    unsigned result = next(display, surface);
    if (limit > 0 && ++count >= limit) exit(0);
    return result;
}
