/*
 * displaylink.h: the display link for C, C++ and Rust programs on Linux.
 *
 * A callback once per display refresh that says when the last frame was really presented
 * (timestamp), when the frame being prepared will be (target_timestamp), the real refresh period
 * (duration), the delta since the last callback, and the latest time to submit the frame and still
 * make its target (deadline): what CADisplayLink is on Apple platforms, driven by the real vblank
 * of a Wayland compositor or a DRM/KMS display.
 *
 * Three kinds of source a link can follow:
 *   - dl_wayland_source_create: a wl_surface the program owns (an SDL 3 or GLFW window, a
 *     toolkit's, its own). The program calls dl_source_will_commit() right before each call that
 *     commits the surface (eglSwapBuffers, vkQueuePresentKHR, SDL_RenderPresent,
 *     SDL_GL_SwapWindow, wl_surface_commit).
 *   - dl_fed_source_create: presentations the program learns itself (page flips on its own DRM
 *     fd, VK_KHR_present_wait, a remote display), reported with dl_source_presented() and
 *     dl_source_will_submit().
 *   - dl_surface_source_create: a window or KMS output of the library's own, with a GLES
 *     context the program draws into between dl_surface_begin_frame() and dl_surface_present().
 *
 * A minimal loop (SDL 3; see the README's "From C and SDL 3"):
 *
 *     dl_source *source;
 *     dl_wayland_source_create(wl_display, wl_surface, NULL, &source);
 *     dl_link *link;
 *     dl_link_create(source, on_frame, &game, &link);  // on_frame draws, calls
 *                                                      // dl_source_will_commit, then presents
 *     while (running) {
 *         SDL_Event event;
 *         while (SDL_PollEvent(&event)) handle(&event);
 *         dl_dispatch(-1);      // waits for the next callback (or any display event) and runs it
 *     }
 *     dl_link_destroy(link);
 *     dl_source_destroy(source);  // before SDL destroys the window
 *
 * THREADS. Every function must be called on the process's main thread (the thread that runs
 * main()); on any other thread a function does nothing and returns DL_ERROR_WRONG_THREAD.
 * Callbacks run on the main thread, inside dl_dispatch() or inside the call that reports a
 * presentation (dl_source_presented), never on a thread of the library's. The library starts no
 * thread that calls back into the program.
 *
 * EVENTS. Callbacks are run by dl_dispatch(). Either block in dl_dispatch(timeout) in the
 * program's loop, or poll dl_get_fd() for POLLIN among the program's own descriptors and call
 * dl_dispatch(0) when it is readable. On a program's Wayland display, events for the library that
 * the program's own reading took off the socket (its toolkit's event pump, eglSwapBuffers) wait in
 * the library's event queue: call dl_dispatch(0) after the toolkit's event pump and before the
 * program waits on dl_get_fd() (dl_dispatch with a timeout does this itself). The library reads
 * the display only with wl_display_prepare_read_queue and wl_display_read_events, on its own
 * event queue: the program's events stay the program's.
 *
 * ERRORS. Every function that can fail returns an int: DL_OK (0), or a count or action where its
 * comment says so (never negative), or a negative dl_result, and
 * dl_error_message() says what went wrong in words a person can act on. Nothing aborts the
 * process: a null, destroyed or wrong-kind handle is DL_ERROR_INVALID_HANDLE. Handles are never
 * reused, so a stale one is always recognised.
 *
 * TIMES are nanoseconds on CLOCK_MONOTONIC (clock_gettime(CLOCK_MONOTONIC, ...)).
 *
 * Build: cc main.c $(pkg-config --cflags --libs displaylink)
 */
#ifndef DISPLAYLINK_H
#define DISPLAYLINK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DL_VERSION_MAJOR 0
#define DL_VERSION_MINOR 1

/* A source of refreshes (a program's Wayland surface, a fed source, or a surface of the library's). */
typedef struct dl_source dl_source;
/* A display link: calls its callback once per refresh of its source (or per N refreshes at a
 * preferred rate). */
typedef struct dl_link dl_link;

/* Return codes: DL_OK or a negative value. */
enum dl_result {
    DL_OK = 0,
    /* An argument is null or out of range (the message names it). */
    DL_ERROR_INVALID_ARGUMENT = -1,
    /* A handle is null, was destroyed, or is of the wrong kind (a link where a source is wanted). */
    DL_ERROR_INVALID_HANDLE = -2,
    /* Called on a thread other than the main thread. */
    DL_ERROR_WRONG_THREAD = -3,
    /* The display failed: the compositor went away or killed the connection, did not answer, or
     * could not be opened; the message says which. The source's links are invalidated. */
    DL_ERROR_DISPLAY = -4,
    /* This kind of source does not do that (dl_source_will_commit on a fed source, say). */
    DL_ERROR_UNSUPPORTED = -5,
    /* The link was invalidated (dl_link_invalidate, its source destroyed or failed); only
     * dl_link_destroy and the queries work on it. */
    DL_ERROR_INVALIDATED = -6,
    /* A system call failed (the message has errno's text). */
    DL_ERROR_SYSTEM = -7
};

