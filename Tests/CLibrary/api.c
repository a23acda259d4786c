/* The C API's rules, with no display: threads, bad and stale handles, wrong kinds, calls after
 * invalidate, a callback that destroys its own link, and a fed source's callbacks (exact values:
 * a fed source's times are the ones this program reports). Exit 0 when every check holds. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "check.h"

static const int64_t period = 16666667; /* a 60 Hz mode's period, ns */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- Threads ---- */

static void *other_thread(void *argument) {
    dl_source **out = argument;
    int *result = malloc(sizeof *result);
    *result = dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, out);
    CHECK(strstr(dl_error_message(), "main thread") != NULL);
    return result;
}

static void threads(void) {
    dl_source *source = NULL;
    pthread_t thread;
    pthread_create(&thread, NULL, other_thread, &source);
    int *result;
    pthread_join(thread, (void **)&result);
    CHECK(*result == DL_ERROR_WRONG_THREAD);
    CHECK(source == NULL);
    free(result);
    printf("api: threads ok\n");
}

/* ---- Handles ---- */

static void on_frame_ignore(dl_link *link, const dl_frame *frame, void *data) {
    (void)link, (void)frame, (void)data;
}

static void handles(void) {
    dl_source *source = NULL;
    CHECK_RESULT(dl_source_destroy(NULL), DL_ERROR_INVALID_HANDLE);
    CHECK(strstr(dl_error_message(), "NULL") != NULL);
    CHECK_RESULT(dl_source_will_commit((dl_source *)(uintptr_t)987654321), DL_ERROR_INVALID_HANDLE);
    CHECK_RESULT(dl_fed_source_create(0, DL_LATENCY_THROUGHPUT, &source), DL_ERROR_INVALID_ARGUMENT);
    CHECK(source == NULL);
    CHECK_RESULT(dl_fed_source_create(period, 7, &source), DL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, NULL), DL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, &source), DL_OK);
    CHECK(source != NULL);

    /* Wrong kinds: a fed source is no Wayland source nor surface; a link is no source. */
    CHECK_RESULT(dl_source_will_commit(source), DL_ERROR_UNSUPPORTED);
    CHECK_RESULT(dl_source_set_suspended(source, true), DL_ERROR_UNSUPPORTED);
    int32_t width, height;
    CHECK_RESULT(dl_surface_get_size(source, &width, &height), DL_ERROR_UNSUPPORTED);
    dl_link *link = NULL;
    CHECK_RESULT(dl_link_create(source, NULL, NULL, &link), DL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(dl_link_create(source, on_frame_ignore, NULL, &link), DL_OK);
    CHECK_RESULT(dl_source_will_submit((dl_source *)link, 0), DL_ERROR_INVALID_HANDLE);
    CHECK_RESULT(dl_link_set_paused((dl_link *)source, true), DL_ERROR_INVALID_HANDLE);
    CHECK_RESULT(dl_source_presented(source, -5, 1), DL_ERROR_INVALID_ARGUMENT);

    /* Stale handles: destroyed ones are recognised, never reused. */
    CHECK_RESULT(dl_source_destroy(source), DL_OK);
    CHECK_RESULT(dl_source_destroy(source), DL_ERROR_INVALID_HANDLE);
    CHECK(strstr(dl_error_message(), "not a live source") != NULL);
    bool valid = true;
    CHECK_RESULT(dl_link_is_valid(link, &valid), DL_OK);
    CHECK(!valid); /* its source went */
    CHECK_RESULT(dl_link_set_paused(link, true), DL_ERROR_INVALIDATED);
    CHECK_RESULT(dl_link_destroy(link), DL_OK);
    CHECK_RESULT(dl_link_destroy(link), DL_ERROR_INVALID_HANDLE);
    dl_source *again = NULL;
    CHECK_RESULT(dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, &again), DL_OK);
    CHECK(again != source && (void *)again != (void *)link);
    CHECK_RESULT(dl_source_destroy(again), DL_OK);
    CHECK(strcmp(dl_result_name(DL_ERROR_INVALIDATED), "DL_ERROR_INVALIDATED") == 0);
    CHECK(strcmp(dl_result_name(42), "unknown") == 0);
    CHECK_RESULT(dl_dispatch(-2), DL_ERROR_INVALID_ARGUMENT);
    CHECK(dl_get_fd() >= 0);
    printf("api: handles ok\n");
}

