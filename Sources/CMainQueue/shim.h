/* libdispatch's entry points for a run loop that serves the main queue on the main thread (the
 * ones CoreFoundation's run loop uses). Exported by the libdispatch Swift ships on Linux, shared
 * and static, but declared in no header it installs. */
#ifndef CMAINQUEUE_SHIM_H
#define CMAINQUEUE_SHIM_H
#include <sys/syscall.h>
#include <unistd.h>
/* An eventfd that becomes readable when the main queue has work. */
int _dispatch_get_main_queue_handle_4CF(void);
/* Runs what the main queue holds (on the main thread). */
void _dispatch_main_queue_callback_4CF(void *message);

/* Whether the calling thread is the process's main thread (the one that runs main()): asked of
 * the kernel once per thread (gettid and getpid are system calls), then remembered, as a thread
 * never becomes another. */
static inline int cmq_is_main_thread(void) {
    static __thread int answer = -1;
    if (answer < 0) answer = syscall(SYS_gettid) == getpid();
    return answer;
}
#endif