/* The message of the last call on this thread that failed, in words a person can act on; "" when
 * none failed. Valid until the next call into the library. Never NULL. */
const char *dl_error_message(void);

/* The name of a dl_result ("DL_OK", "DL_ERROR_INVALID_HANDLE", ...); "unknown" for others. */
const char *dl_result_name(int result);

/* Where a frame's timestamp came from: how much to trust it. */
enum dl_provenance {
    /* The kernel's vblank time of a page flip: exact. */
    DL_PROVENANCE_HARDWARE_VBLANK = 0,
    /* The compositor's presentation feedback (wp_presentation): what it says it presented. */
    DL_PROVENANCE_PRESENTATION_FEEDBACK = 1,
    /* An estimate: from the rhythm of earlier presentations, or frame callbacks' arrival. */
    DL_PROVENANCE_ESTIMATE = 2,
    /* A low-rate timer while the display gives no callbacks (window hidden). */
    DL_PROVENANCE_TIMER_FALLBACK = 3
};

/* When callbacks start. */
enum dl_latency {
    /* At the frame event: the most time to draw; the frame then waits for its target. Default. */
    DL_LATENCY_THROUGHPUT = 0,
    /* As late as the frame's deadline allows, less the learned render time and a margin: drawn
     * from the newest input, shown at the same target. */
    DL_LATENCY_LOW = 1
};

/* What a deadline rests on. */
enum dl_deadline_provenance {
    /* No deadline learned yet (deadline_ns is 0). */
    DL_DEADLINE_NONE = 0,
    /* Frames submitted this early all made their targets. */
    DL_DEADLINE_SUFFICIENT = 1,
    /* Between the shortest lead that made its target and the longest that missed. */
    DL_DEADLINE_BRACKETED = 2,
    /* The latch assumed before any frame made or missed it. */
    DL_DEADLINE_PRIOR = 3
};

/* One callback's values. */
typedef struct dl_frame {
    /* When the last frame was presented (CADisplayLink.timestamp). */
    int64_t timestamp_ns;
    /* When the frame being prepared now will be presented (targetTimestamp): move things to
     * where they are at this time. Never goes back from one callback to the next. */
    int64_t target_timestamp_ns;
    /* The refresh period (duration), as measured: the mode's exact period on KMS. */
    int64_t duration_ns;
    /* timestamp minus the previous callback's timestamp; exactly 0 on the first callback, after
     * a resume (dl_link_set_paused false) and after a stall. */
    int64_t delta_ns;
    /* The display's refresh counter at timestamp (never decreases). */
    uint64_t sequence;
    /* Refreshes this link should have been called for but could not since its last callback. */
    int32_t missed_frames;
    /* enum dl_provenance */
    int32_t provenance;
    /* Which refresh of the source this is (0, 1, 2, ...): dl_presentation.refresh_index names it. */
    uint64_t refresh_index;
    /* Refreshes per callback (1 at the display's full rate). */
    int32_t frame_interval;
    /* enum dl_deadline_provenance; DL_DEADLINE_NONE: deadline_ns is 0. */
    int32_t deadline_provenance;
    /* The latest time to submit this frame (the commit hook, dl_source_will_submit) and still
     * have it shown at target_timestamp_ns. */
    int64_t deadline_ns;
    /* The program's learned render time, from a callback's start to its frame's submission; -1
     * while none was measured. */
    int64_t render_estimate_ns;
} dl_frame;

/* Called once per refresh (or per frame_interval refreshes) on the main thread. frame is valid
 * during the call. The callback may pause, invalidate or destroy its own link, create links, and
 * destroy the source (its links are then invalidated; no further callback comes). */
typedef void (*dl_frame_callback)(dl_link *link, const dl_frame *frame, void *user_data);

/* What became of a frame drawn in a callback. */
typedef struct dl_presentation {
    /* The dl_frame.refresh_index of the callback the frame was drawn in. */
    uint64_t refresh_index;
    /* 1: presented at presented_ns; 0: discarded (replaced, or the window was hidden). */
    int32_t presented;
    int64_t presented_ns;
    /* The display's sequence at the presentation; 0 when unknown. */
    uint64_t sequence;
    /* The target that callback predicted; 0 when the refresh is too old to be remembered. */
    int64_t target_timestamp_ns;
    /* wp_presentation kind flags (0x1 vsync, 0x2 hw_clock, 0x4 hw_completion, 0x8 zero_copy);
     * 0 when unknown. */
    uint32_t flags;
} dl_presentation;

