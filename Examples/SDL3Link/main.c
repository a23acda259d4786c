/*
 * SDL3Link: the demo's bounce scene drawn by SDL 3's own window and renderer (GLES 2), timed by the
 * display link through its C API. SDL's vsync is off: the link paces the loop, and the views move
 * to where they are at each frame's targetTimestamp (when that frame will be on screen), not by
 * the time between loop turns.
 *
 *   SDL3Link [--frames N] [--seconds S] [--views N] [--size WxH] [--latency throughput|low]
 *            [--pacing link|vsync] [--fixed-step S] [--fullscreen-at N] [--until-quit] [--report FILE.json]
 *
 * --frames N ends after N frames (120 by default); --seconds S after S seconds of wall time from
 * the first callback (the first of the two to come; with --seconds alone, by time only).
 * For the benchmarks (make bench-peers, Benchmarks/Scripts/peers-table):
 *   --pacing vsync   the same drawing with no link at all: SDL's own vsync (SDL_SetRenderVSync 1)
 *                    paces the loop, one frame drawn every turn, the views moved by the time
 *                    between turns (the baseline of the link's cost in instructions);
 *   --fixed-step S   the views move S seconds a frame whatever the pacing (as the demo's
 *                    --fixed-step: under callgrind a frame takes far longer than a refresh, and
 *                    both pacings must draw the same frames).
 *
 * Build (with the library installed: make install PREFIX=...):
 *   cc main.c presentation-time-protocol.c $(pkg-config --cflags --libs displaylink sdl3 wayland-client) -lm
 *
 * Its check (exit 0 only when every point holds; what holds at any speed, on any compositor):
 *   - every timestamp the link stamped from presentation feedback equals a presentation time the
 *     compositor reported to this program's own wp_presentation feedback, requested for the same
 *     commits (the library's are its own, on its own event queue);
 *   - the first callback's delta is 0, and every later delta is the difference of timestamps;
 *   - targets never go back;
 *   - SDL's own events still arrive: with --fullscreen-at N the window asks for fullscreen at frame
 *     N, and SDL_EVENT_WINDOW_ENTER_FULLSCREEN must come (SDL sends it from the compositor's
 *     xdg_toplevel.configure); with --until-quit the run ends at SDL_EVENT_QUIT (SIGINT or the
 *     window's close), not after N frames.
 * With --pacing vsync there is no link and so nothing of it to check: the check is then that
 * frames were presented.
 * It prints one line per frame for the first ten (callback, target, deadline, presented, in ms from
 * the first callback), a summary line, and with --report a JSON report of every frame, with the
 * fields of the demo's report that the benchmark scripts read (all times in seconds on
 * CLOCK_MONOTONIC: presented is this program's own presentation time, converted) and a summary.
 */
#include <SDL3/SDL.h>
#include <signal.h>
#include <unistd.h>
#include <SDL3/SDL_main.h>
#include <displaylink.h>
#include <limits.h>
#include <wayland-client.h>

#include "../../Benchmarks/Peers/bounce-views.h"
#include "presentation-time-client-protocol.h"

#define TEXTURE_SIDE 64
#define MAX_FRAMES 20000 /* --frames at most; a --seconds run keeps as many records as it draws */

typedef struct {
    int64_t callback_ns;  /* CLOCK_MONOTONIC when the callback began (--pacing vsync: the loop turn) */
    int64_t encoded_ns;   /* when the frame's draw calls were made (before the commit hook) */
    int64_t submitted_ns; /* when SDL_RenderPresent returned */
    dl_frame frame;       /* the link's values (--pacing link) */
    int64_t presented_ns; /* from this program's own feedback: 0 not yet, -1 discarded */
    uint32_t commit;      /* the commit number this frame's feedback was requested for */
} Record;

typedef enum { PACING_LINK, PACING_VSYNC } Pacing;

/* An offset that puts a time of the compositor's presentation clock on CLOCK_MONOTONIC. */
typedef struct {
    int64_t offset, uncertainty;
    int64_t at; /* the presentation clock's reading it was measured at */
} ClockOffset;