/* ---- A fed source's callbacks ---- */

struct fed_run {
    dl_source *source;
    dl_link *link;
    int callbacks;
    dl_frame frames[16];
    int destroy_at;          /* the callback that destroys its own link (0: none) */
    int64_t next_flip;       /* the time the next reported presentation gets */
    int presentations;
};

static void on_fed_frame(dl_link *link, const dl_frame *frame, void *data) {
    struct fed_run *run = data;
    CHECK(link == run->link);
    if (run->callbacks < 16) run->frames[run->callbacks] = *frame;
    run->callbacks += 1;
    if (run->destroy_at == run->callbacks) {
        CHECK_RESULT(dl_link_destroy(link), DL_OK);
        CHECK_RESULT(dl_link_set_paused(link, false), DL_ERROR_INVALID_HANDLE);
        return;
    }
    /* Draws nothing, submits a frame: the fed source answers whether to present it now. */
    CHECK_RESULT(dl_source_will_submit(run->source, 0), DL_SUBMIT_NOW);
}

static void fed_callbacks(void) {
    struct fed_run run = {0};
    CHECK_RESULT(dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, &run.source), DL_OK);
    CHECK_RESULT(dl_link_create(run.source, on_fed_frame, &run, &run.link), DL_OK);
    CHECK(run.callbacks == 0); /* the first callback comes from the loop, not from create */
    while (run.callbacks == 0) CHECK(dl_dispatch(1000) >= 0);
    CHECK(run.frames[0].delta_ns == 0);
    CHECK(run.frames[0].provenance == DL_PROVENANCE_ESTIMATE); /* nothing presented yet */
    CHECK(run.frames[0].duration_ns == period);
    /* Each report is a flip's completion: it brings the next callback at once, stamped with it. */
    int64_t flip = now_ns() + period;
    for (int k = 0; k < 5; k++) {
        int before = run.callbacks;
        int ran = dl_source_presented(run.source, flip, 1000 + (uint64_t)k);
        CHECK(ran == 1);
        CHECK(run.callbacks == before + 1);
        const dl_frame *frame = &run.frames[run.callbacks - 1];
        CHECK(frame->timestamp_ns == flip);
        CHECK(frame->provenance == DL_PROVENANCE_HARDWARE_VBLANK);
        CHECK(frame->sequence == 1000 + (uint64_t)k);
        CHECK(frame->target_timestamp_ns > frame->timestamp_ns);
        CHECK((frame->target_timestamp_ns - frame->timestamp_ns) % period == 0);
        if (k > 0) CHECK(frame->delta_ns == flip - run.frames[run.callbacks - 2].timestamp_ns);
        CHECK(frame->target_timestamp_ns >= run.frames[run.callbacks - 2].target_timestamp_ns);
        flip += period;
    }
    /* Calls after invalidate. */
    CHECK_RESULT(dl_link_invalidate(run.link), DL_OK);
    CHECK_RESULT(dl_link_invalidate(run.link), DL_OK);
    CHECK_RESULT(dl_link_set_paused(run.link, true), DL_ERROR_INVALIDATED);
    CHECK_RESULT(dl_link_set_preferred_frames_per_second(run.link, 30), DL_ERROR_INVALIDATED);
    bool valid = true;
    CHECK_RESULT(dl_link_is_valid(run.link, &valid), DL_OK);
    CHECK(!valid);
    int before = run.callbacks;
    CHECK(dl_source_presented(run.source, flip, 2000) == 0);
    CHECK(run.callbacks == before);
    dl_frame last;
    CHECK_RESULT(dl_link_get_frame(run.link, &last), DL_OK);
    CHECK(last.timestamp_ns == run.frames[before - 1].timestamp_ns);
    CHECK_RESULT(dl_link_destroy(run.link), DL_OK);
    CHECK_RESULT(dl_source_destroy(run.source), DL_OK);
    printf("api: fed callbacks ok (%d callbacks)\n", run.callbacks);
}