/* Called on the main thread with each frame's fate, usually a refresh or two after its callback. */
typedef void (*dl_presentation_callback)(dl_link *link, const dl_presentation *presentation, void *user_data);

/* ---- Sources ----------------------------------------------------------------------------- */

/* Options of a source on a program's Wayland surface. Fill with dl_wayland_options_init(). */
typedef struct dl_wayland_options {
    /* sizeof(dl_wayland_options), set by dl_wayland_options_init (newer fields may follow). */
    uint32_t size;
    /* enum dl_latency; DL_LATENCY_THROUGHPUT by default. */
    int32_t latency;
    /* The program leaves the surface's wp_fifo_v1 to the library. The protocol allows one per
     * surface, and a graphics stack may hold it (Mesa's Vulkan WSI in FIFO mode): false by default. */
    bool uses_fifo;
    /* The program leaves the surface's wp_commit_timer_v1 to the library: each commit then asks
     * not to be shown before its target. One per surface, as for FIFO: false by default. */
    bool uses_commit_timing;
    /* No frame event for this long is a stall (window hidden); 500 ms by default. */
    int64_t stall_timeout_ns;
    /* How long the first round trips wait for the compositor; 30 s by default. */
    int64_t reply_timeout_ns;
} dl_wayland_options;

/* Fills options with the defaults. */
void dl_wayland_options_init(dl_wayland_options *options);

/* A source on the program's surface: wl_surface (a struct wl_surface *) of wl_display (its
 * struct wl_display *). The library binds wp_presentation and the outputs on an event queue of its
 * own, requests frame callbacks and presentation feedback for the commits dl_source_will_commit
 * announces, and never commits the surface, takes its role or its events. options may be NULL
 * (defaults). Destroy the source before the program destroys the surface or disconnects the
 * display. Blocks until the compositor answered two round trips (reply_timeout_ns at most). */
int dl_wayland_source_create(void *wl_display, void *wl_surface, const dl_wayland_options *options, dl_source **out);

/* The commit hook: call it right before each call that commits the program's surface, and only
 * when that commit follows (a present that fails after it, say VK_ERROR_OUT_OF_DATE_KHR, should
 * be retried or the next frame committed: with uses_commit_timing a timestamp waits for it). The
 * latest refresh's requests are sent then, for that commit. A refresh whose frame is not committed
 * by the next vblank is followed by a callback at the predicted vblank (DL_PROVENANCE_ESTIMATE),
 * so links never stop; when no commit came through the hook for 60 refreshes in a row, one
 * warning says so on standard error. Wayland sources only. */
int dl_source_will_commit(dl_source *source);

/* The program's window was suspended (xdg_toplevel's suspended state; SDL's
 * SDL_EVENT_WINDOW_OCCLUDED) or resumed. While suspended nothing is requested and no timer runs;
 * the first callback after it has delta 0. Wayland sources only. */
int dl_source_set_suspended(dl_source *source, bool suspended);

/* A fed source: presentations the program learns itself, on a display whose exact refresh
 * period is refresh_period_ns (from the mode timings: pixel clock over the pixels of a frame;
 * 100 us to 10 s, else DL_ERROR_INVALID_ARGUMENT).
 * latency: enum dl_latency. The decisions are those of the library's own DRM/KMS backend: a
 * program that flips a CRTC itself gets the targets and deadlines that backend gives for the same
 * flips. */
int dl_fed_source_create(int64_t refresh_period_ns, int32_t latency, dl_source **out);

/* What to do with a frame just submitted to a fed source. */
enum dl_submit_action {
    /* Present it now (flip, commit, present). */
    DL_SUBMIT_NOW = 0,
    /* A presentation is still pending: keep this frame and present it when that one completes, in
     * the completion's handler (the page-flip event) before reporting it with dl_source_presented,
     * which runs the next callback at once (the library keeps two frames in flight after a frame
     * missed its vblank, so that drawing gets the whole period). */
    DL_SUBMIT_AFTER_PENDING = 1
};

/* The frame of the current callback is about to be presented: call it right before the call that
 * presents (drmModePageFlip, drmModeAtomicCommit, vkQueuePresentKHR), from the callback that drew
 * the frame. time_ns: when (CLOCK_MONOTONIC), or 0 for now. Returns a dl_submit_action (>= 0) or
 * a negative dl_result. Fed sources only. */
int dl_source_will_submit(dl_source *source, int64_t time_ns);