typedef struct {
    SDL_Window *window;
    SDL_Renderer *renderer;
    SDL_Texture *texture;
    dl_source *source; /* NULL with --pacing vsync */
    dl_link *link;
    BounceViews views;
    Record *records;
    int frames, capacity, wanted, fullscreen_at;
    Pacing pacing;
    double seconds;    /* > 0: end after this much wall time from the first callback */
    double fixed_step; /* >= 0: the views move this much a frame */
    bool until_quit, running, fullscreen_asked, fullscreen_entered;
    int64_t previous_target, previous_turn;
    const char *failure, *ended_by;
    /* This program's own wp_presentation, on its own queue. */
    struct wl_display *display;
    struct wl_surface *surface;
    struct wl_event_queue *queue;
    struct wp_presentation *presentation;
    uint32_t clock_id;
    ClockOffset clock_start, clock_end; /* measured after binding and at the end (clock_id != MONOTONIC) */
} App;

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* The offset that puts a time of the compositor's presentation clock on CLOCK_MONOTONIC, and its
 * uncertainty: the narrowest of many brackets of monotonic, presentation, monotonic readings. */
static ClockOffset measure_offset(clockid_t clock) {
    ClockOffset best = {.uncertainty = INT64_MAX};
    for (int i = 0; i < 64; i++) {
        int64_t before = now_ns(), source = clock_ns(clock), after = now_ns();
        if ((after - before + 1) / 2 < best.uncertainty) {
            best.uncertainty = (after - before + 1) / 2;
            best.offset = before + (after - before) / 2 - source;
            best.at = source;
        }
    }
    return best;
}

/* A presentation-clock time on CLOCK_MONOTONIC: the offset interpolated between the two
 * measurements, so that a slew of CLOCK_MONOTONIC (NTP) over the run is followed. */
static int64_t to_monotonic(const App *app, int64_t t) {
    const ClockOffset *a = &app->clock_start, *b = &app->clock_end;
    if (app->clock_id == CLOCK_MONOTONIC) return t;
    if (b->at == a->at) return t + b->offset;
    double k = (double)(t - a->at) / (double)(b->at - a->at);
    return t + a->offset + (int64_t)llround(k * (double)(b->offset - a->offset));
}

/* ---- This program's own presentation feedback ---- */

typedef struct {
    App *app;
    int record;
} Pending;

static void feedback_sync_output(void *data, struct wp_presentation_feedback *f, struct wl_output *o) { (void)data, (void)f, (void)o; }
static void feedback_presented(void *data, struct wp_presentation_feedback *feedback, uint32_t sec_hi, uint32_t sec_lo,
                               uint32_t nsec, uint32_t refresh, uint32_t seq_hi, uint32_t seq_lo, uint32_t flags) {
    (void)refresh, (void)seq_hi, (void)seq_lo, (void)flags;
    Pending *pending = data;
    int64_t t = (int64_t)(((uint64_t)sec_hi << 32) | sec_lo) * 1000000000 + nsec;
    pending->app->records[pending->record].presented_ns = t;
    wp_presentation_feedback_destroy(feedback);
    free(pending);
}
static void feedback_discarded(void *data, struct wp_presentation_feedback *feedback) {
    Pending *pending = data;
    pending->app->records[pending->record].presented_ns = -1;
    wp_presentation_feedback_destroy(feedback);
    free(pending);
}
static const struct wp_presentation_feedback_listener feedback_listener = {feedback_sync_output, feedback_presented, feedback_discarded};

static void clock_id(void *data, struct wp_presentation *p, uint32_t id) { (void)p; ((App *)data)->clock_id = id; }
static const struct wp_presentation_listener presentation_listener = {clock_id};

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    (void)version;
    App *app = data;
    if (strcmp(interface, wp_presentation_interface.name) == 0) {
        app->presentation = wl_registry_bind(registry, name, &wp_presentation_interface, 1);
        wp_presentation_add_listener(app->presentation, &presentation_listener, app);
    }
}
static void global_remove(void *data, struct wl_registry *r, uint32_t name) { (void)data, (void)r, (void)name; }
static const struct wl_registry_listener registry_listener = {global, global_remove};

/* Binds wp_presentation on SDL's display through a wrapper on a queue of this program's own, as
 * the library does for itself, so that SDL's dispatch never runs these listeners. */
static bool bind_presentation(App *app) {
    app->queue = wl_display_create_queue(app->display);
    struct wl_display *wrapper = wl_proxy_create_wrapper(app->display);
    wl_proxy_set_queue((struct wl_proxy *)wrapper, app->queue);
    struct wl_registry *registry = wl_display_get_registry(wrapper);
    wl_registry_add_listener(registry, &registry_listener, app);
    wl_display_roundtrip_queue(app->display, app->queue);
    wl_display_roundtrip_queue(app->display, app->queue);
    wl_registry_destroy(registry);
    wl_proxy_wrapper_destroy(wrapper);
    return app->presentation != NULL;
}

/* ---- The scene ---- */