static void callback_destroys_its_link(void) {
    struct fed_run run = {0};
    run.destroy_at = 3;
    CHECK_RESULT(dl_fed_source_create(period, DL_LATENCY_THROUGHPUT, &run.source), DL_OK);
    CHECK_RESULT(dl_link_create(run.source, on_fed_frame, &run, &run.link), DL_OK);
    while (run.callbacks == 0) CHECK(dl_dispatch(1000) >= 0);
    int64_t flip = now_ns() + period;
    for (int k = 0; k < 4; k++, flip += period) CHECK(dl_source_presented(run.source, flip, 10 + (uint64_t)k) >= 0);
    CHECK(run.callbacks == 3);
    for (int k = 0; k < 5; k++) CHECK(dl_dispatch(0) >= 0); /* the handle's release runs; nothing calls back */
    CHECK(run.callbacks == 3);
    CHECK_RESULT(dl_link_destroy(run.link), DL_ERROR_INVALID_HANDLE);
    CHECK_RESULT(dl_source_destroy(run.source), DL_OK);
    printf("api: a callback destroying its own link ok\n");
}

/* ---- A surface of the library's own (offscreen: virtual time, no display needed) ---- */

struct surface_run {
    dl_source *surface;
    int callbacks;
    int64_t last_timestamp;
    bool failed_present;
};

static void on_surface_frame(dl_link *link, const dl_frame *frame, void *data) {
    (void)link;
    struct surface_run *run = data;
    if (run->callbacks == 0) CHECK(frame->delta_ns == 0);
    else CHECK(frame->delta_ns == frame->timestamp_ns - run->last_timestamp);
    run->last_timestamp = frame->timestamp_ns;
    run->callbacks += 1;
    if (dl_surface_begin_frame(run->surface) != DL_OK || dl_surface_present(run->surface) != DL_OK) run->failed_present = true;
}

static void own_surface(void) {
    dl_surface_options options;
    dl_surface_options_init(&options);
    options.backend = 9;
    dl_source *surface = NULL;
    CHECK_RESULT(dl_surface_source_create(&options, &surface), DL_ERROR_INVALID_ARGUMENT);
    options.backend = 3; /* offscreen */
    options.width = 64;
    options.height = 48;
    CHECK_RESULT(dl_surface_source_create(&options, &surface), DL_OK);
    int32_t width = 0, height = 0, major = 0;
    CHECK_RESULT(dl_surface_get_size(surface, &width, &height), DL_OK);
    CHECK(width == 64 && height == 48);
    CHECK_RESULT(dl_surface_get_gles_version(surface, &major), DL_OK);
    CHECK(major == 2 || major == 3);
    CHECK_RESULT(dl_source_will_submit(surface, 0), DL_ERROR_UNSUPPORTED);
    struct surface_run run = {.surface = surface};
    dl_link *link = NULL;
    CHECK_RESULT(dl_link_create(surface, on_surface_frame, &run, &link), DL_OK);
    while (run.callbacks < 10) CHECK(dl_dispatch(1000) >= 0);
    CHECK(!run.failed_present);
    CHECK_RESULT(dl_link_set_paused(link, true), DL_OK);
    bool paused = false;
    CHECK_RESULT(dl_link_is_paused(link, &paused), DL_OK);
    CHECK(paused);
    CHECK_RESULT(dl_link_destroy(link), DL_OK);
    CHECK_RESULT(dl_source_destroy(surface), DL_OK);
    printf("api: own surface (offscreen) ok (%d callbacks)\n", run.callbacks);
}

int main(void) {
    threads();
    handles();
    fed_callbacks();
    callback_destroys_its_link();
    own_surface();
    printf("api: all checks passed\n");
    return 0;
}