/* A frame was presented at time_ns (CLOCK_MONOTONIC: a DRM page-flip event's tv_sec and tv_usec,
 * a Vulkan present's time) at the display's refresh sequence (the flip event's sequence; 0 when
 * unknown, then counted from the times). The next callback runs inside this call (or at its
 * planned start under DL_LATENCY_LOW). Times or sequences that go backwards are taken as a new
 * rhythm, never trusted blindly. Returns the number of callbacks it ran (>= 0), or a negative
 * dl_result. Fed sources only. */
int dl_source_presented(dl_source *source, int64_t time_ns, uint64_t sequence);

/* Options of a surface of the library's own. Fill with dl_surface_options_init(). */
typedef struct dl_surface_options {
    uint32_t size;
    /* 0 auto (a Wayland window when a compositor is reachable, else the whole screen through
     * DRM/KMS), 1 Wayland, 2 DRM/KMS, 3 offscreen (virtual time, for tests). */
    int32_t backend;
    /* In points; 0: 640x480 (a KMS output takes its mode's size). */
    int32_t width, height;
    /* enum dl_latency. */
    int32_t latency;
    /* Ask for fullscreen (Wayland). */
    bool fullscreen;
    /* The window's title (UTF-8; NULL: "DisplayLink"). Copied. */
    const char *title;
} dl_surface_options;

/* Fills options with the defaults. */
void dl_surface_options_init(dl_surface_options *options);

/* A surface of the library's own with a GLES context (2 or 3): a Wayland window, a KMS output
 * or an offscreen pbuffer. options may be NULL (defaults). */
int dl_surface_source_create(const dl_surface_options *options, dl_source **out);

/* Makes the surface's GLES context current on the main thread: draw after it. */
int dl_surface_begin_frame(dl_source *surface);
/* Presents what was drawn (the swap on Wayland, the page flip on KMS). */
int dl_surface_present(dl_source *surface);
/* The surface's size in pixels. */
int dl_surface_get_size(dl_source *surface, int32_t *width, int32_t *height);
/* The GLES major version of the context (2 or 3). */
int dl_surface_get_gles_version(dl_source *surface, int32_t *major);

/* Invalidates the source's links (they stay valid handles, for dl_link_destroy) and lets go of
 * everything the library holds for it. A program's surface and display stay the program's. Safe
 * inside a callback. */
int dl_source_destroy(dl_source *source);

/* ---- Links ------------------------------------------------------------------------------- */

/* A link on source that calls callback(link, frame, user_data) once per refresh, from the next
 * refresh on (the first callback has delta 0). */
int dl_link_create(dl_source *source, dl_frame_callback callback, void *user_data, dl_link **out);

/* Pauses (no callbacks, and the source stops asking the display for refreshes when no other link
 * runs) or resumes (the first callback after it has delta 0). */
int dl_link_set_paused(dl_link *link, bool paused);
int dl_link_is_paused(dl_link *link, bool *paused);

/* The preferred callback rate: the link picks the achievable rate (refresh / k) nearest it; 0:
 * the display's rate. */
int dl_link_set_preferred_frames_per_second(dl_link *link, int32_t frames_per_second);

/* Called with each frame's fate (presented when, or discarded); NULL stops it. */
int dl_link_set_presentation_callback(dl_link *link, dl_presentation_callback callback, void *user_data);

/* The values of the link's last callback (zeroes before the first). */
int dl_link_get_frame(dl_link *link, dl_frame *frame);

/* Stops callbacks for good. The handle stays valid (queries answer; other calls return
 * DL_ERROR_INVALIDATED) until dl_link_destroy. Idempotent; safe inside the link's callback. */
int dl_link_invalidate(dl_link *link);
/* Whether the link still calls back (false once invalidated, or its source failed or was destroyed). */
int dl_link_is_valid(dl_link *link, bool *valid);

/* Invalidates the link and frees its handle. Safe inside its own callback. */
int dl_link_destroy(dl_link *link);

/* ---- The event loop ---------------------------------------------------------------------- */

/* A descriptor that becomes readable (POLLIN) when dl_dispatch has work: poll it with the
 * program's own descriptors, then call dl_dispatch(0). Owned by the library; do not close it. */
int dl_get_fd(void);

/* Runs what is due: the library's Wayland events (also those the program's own reading queued),
 * timers, and the callbacks they bring. timeout_ms: 0 returns at once; -1 waits until something
 * was handled; > 0 waits at most that long. Returns after one batch of work (so the program's loop
 * runs again after any display event, its own included): the number of callbacks run (>= 0), or a
 * negative dl_result (DL_ERROR_DISPLAY when a display failed: its sources' links are
 * invalidated). */
int dl_dispatch(int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* DISPLAYLINK_H */