static SDL_Texture *rounded_square(SDL_Renderer *renderer) {
    static uint8_t pixels[TEXTURE_SIDE * TEXTURE_SIDE * 4];
    const float half = TEXTURE_SIDE / 2.0f, radius = TEXTURE_SIDE / 4.0f;
    for (int y = 0; y < TEXTURE_SIDE; y++) {
        for (int x = 0; x < TEXTURE_SIDE; x++) {
            float qx = fabsf(x + 0.5f - half) - (half - radius), qy = fabsf(y + 0.5f - half) - (half - radius);
            float outside = hypotf(fmaxf(qx, 0), fmaxf(qy, 0)), inside = fminf(fmaxf(qx, qy), 0);
            float coverage = fminf(1, fmaxf(0, 0.5f - (outside + inside - radius)));
            uint8_t *p = &pixels[(y * TEXTURE_SIDE + x) * 4];
            p[0] = p[1] = p[2] = 255;
            p[3] = (uint8_t)lrintf(coverage * 255);
        }
    }
    SDL_Texture *texture = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STATIC, TEXTURE_SIDE, TEXTURE_SIDE);
    if (!texture) return NULL;
    SDL_UpdateTexture(texture, NULL, pixels, TEXTURE_SIDE * 4);
    SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_BLEND);
    SDL_SetTextureScaleMode(texture, SDL_SCALEMODE_LINEAR);
    return texture;
}

static void fail(App *app, const char *why) {
    if (!app->failure) app->failure = why;
}

static void end(App *app, const char *why) {
    app->running = false;
    if (!app->ended_by) app->ended_by = why;
}

/* Whether --seconds is up at `now` (wall time from the first callback). */
static bool time_up(const App *app, int64_t now) {
    return app->seconds > 0 && app->frames > 0 && (double)(now - app->records[0].callback_ns) >= app->seconds * 1e9;
}

/* The next frame's record (the records grow as a --seconds run needs). */
static Record *next_record(App *app) {
    if (app->frames == app->capacity) {
        int capacity = app->capacity * 2;
        Record *grown = realloc(app->records, (size_t)capacity * sizeof(Record));
        if (!grown) return NULL;
        memset(grown + app->capacity, 0, (size_t)(capacity - app->capacity) * sizeof(Record));
        app->records = grown;
        app->capacity = capacity;
    }
    return &app->records[app->frames];
}

/* Moves the views by `step` seconds, draws them, then the commit hook (when the link paces), this
 * program's own feedback for the same commit, and the commit. */
static void draw_and_present(App *app, Record *record, double step) {
    bounce_update(&app->views, step);
    SDL_SetRenderDrawColorFloat(app->renderer, bounce_background.r, bounce_background.g, bounce_background.b, 1);
    SDL_RenderClear(app->renderer);
    for (int i = 0; i < app->views.count; i++) {
        float s = (float)app->views.size[i];
        const BounceColor c = bounce_palette[app->views.color[i]];
        SDL_SetTextureColorModFloat(app->texture, c.r, c.g, c.b);
        SDL_SetTextureAlphaModFloat(app->texture, (float)bounce_opacity(&app->views, i));
        SDL_FRect rect = {(float)app->views.x[i] - s / 2, (float)app->views.y[i] - s / 2, s, s};
        SDL_RenderTexture(app->renderer, app->texture, NULL, &rect);
    }
    record->encoded_ns = now_ns();
    if (app->source && dl_source_will_commit(app->source) != DL_OK) fail(app, dl_error_message());
    Pending *pending = malloc(sizeof *pending);
    pending->app = app;
    pending->record = app->frames;
    struct wp_presentation_feedback *feedback = wp_presentation_feedback(app->presentation, app->surface);
    wp_presentation_feedback_add_listener(feedback, &feedback_listener, pending);
    if (!SDL_RenderPresent(app->renderer)) fail(app, "SDL_RenderPresent failed");
    record->submitted_ns = now_ns();
}

/* After a frame: the fullscreen request and whether the run is done. */
static void frame_done(App *app) {
    app->frames += 1;
    if (app->fullscreen_at > 0 && app->frames == app->fullscreen_at) {
        SDL_SetWindowFullscreen(app->window, true);
        app->fullscreen_asked = true;
    }
    /* Ends after the frames asked for, once the fullscreen asked for was entered; a compositor
     * that never grants it ends the run after ten times the frames, and the check fails. */
    bool done = app->frames >= app->wanted && (!app->fullscreen_asked || app->fullscreen_entered);
    if (!app->until_quit && (done || (int64_t)app->frames >= (int64_t)app->wanted * 10)) end(app, "frames");
}

/* The link's callback: move to the target, draw, announce the commit, present. */
static void on_frame(dl_link *link, const dl_frame *frame, void *data) {
    (void)link;
    App *app = data;
    if (!app->running) return; /* the run ended earlier in this dispatch */
    int64_t now = now_ns();
    if (time_up(app, now)) { end(app, "seconds"); return; }
    Record *record = next_record(app);
    if (!record) { fail(app, "out of memory for the records"); end(app, "error"); return; }
    record->callback_ns = now;
    record->frame = *frame;
    if (app->frames == 0) {
        if (frame->delta_ns != 0) fail(app, "the first callback's delta is not 0");
    } else {
        const dl_frame *previous = &app->records[app->frames - 1].frame;
        /* The first failure's values, on stderr (the report may not be asked for). */
        if (frame->delta_ns != 0 && frame->delta_ns != frame->timestamp_ns - previous->timestamp_ns) {
            if (!app->failure)
                fprintf(stderr, "SDL3Link: frame %d: delta %lld ns, timestamps %lld and %lld ns\n", app->frames, (long long)frame->delta_ns,
                        (long long)previous->timestamp_ns, (long long)frame->timestamp_ns);
            fail(app, "a delta is not the difference of the timestamps");
        }
        if (frame->target_timestamp_ns < previous->target_timestamp_ns) {
            if (!app->failure)
                fprintf(stderr, "SDL3Link: frame %d: target %lld ns, %lld ns before frame %d's (provenance %d, then %d; callbacks %.3f ms apart)\n",
                        app->frames, (long long)frame->target_timestamp_ns, (long long)(previous->target_timestamp_ns - frame->target_timestamp_ns),
                        app->frames - 1, previous->provenance, frame->provenance, (now - app->records[app->frames - 1].callback_ns) / 1e6);
            fail(app, "a target went back");
        }
    }
    /* Frame-rate independent: the views move by the time between the frames' targets. */
    double step = app->frames == 0 ? 0 : (double)(frame->target_timestamp_ns - app->previous_target) / 1e9;
    app->previous_target = frame->target_timestamp_ns;
    if (app->fixed_step >= 0) step = app->frames == 0 ? 0 : app->fixed_step;
    draw_and_present(app, record, step);
    frame_done(app);
}

/* --pacing vsync: one loop turn draws one frame; SDL_RenderPresent waits for the display (vsync). */
static void vsync_turn(App *app) {
    int64_t now = now_ns();
    if (time_up(app, now)) { end(app, "seconds"); return; }
    Record *record = next_record(app);
    if (!record) { fail(app, "out of memory for the records"); end(app, "error"); return; }
    record->callback_ns = now;
    double step = app->frames == 0 ? 0 : (double)(now - app->previous_turn) / 1e9;
    app->previous_turn = now;
    if (app->fixed_step >= 0) step = app->frames == 0 ? 0 : app->fixed_step;
    draw_and_present(app, record, step);
    frame_done(app);
}

static bool parse_size(const char *text, int *w, int *h) { return sscanf(text, "%dx%d", w, h) == 2 && *w > 0 && *h > 0; }

/* ---- The report ---- */

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The demo's percentile (Statistics.percentile): the value at rank round(p (n − 1)); sorts. */
static void json_percentile(FILE *out, double *values, int n, double p) {
    if (n == 0) { fprintf(out, "null"); return; }
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    int rank = (int)llround(p * (n - 1));
    fprintf(out, "%.9f", values[rank < 0 ? 0 : rank >= n ? n - 1 : rank]);
}

static void json_seconds(FILE *out, int64_t ns, bool known) {
    if (known) fprintf(out, "%.9f", ns / 1e9); else fprintf(out, "null");
}

static const char *provenance_name(int32_t p) {
    switch (p) {
    case DL_PROVENANCE_HARDWARE_VBLANK: return "hardware-vblank";
    case DL_PROVENANCE_PRESENTATION_FEEDBACK: return "presentation-feedback";
    case DL_PROVENANCE_ESTIMATE: return "frame-callback-estimate";
    case DL_PROVENANCE_TIMER_FALLBACK: return "timer-fallback";
    default: return "unknown";
    }
}

static const char *deadline_name(int32_t p) {
    switch (p) {
    case DL_DEADLINE_SUFFICIENT: return "sufficient";
    case DL_DEADLINE_BRACKETED: return "bracketed";
    case DL_DEADLINE_PRIOR: return "prior";
    default: return NULL;
    }
}

/* Every frame, with the fields of the demo's report (FrameReport.json) that apply, and a summary
 * computed as the demo computes its own. Link values are null with --pacing vsync. */
static void write_report(const App *app, const char *path, int32_t latency, int width, int height, double cpu_s) {
    FILE *out = fopen(path, "w");
    if (!out) { fprintf(stderr, "SDL3Link: cannot write %s\n", path); return; }
    bool linked = app->pacing == PACING_LINK;
    const char *renderer = SDL_GetRendererName(app->renderer), *video = SDL_GetCurrentVideoDriver();
    fprintf(out, "{\"program\":\"SDL3Link\",\"latency\":\"%s\",\"views\":%d,\"pacing\":\"%s\",\"backend\":\"wayland\",\"scene\":\"bounce\",",
            latency == DL_LATENCY_LOW ? "low" : "throughput", app->views.count, linked ? "link" : "vsync");
    fprintf(out, "\"environment\":{\"width\":%d,\"height\":%d,\"video_driver\":\"%s\",\"renderer\":\"%s\",\"presentation_clock\":%u,"
                 "\"clock_offset_start_ns\":%lld,\"clock_offset_end_ns\":%lld,\"fixed_step\":",
            width, height, video ? video : "?", renderer ? renderer : "?", app->clock_id, (long long)app->clock_start.offset,
            (long long)app->clock_end.offset);
    if (app->fixed_step >= 0) fprintf(out, "%.9f", app->fixed_step); else fprintf(out, "null");
    fprintf(out, ",\"seconds\":");
    if (app->seconds > 0) fprintf(out, "%.3f", app->seconds); else fprintf(out, "null");
    fprintf(out, "},\"frames\":[");
    for (int i = 0; i < app->frames; i++) {
        const Record *r = &app->records[i];
        const dl_frame *f = &r->frame;
        const char *deadline = linked ? deadline_name(f->deadline_provenance) : NULL;
        fprintf(out, "%s\n{\"index\":%d,\"callback_at\":%.9f,\"timestamp\":", i ? "," : "", i, r->callback_ns / 1e9);
        json_seconds(out, f->timestamp_ns, linked);
        fprintf(out, ",\"target_timestamp\":");
        json_seconds(out, f->target_timestamp_ns, linked);
        fprintf(out, ",\"deadline\":");
        json_seconds(out, f->deadline_ns, deadline != NULL);
        fprintf(out, ",\"presented\":");
        json_seconds(out, r->presented_ns, r->presented_ns > 0);
        if (linked) fprintf(out, ",\"provenance\":%d,\"render_estimate\":", f->provenance); else fprintf(out, ",\"provenance\":null,\"render_estimate\":");
        json_seconds(out, f->render_estimate_ns, linked && f->render_estimate_ns >= 0);
        if (deadline) fprintf(out, ",\"deadline_provenance\":\"%s\"", deadline); else fprintf(out, ",\"deadline_provenance\":null");
        if (linked)
            fprintf(out, ",\"provenance_name\":\"%s\",\"duration\":%.9f,\"delta\":%.9f,\"sequence\":%llu,\"missed\":%d,\"refresh_index\":%llu",
                    provenance_name(f->provenance), f->duration_ns / 1e9, f->delta_ns / 1e9, (unsigned long long)f->sequence, f->missed_frames,
                    (unsigned long long)f->refresh_index);
        else
            fprintf(out, ",\"provenance_name\":null,\"duration\":null,\"delta\":null,\"sequence\":null,\"missed\":null,\"refresh_index\":null");
        fprintf(out, ",\"discarded\":%s,\"encoded_at\":%.9f,\"submitted_at\":%.9f}", r->presented_ns < 0 ? "true" : "false",
                r->encoded_ns / 1e9, r->submitted_ns / 1e9);
    }
    /* The summary, as FrameReport.summary: prediction error over the presented frames, latency
     * (presented − callback_at) from frame 3 on (the first commit and the shaders' first use). */
    int n = app->frames, presented = 0, discarded = 0, errors = 0, latencies = 0, intervals = 0;
    long long missed = 0;
    double *error = malloc(sizeof(double) * (n + 1)), *latency_s = malloc(sizeof(double) * (n + 1)),
           *interval = malloc(sizeof(double) * (n + 1));
    double first = 0, last = 0, previous = 0;
    for (int i = 0; i < n; i++) {
        const Record *r = &app->records[i];
        if (linked) missed += r->frame.missed_frames;
        if (r->presented_ns < 0) discarded++;
        if (r->presented_ns <= 0) continue;
        double t = r->presented_ns / 1e9;
        if (presented == 0) first = t; else interval[intervals++] = t - previous;
        previous = last = t;
        presented++;
        if (linked) error[errors++] = fabs(r->frame.target_timestamp_ns / 1e9 - t);
        if (i >= 3) latency_s[latencies++] = t - r->callback_ns / 1e9;
    }
    fprintf(out, "\n],\"summary\":{\"frames\":%d,\"presented\":%d,\"discarded\":%d,\"missed\":%lld,\"median_interval\":", n, presented,
            discarded, missed);
    json_percentile(out, interval, intervals, 0.5);
    fprintf(out, ",\"p99_interval\":");
    json_percentile(out, interval, intervals, 0.99);
    fprintf(out, ",\"median_prediction_error\":");
    json_percentile(out, error, errors, 0.5);
    fprintf(out, ",\"median_latency\":");
    json_percentile(out, latency_s, latencies, 0.5);
    fprintf(out, ",\"p99_latency\":");
    json_percentile(out, latency_s, latencies, 0.99);
    fprintf(out, ",\"presented_rate\":");
    if (presented > 1 && last > first) fprintf(out, "%.6f", (presented - 1) / (last - first)); else fprintf(out, "null");
    fprintf(out, ",\"cpu_s\":%.6f,\"views\":%d,\"ended_by\":\"%s\",\"ended_at\":%.9f,\"last_callback_at\":", cpu_s, app->views.count,
            app->ended_by ? app->ended_by : "unknown", now_ns() / 1e9);
    json_seconds(out, n > 0 ? app->records[n - 1].callback_ns : 0, n > 0);
    fprintf(out, ",\"check\":\"%s\"}}\n", app->failure ? "failed" : "ok");
    free(error), free(latency_s), free(interval);
    fclose(out);
}

/* Where the program is, for the hang guard's message. */
static const char *volatile phase = "starting";
static volatile int frames_so_far = 0;

/* The hang guard (--timeout, 120 s by default): a run that stops making progress ends with a
 * message saying where, never hangs its caller. */
static void hang_guard(int signal) {
    (void)signal;
    char message[160];
    int n = snprintf(message, sizeof message, "SDL3Link: hang guard: no end after the timeout, %d frames, in %s\n", frames_so_far, phase);
    if (n > 0) (void)!write(2, message, (size_t)n);
    _exit(3);
}

int main(int argc, char **argv) {
    App app = {0};
    int timeout_seconds = 120;
    app.wanted = 120;
    app.fixed_step = -1;
    app.pacing = PACING_LINK;
    int views = 60, width = 250, height = 250;
    bool frames_given = false;
    int32_t latency = DL_LATENCY_THROUGHPUT;
    const char *report = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--frames") == 0 && v) app.wanted = atoi(argv[++i]), frames_given = true;
        else if (strcmp(a, "--seconds") == 0 && v) app.seconds = atof(argv[++i]);
        else if (strcmp(a, "--views") == 0 && v) views = atoi(argv[++i]);
        else if (strcmp(a, "--size") == 0 && v && parse_size(v, &width, &height)) i++;
        else if (strcmp(a, "--latency") == 0 && v) latency = strcmp(argv[++i], "low") == 0 ? DL_LATENCY_LOW : DL_LATENCY_THROUGHPUT;
        else if (strcmp(a, "--pacing") == 0 && v && (strcmp(v, "link") == 0 || strcmp(v, "vsync") == 0))
            app.pacing = strcmp(argv[++i], "vsync") == 0 ? PACING_VSYNC : PACING_LINK;
        else if (strcmp(a, "--fixed-step") == 0 && v) app.fixed_step = atof(argv[++i]);
        else if (strcmp(a, "--fullscreen-at") == 0 && v) app.fullscreen_at = atoi(argv[++i]);
        else if (strcmp(a, "--until-quit") == 0) app.until_quit = true;
        else if (strcmp(a, "--report") == 0 && v) report = argv[++i];
        else if (strcmp(a, "--timeout") == 0 && v) timeout_seconds = atoi(argv[++i]);
        else { fprintf(stderr, "SDL3Link: unknown or incomplete argument '%s'\n", a); return 2; }
    }
    if (app.wanted < 1 || app.wanted > MAX_FRAMES || views < 1 || app.seconds < 0 || (app.fixed_step < 0 && app.fixed_step != -1)) {
        fprintf(stderr, "SDL3Link: --frames 1..%d, --views >= 1, --seconds > 0, --fixed-step >= 0\n", MAX_FRAMES);
        return 2;
    }
    if (app.seconds > 0 && !frames_given) app.wanted = INT_MAX; /* by time only */
    app.capacity = 1024;
    app.records = calloc((size_t)app.capacity, sizeof(Record));

    SDL_SetHint(SDL_HINT_VIDEO_DRIVER, "wayland");
    SDL_SetHint(SDL_HINT_RENDER_DRIVER, "opengles2");
    signal(SIGALRM, hang_guard);
    alarm(timeout_seconds > 0 ? (unsigned)timeout_seconds : 120);
    phase = "SDL_Init, window and renderer";
    if (!SDL_Init(SDL_INIT_VIDEO)) { fprintf(stderr, "SDL3Link: SDL_Init: %s\n", SDL_GetError()); return 1; }
    app.window = SDL_CreateWindow("SDL3Link", width, height, 0);
    if (!app.window) { fprintf(stderr, "SDL3Link: SDL_CreateWindow: %s\n", SDL_GetError()); return 1; }
    app.renderer = SDL_CreateRenderer(app.window, NULL);
    if (!app.renderer) { fprintf(stderr, "SDL3Link: SDL_CreateRenderer: %s\n", SDL_GetError()); return 1; }
    /* The link paces the loop, not SDL's vsync (--pacing vsync: SDL's vsync, and no link). */
    if (!SDL_SetRenderVSync(app.renderer, app.pacing == PACING_VSYNC ? 1 : 0)) { fprintf(stderr, "SDL3Link: SDL_SetRenderVSync: %s\n", SDL_GetError()); return 1; }
    app.texture = rounded_square(app.renderer);
    if (!app.texture) { fprintf(stderr, "SDL3Link: texture: %s\n", SDL_GetError()); return 1; }
    bounce_init(&app.views, views, width, height, 1);

    SDL_PropertiesID props = SDL_GetWindowProperties(app.window);
    app.display = SDL_GetPointerProperty(props, SDL_PROP_WINDOW_WAYLAND_DISPLAY_POINTER, NULL);
    app.surface = SDL_GetPointerProperty(props, SDL_PROP_WINDOW_WAYLAND_SURFACE_POINTER, NULL);
    if (!app.display || !app.surface) { fprintf(stderr, "SDL3Link: not on Wayland (SDL's video driver: %s)\n", SDL_GetCurrentVideoDriver()); return 1; }
    phase = "binding this program's wp_presentation";
    if (!bind_presentation(&app)) { fprintf(stderr, "SDL3Link: the compositor offers no wp_presentation\n"); return 1; }
    if (app.clock_id != CLOCK_MONOTONIC) app.clock_start = measure_offset((clockid_t)app.clock_id);

    if (app.pacing == PACING_LINK) {
        dl_wayland_options options;
        dl_wayland_options_init(&options);
        options.latency = latency;
        phase = "dl_wayland_source_create";
        if (dl_wayland_source_create(app.display, app.surface, &options, &app.source) != DL_OK ||
            dl_link_create(app.source, on_frame, &app, &app.link) != DL_OK) {
            fprintf(stderr, "SDL3Link: %s\n", dl_error_message());
            return 1;
        }
    }

    app.running = true;
    bool quit_seen = false;
    while (app.running) {
        SDL_Event event;
        phase = "SDL_PollEvent";
        while (SDL_PollEvent(&event)) {
            if (event.type == SDL_EVENT_QUIT) { quit_seen = true; end(&app, "quit"); }
            if (event.type == SDL_EVENT_WINDOW_ENTER_FULLSCREEN) app.fullscreen_entered = true;
            if (app.source && event.type == SDL_EVENT_WINDOW_OCCLUDED) dl_source_set_suspended(app.source, true);
            if (app.source && event.type == SDL_EVENT_WINDOW_EXPOSED) dl_source_set_suspended(app.source, false);
        }
        if (!app.running) break;
        /* This program's own feedback events, whoever read them off the socket. */
        wl_display_dispatch_queue_pending(app.display, app.queue);
        if (app.pacing == PACING_VSYNC) {
            vsync_turn(&app);
            continue;
        }
        /* Waits for the next callback (or any display event: SDL's are then pumped above). */
        phase = "dl_dispatch";
        frames_so_far = app.frames;
        if (dl_dispatch(-1) < 0) { fprintf(stderr, "SDL3Link: dl_dispatch: %s\n", dl_error_message()); return 1; }
    }
    /* The last frames' feedback: a round trip on this program's queue, then a few frames' time. */
    for (int k = 0; k < 10; k++) {
        wl_display_roundtrip_queue(app.display, app.queue);
        bool pending = false;
        for (int i = 0; i < app.frames; i++) pending |= app.records[i].presented_ns == 0;
        if (!pending) break;
        SDL_Delay(20);
    }

    /* The check. The compositor reports times on its presentation clock; the library converts
     * them to CLOCK_MONOTONIC. On CLOCK_MONOTONIC (mutter, kwin) a timestamp must equal a reported
     * time exactly; on another clock (weston: CLOCK_MONOTONIC_RAW) it must equal one converted here
     * (with the offset measured after binding and now, interpolated), to within the two
     * conversions' uncertainty (this program's and the library's, which it measures the same way:
     * 50 us allows for it and for the clocks' slew between the library's measurements). The
     * report carries the converted times. */
    int64_t tolerance = 0;
    if (app.clock_id != CLOCK_MONOTONIC) {
        app.clock_end = measure_offset((clockid_t)app.clock_id);
        int64_t uncertainty = app.clock_start.uncertainty > app.clock_end.uncertainty ? app.clock_start.uncertainty : app.clock_end.uncertainty;
        tolerance = uncertainty + 50000;
        for (int i = 0; i < app.frames; i++) if (app.records[i].presented_ns > 0) app.records[i].presented_ns = to_monotonic(&app, app.records[i].presented_ns);
    }
    int stamped = 0, estimated = 0, unmatched = 0, presented = 0;
    for (int i = 0; i < app.frames; i++) if (app.records[i].presented_ns > 0) presented++;
    for (int i = 0; i < app.frames && app.pacing == PACING_LINK; i++) {
        if (app.records[i].frame.provenance != DL_PROVENANCE_PRESENTATION_FEEDBACK) { estimated++; continue; }
        stamped++;
        /* The frame presented at this timestamp was drawn shortly before: searched from here back,
         * then forward (every frame, as before, only in another order). */
        bool found = false;
        for (int k = 0; k < app.frames && !found; k++) {
            int j = k <= i ? i - k : k;
            int64_t difference = app.records[j].presented_ns - app.records[i].frame.timestamp_ns;
            found = app.records[j].presented_ns > 0 && difference <= tolerance && difference >= -tolerance;
        }
        if (!found) unmatched++;
    }
    if (app.pacing == PACING_LINK) {
        if (stamped == 0) fail(&app, "no timestamp came from presentation feedback");
        if (unmatched > 0) fail(&app, "a feedback timestamp is not a presentation time the compositor reported");
    } else if (presented == 0) {
        fail(&app, "no frame was presented");
    }
    if (app.fullscreen_asked && !app.fullscreen_entered) fail(&app, "SDL_EVENT_WINDOW_ENTER_FULLSCREEN never came");
    if (app.until_quit && !quit_seen) fail(&app, "SDL_EVENT_QUIT never came");

    int64_t origin = app.frames > 0 ? app.records[0].callback_ns : 0;
    for (int i = 0; i < app.frames && i < 10; i++) {
        const Record *r = &app.records[i];
        printf("SDL3Link: frame %d callback=%.3f", i, (r->callback_ns - origin) / 1e6);
        if (app.pacing == PACING_LINK) {
            printf(" target=%.3f deadline=", (r->frame.target_timestamp_ns - origin) / 1e6);
            if (r->frame.deadline_provenance == DL_DEADLINE_NONE) printf("none"); else printf("%.3f", (r->frame.deadline_ns - origin) / 1e6);
        }
        if (r->presented_ns > 0) printf(" presented=%.3f", (r->presented_ns - origin) / 1e6); else printf(" presented=%s", r->presented_ns < 0 ? "discarded" : "unknown");
        if (app.pacing == PACING_LINK) printf(" timestamp=%.3f provenance=%d", (r->frame.timestamp_ns - origin) / 1e6, r->frame.provenance);
        printf("\n");
    }
    const char *compositor = SDL_GetCurrentVideoDriver();
    printf("SDL3Link: %s frames=%d presented=%d stamped=%d estimated=%d unmatched=%d clock=%u tolerance_ns=%lld fullscreen=%s quit=%s video=%s pacing=%s\n",
           app.failure ? "FAILED" : "ok", app.frames, presented, stamped, estimated, unmatched, app.clock_id, (long long)tolerance,
           app.fullscreen_asked ? (app.fullscreen_entered ? "entered" : "missing") : "not-asked",
           quit_seen ? "seen" : "no", compositor ? compositor : "?", app.pacing == PACING_LINK ? "link" : "vsync");
    if (app.failure) fprintf(stderr, "SDL3Link: check failed: %s\n", app.failure);

    if (report) write_report(&app, report, latency, width, height, bounce_process_cpu());

    if (app.link) dl_link_destroy(app.link);
    if (app.source) dl_source_destroy(app.source); /* before SDL destroys the window and its display */
    if (app.presentation) wp_presentation_destroy(app.presentation);
    wl_event_queue_destroy(app.queue);
    SDL_DestroyTexture(app.texture);
    SDL_DestroyRenderer(app.renderer);
    SDL_DestroyWindow(app.window);
    SDL_Quit();
    return app.failure ? 1 : 0;
}
