/* A program that flips a DRM/KMS CRTC with its own libdrm calls (legacy or atomic) and feeds the
 * link a fed source (dl_fed_source_create): each submission (dl_source_will_submit) and each
 * presentation (dl_source_presented, from the page flip or vblank event). Like kmscube, minimal:
 * dumb buffers filled with a colour, no GL.
 *
 *   kms-fed [--api legacy|atomic] [--frames N] [--log FILE] [--timeout S] [DEVICE]
 *
 * DEVICE defaults to /dev/dri/card0. The first connected connector, its CRTC and its preferred
 * mode; the CRTC's state is saved and put back at the end. The fed source's period is the mode's
 * exact one (pixel clock over htotal·vtotal, rounded to the ns). The first frame sets the mode
 * (legacy: drmModeSetCrtc, then a vblank event, drmWaitVBlank(EVENT | RELATIVE, 1), whose time
 * is reported as its presentation; atomic: an ALLOW_MODESET | PAGE_FLIP_EVENT commit), every later
 * one is a page flip (drmModePageFlip with DRM_MODE_PAGE_FLIP_EVENT; atomic: NONBLOCK |
 * PAGE_FLIP_EVENT). A frame the library holds (DL_SUBMIT_AFTER_PENDING) is flipped when the pending
 * flip's event arrives.
 *
 * --log FILE writes JSON: the period; every callback's dl_frame values and where it ran (inside
 * dl_dispatch or inside dl_source_presented); every submission (time, action, when it was
 * flipped); every presentation reported (time, sequence). Each entry has "order", its place among
 * all of them, so that the events can be replayed in the order they happened
 * (Tests/DRMBackendTests/FedSourceKMSTests.swift does, through KMSFrameScheduler).
 *
 * Its own check (exit 1 on failure, printed): the first delta is 0; every callback of hardware
 * provenance has the time of the presentation being reported, and every other after the first is
 * an estimate run from dl_dispatch after a frame missed its vblank, whole periods after the last
 * one reported (the current vblank, predicted); sequence steps are missed frames + 1; targets never go back and are whole periods
 * after their timestamp (or held at the previous target). Errors from libdrm or the library end
 * it with a message; a hang guard (alarm, --timeout seconds, 60 by default) ends it too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include "displaylink.h"

#define BUFFERS 4

enum buffer_state { FREE, SCANOUT, FLIPPING, HELD };

struct buffer {
    uint32_t handle, pitch, fb;
    uint64_t size;
    uint32_t *pixels;
    enum buffer_state state;
};

struct callback_entry {
    int order;
    bool in_presented;
    int64_t now_ns;
    dl_frame frame;
};

struct submission_entry {
    int order, callback;
    int64_t time_ns, flipped_ns;
    int action;
};

struct presentation_entry {
    int order;
    int64_t time_ns;
    uint64_t sequence;
    bool vblank_event; /* the legacy mode set's vblank event, not a flip's */
};

static struct {
    int fd;
    bool atomic;
    const char *log_path;
    int frames;
    uint32_t connector_id, crtc_id, crtc_index;
    drmModeModeInfo mode;
    drmModeCrtc *saved;
    int64_t period_ns;
    struct buffer buffers[BUFFERS];
    /* Atomic: the primary plane, the mode blob and the property ids. */
    uint32_t plane_id, mode_blob;
    uint32_t prop_conn_crtc, prop_crtc_mode, prop_crtc_active, prop_fb, prop_plane_crtc;
    uint32_t prop_src[4], prop_dst[4];

    dl_source *source;
    dl_link *link;
    bool mode_set;
    int flipping, held;          /* buffer indices, -1: none */
    int flipping_submission;     /* the submission whose flip is pending */
    int held_submission;
    bool in_presented;
    int drawn;
    int order;
    struct callback_entry *callbacks;
    int callback_count;
    struct submission_entry *submissions;
    int submission_count;
    struct presentation_entry *presentations;
    int presentation_count;
} app = {.fd = -1, .flipping = -1, .held = -1, .flipping_submission = -1, .held_submission = -1};

static volatile sig_atomic_t alarm_fired;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void restore_crtc(void);
static void write_log(const char *failure);

/* Ends the program with a message: the CRTC restored, the log written as far as it goes. */
static void fail(const char *format, ...) {
    char message[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(message, sizeof message, format, arguments);
    va_end(arguments);
    fprintf(stderr, "kms-fed: %s\n", message);
    restore_crtc();
    write_log(message);
    exit(1);
}

static void on_alarm(int signal_number) {
    (void)signal_number;
    if (alarm_fired) {
        /* Stuck in a call the first alarm did not interrupt (libdrm retries on EINTR). */
        static const char text[] = "kms-fed: still stuck 5 s after the hang guard; exiting\n";
        (void)!write(2, text, sizeof text - 1);
        _exit(1);
    }
    alarm_fired = 1;
    alarm(5);
}

/* ---- The display ---------------------------------------------------------------------------- */

static int64_t exact_period(const drmModeModeInfo *m) {
    /* As Tests/DRMBackendTests/VKMSTests.swift computes it: htotal·vtotal·10⁶ / clock (kHz),
     * rounded to the ns (interlaced: twice the fields, double scan: twice the lines). */
    int64_t divisor = (int64_t)m->clock * ((m->flags & DRM_MODE_FLAG_INTERLACE) ? 2 : 1);
    int64_t scan = (int64_t)m->htotal * m->vtotal * 1000000 * ((m->flags & DRM_MODE_FLAG_DBLSCAN) ? 2 : 1);
    return (scan + divisor / 2) / divisor;
}

static uint32_t property_id(uint32_t object, uint32_t type, const char *name) {
    drmModeObjectProperties *properties = drmModeObjectGetProperties(app.fd, object, type);
    if (!properties) fail("drmModeObjectGetProperties(%u): %s", object, strerror(errno));
    uint32_t id = 0;
    for (uint32_t i = 0; i < properties->count_props && !id; i++) {
        drmModePropertyRes *property = drmModeGetProperty(app.fd, properties->props[i]);
        if (!property) continue;
        if (strcmp(property->name, name) == 0) id = property->prop_id;
        drmModeFreeProperty(property);
    }
    drmModeFreeObjectProperties(properties);
    if (!id) fail("object %u has no property %s", object, name);
    return id;
}

static uint64_t property_value(uint32_t object, uint32_t type, const char *name, bool *found) {
    drmModeObjectProperties *properties = drmModeObjectGetProperties(app.fd, object, type);
    *found = false;
    if (!properties) return 0;
    uint64_t value = 0;
    for (uint32_t i = 0; i < properties->count_props && !*found; i++) {
        drmModePropertyRes *property = drmModeGetProperty(app.fd, properties->props[i]);
        if (!property) continue;
        if (strcmp(property->name, name) == 0) {
            value = properties->prop_values[i];
            *found = true;
        }
        drmModeFreeProperty(property);
    }
    drmModeFreeObjectProperties(properties);
    return value;
}

static void open_display(const char *path) {
    app.fd = open(path, O_RDWR | O_CLOEXEC);
    if (app.fd < 0) fail("open %s: %s", path, strerror(errno));
    uint64_t cap = 0;
    if (drmGetCap(app.fd, DRM_CAP_TIMESTAMP_MONOTONIC, &cap) != 0 || cap != 1)
        fail("%s: event times are not on CLOCK_MONOTONIC (DRM_CAP_TIMESTAMP_MONOTONIC)", path);
    if (drmGetCap(app.fd, DRM_CAP_DUMB_BUFFER, &cap) != 0 || cap != 1) fail("%s: no dumb buffers", path);
    if (app.atomic && drmSetClientCap(app.fd, DRM_CLIENT_CAP_ATOMIC, 1) != 0)
        fail("%s: no atomic modesetting (DRM_CLIENT_CAP_ATOMIC: %s)", path, strerror(errno));

    drmModeRes *resources = drmModeGetResources(app.fd);
    if (!resources) fail("drmModeGetResources: %s", strerror(errno));
    drmModeConnector *connector = NULL;
    for (int i = 0; i < resources->count_connectors && !connector; i++) {
        drmModeConnector *c = drmModeGetConnector(app.fd, resources->connectors[i]);
        if (c && c->connection == DRM_MODE_CONNECTED && c->count_modes > 0) connector = c;
        else if (c) drmModeFreeConnector(c);
    }
    if (!connector) fail("%s: no connected connector with modes", path);
    app.connector_id = connector->connector_id;
    app.mode = connector->modes[0];
    for (int i = 0; i < connector->count_modes; i++) {
        if (connector->modes[i].type & DRM_MODE_TYPE_PREFERRED) {
            app.mode = connector->modes[i];
            break;
        }
    }
    /* Its CRTC: the one its encoder drives, else the first one an encoder of it can drive. */
    app.crtc_id = 0;
    drmModeEncoder *encoder = connector->encoder_id ? drmModeGetEncoder(app.fd, connector->encoder_id) : NULL;
    if (encoder && encoder->crtc_id) app.crtc_id = encoder->crtc_id;
    if (encoder) drmModeFreeEncoder(encoder);
    for (int e = 0; e < connector->count_encoders && !app.crtc_id; e++) {
        drmModeEncoder *candidate = drmModeGetEncoder(app.fd, connector->encoders[e]);
        if (!candidate) continue;
        for (int c = 0; c < resources->count_crtcs; c++) {
            if (candidate->possible_crtcs & (1u << c)) {
                app.crtc_id = resources->crtcs[c];
                break;
            }
        }
        drmModeFreeEncoder(candidate);
    }
    if (!app.crtc_id) fail("no CRTC for connector %u", app.connector_id);
    for (int c = 0; c < resources->count_crtcs; c++)
        if (resources->crtcs[c] == app.crtc_id) app.crtc_index = (uint32_t)c;
    drmModeFreeConnector(connector);
    drmModeFreeResources(resources);

    app.saved = drmModeGetCrtc(app.fd, app.crtc_id);
    if (!app.saved) fail("drmModeGetCrtc(%u): %s", app.crtc_id, strerror(errno));
    app.period_ns = exact_period(&app.mode);

    for (int i = 0; i < BUFFERS; i++) {
        struct buffer *b = &app.buffers[i];
        if (drmModeCreateDumbBuffer(app.fd, app.mode.hdisplay, app.mode.vdisplay, 32, 0, &b->handle, &b->pitch, &b->size) != 0)
            fail("drmModeCreateDumbBuffer: %s", strerror(errno));
        if (drmModeAddFB(app.fd, app.mode.hdisplay, app.mode.vdisplay, 24, 32, b->pitch, b->handle, &b->fb) != 0)
            fail("drmModeAddFB: %s", strerror(errno));
        uint64_t offset = 0;
        if (drmModeMapDumbBuffer(app.fd, b->handle, &offset) != 0) fail("drmModeMapDumbBuffer: %s", strerror(errno));
        void *pixels = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, app.fd, (off_t)offset);
        if (pixels == MAP_FAILED) fail("mmap of a dumb buffer: %s", strerror(errno));
        b->pixels = pixels;
        b->state = FREE;
    }

    if (app.atomic) {
        drmModePlaneRes *planes = drmModeGetPlaneResources(app.fd);
        if (!planes) fail("drmModeGetPlaneResources: %s", strerror(errno));
        for (uint32_t i = 0; i < planes->count_planes && !app.plane_id; i++) {
            drmModePlane *plane = drmModeGetPlane(app.fd, planes->planes[i]);
            if (!plane) continue;
            bool found = false;
            if ((plane->possible_crtcs & (1u << app.crtc_index)) &&
                property_value(plane->plane_id, DRM_MODE_OBJECT_PLANE, "type", &found) == DRM_PLANE_TYPE_PRIMARY && found)
                app.plane_id = plane->plane_id;
            drmModeFreePlane(plane);
        }
        drmModeFreePlaneResources(planes);
        if (!app.plane_id) fail("no primary plane for CRTC %u", app.crtc_id);
        app.prop_conn_crtc = property_id(app.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
        app.prop_crtc_mode = property_id(app.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID");
        app.prop_crtc_active = property_id(app.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE");
        app.prop_fb = property_id(app.plane_id, DRM_MODE_OBJECT_PLANE, "FB_ID");
        app.prop_plane_crtc = property_id(app.plane_id, DRM_MODE_OBJECT_PLANE, "CRTC_ID");
        const char *src[4] = {"SRC_X", "SRC_Y", "SRC_W", "SRC_H"}, *dst[4] = {"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"};
        for (int i = 0; i < 4; i++) {
            app.prop_src[i] = property_id(app.plane_id, DRM_MODE_OBJECT_PLANE, src[i]);
            app.prop_dst[i] = property_id(app.plane_id, DRM_MODE_OBJECT_PLANE, dst[i]);
        }
        if (drmModeCreatePropertyBlob(app.fd, &app.mode, sizeof app.mode, &app.mode_blob) != 0)
            fail("drmModeCreatePropertyBlob (the mode): %s", strerror(errno));
    }
}

static void restore_crtc(void) {
    if (app.fd < 0 || !app.saved || !app.mode_set) return;
    app.mode_set = false;
    int result;
    if (app.saved->mode_valid && app.saved->buffer_id)
        result = drmModeSetCrtc(app.fd, app.crtc_id, app.saved->buffer_id, app.saved->x, app.saved->y, &app.connector_id, 1,
                                &app.saved->mode);
    else
        result = drmModeSetCrtc(app.fd, app.crtc_id, 0, 0, 0, NULL, 0, NULL);
    if (result != 0) fprintf(stderr, "kms-fed: restoring CRTC %u failed: %s\n", app.crtc_id, strerror(errno));
}

/* Sets the mode with buffer b on screen (the first frame). */
static void set_mode(int b) {
    uint32_t fb = app.buffers[b].fb;
    if (!app.atomic) {
        if (drmModeSetCrtc(app.fd, app.crtc_id, fb, 0, 0, &app.connector_id, 1, &app.mode) != 0)
            fail("drmModeSetCrtc: %s", strerror(errno));
        app.mode_set = true;
        /* The set brings no event: the first vblank after it is the frame's presentation. */
        drmVBlank vblank = {.request = {.type = DRM_VBLANK_EVENT | DRM_VBLANK_RELATIVE, .sequence = 1, .signal = 0}};
        if (app.crtc_index == 1) vblank.request.type |= DRM_VBLANK_SECONDARY;
        else if (app.crtc_index > 1)
            vblank.request.type |= (app.crtc_index << DRM_VBLANK_HIGH_CRTC_SHIFT) & DRM_VBLANK_HIGH_CRTC_MASK;
        if (drmWaitVBlank(app.fd, &vblank) != 0) fail("drmWaitVBlank(EVENT | RELATIVE, 1): %s", strerror(errno));
        return;
    }
    drmModeAtomicReq *request = drmModeAtomicAlloc();
    if (!request) fail("drmModeAtomicAlloc failed");
    uint64_t w = app.mode.hdisplay, h = app.mode.vdisplay;
    drmModeAtomicAddProperty(request, app.connector_id, app.prop_conn_crtc, app.crtc_id);
    drmModeAtomicAddProperty(request, app.crtc_id, app.prop_crtc_mode, app.mode_blob);
    drmModeAtomicAddProperty(request, app.crtc_id, app.prop_crtc_active, 1);
    drmModeAtomicAddProperty(request, app.plane_id, app.prop_fb, fb);
    drmModeAtomicAddProperty(request, app.plane_id, app.prop_plane_crtc, app.crtc_id);
    uint64_t src[4] = {0, 0, w << 16, h << 16}, dst[4] = {0, 0, w, h};
    for (int i = 0; i < 4; i++) {
        drmModeAtomicAddProperty(request, app.plane_id, app.prop_src[i], src[i]);
        drmModeAtomicAddProperty(request, app.plane_id, app.prop_dst[i], dst[i]);
    }
    int result = drmModeAtomicCommit(app.fd, request, DRM_MODE_ATOMIC_ALLOW_MODESET | DRM_MODE_PAGE_FLIP_EVENT, NULL);
    drmModeAtomicFree(request);
    if (result != 0) fail("drmModeAtomicCommit(ALLOW_MODESET | PAGE_FLIP_EVENT): %s", strerror(errno));
    app.mode_set = true;
}

static void page_flip(int b) {
    uint32_t fb = app.buffers[b].fb;
    if (!app.atomic) {
        if (drmModePageFlip(app.fd, app.crtc_id, fb, DRM_MODE_PAGE_FLIP_EVENT, NULL) != 0)
            fail("drmModePageFlip: %s", strerror(errno));
        return;
    }
    drmModeAtomicReq *request = drmModeAtomicAlloc();
    if (!request) fail("drmModeAtomicAlloc failed");
    drmModeAtomicAddProperty(request, app.plane_id, app.prop_fb, fb);
    drmModeAtomicAddProperty(request, app.plane_id, app.prop_plane_crtc, app.crtc_id);
    int result = drmModeAtomicCommit(app.fd, request, DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT, NULL);
    drmModeAtomicFree(request);
    if (result != 0) fail("drmModeAtomicCommit(NONBLOCK | PAGE_FLIP_EVENT): %s", strerror(errno));
}

/* Puts buffer b on its way to the screen: the mode set for the first frame, a flip after. */
static void present(int b, int submission) {
    if (app.flipping >= 0) fail("a second flip while one is pending (buffer %d)", app.flipping);
    if (app.mode_set) page_flip(b);
    else set_mode(b);
    app.buffers[b].state = FLIPPING;
    app.flipping = b;
    app.flipping_submission = submission;
    app.submissions[submission].flipped_ns = now_ns();
}

/* ---- The link ------------------------------------------------------------------------------- */

static void on_frame(dl_link *link, const dl_frame *frame, void *data) {
    (void)data;
    int64_t began = now_ns();
    if (app.callback_count >= app.frames) fail("a callback after the link was invalidated");
    struct callback_entry *entry = &app.callbacks[app.callback_count++];
    entry->order = app.order++;
    entry->in_presented = app.in_presented;
    entry->now_ns = began;
    entry->frame = *frame;

    int b = -1;
    for (int i = 0; i < BUFFERS && b < 0; i++)
        if (app.buffers[i].state == FREE) b = i;
    if (b < 0) fail("no free buffer (a flip pending and a frame held already)");
    /* A colour per frame: a dark blue that brightens, the red channel counting frames. */
    uint32_t colour = 0xff000040u | ((uint32_t)(app.drawn * 7 % 256) << 16) | ((uint32_t)(app.drawn % 64) << 10);
    struct buffer *buffer = &app.buffers[b];
    size_t words = buffer->pitch / 4 * (size_t)app.mode.vdisplay;
    for (size_t i = 0; i < words; i++) buffer->pixels[i] = colour;

    int64_t submitted = now_ns();
    int action = dl_source_will_submit(app.source, submitted);
    if (action < 0) fail("dl_source_will_submit: %s: %s", dl_result_name(action), dl_error_message());
    int s = app.submission_count++;
    app.submissions[s] = (struct submission_entry){
        .order = app.order++, .callback = app.callback_count - 1, .time_ns = submitted, .flipped_ns = 0, .action = action};
    if (action == DL_SUBMIT_NOW) {
        present(b, s);
    } else if (action == DL_SUBMIT_AFTER_PENDING) {
        if (app.held >= 0) fail("a second frame held (DL_SUBMIT_AFTER_PENDING twice before a presentation)");
        if (app.flipping < 0) fail("DL_SUBMIT_AFTER_PENDING with no flip pending");
        buffer->state = HELD;
        app.held = b;
        app.held_submission = s;
    } else {
        fail("dl_source_will_submit returned %d", action);
    }
    if (++app.drawn == app.frames) {
        int result = dl_link_invalidate(link);
        if (result != DL_OK) fail("dl_link_invalidate: %s", dl_error_message());
    }
}

/* A flip completed (or, after the legacy mode set, the vblank event came). */
static void presented(unsigned int sequence, unsigned int sec, unsigned int usec, bool vblank_event) {
    int64_t time = (int64_t)sec * 1000000000 + (int64_t)usec * 1000;
    if (app.flipping < 0) fail("an event (sequence %u) with no flip pending", sequence);
    if (app.presentation_count >= app.frames) fail("more presentations than frames");
    app.presentations[app.presentation_count++] =
        (struct presentation_entry){.order = app.order++, .time_ns = time, .sequence = sequence, .vblank_event = vblank_event};
    for (int i = 0; i < BUFFERS; i++)
        if (app.buffers[i].state == SCANOUT) app.buffers[i].state = FREE;
    app.buffers[app.flipping].state = SCANOUT;
    app.flipping = -1;
    /* The held frame goes out at once, before the report runs the next callback: the order of the
     * library's own KMS backend (VblankPacing.flipCompleted queues the held flip, then the
     * callback runs), so that drawing the next frame does not delay it. */
    if (app.held >= 0) {
        int b = app.held, s = app.held_submission;
        app.held = -1;
        app.held_submission = -1;
        present(b, s);
    }
    app.in_presented = true;
    /* Returns the callbacks it ran (>= 0), or a negative dl_result. */
    int result = dl_source_presented(app.source, time, sequence);
    app.in_presented = false;
    if (result < 0) fail("dl_source_presented: %s: %s", dl_result_name(result), dl_error_message());
}

static void on_flip(int fd, unsigned int sequence, unsigned int sec, unsigned int usec, unsigned int crtc_id, void *data) {
    (void)fd, (void)data;
    if (crtc_id != app.crtc_id) fail("a flip event for CRTC %u (ours: %u)", crtc_id, app.crtc_id);
    presented(sequence, sec, usec, false);
}

static void on_vblank(int fd, unsigned int sequence, unsigned int sec, unsigned int usec, void *data) {
    (void)fd, (void)data;
    presented(sequence, sec, usec, true);
}

/* ---- The log and the check ------------------------------------------------------------------ */

static void write_log(const char *failure) {
    if (!app.log_path || !app.callbacks) return;
    FILE *out = fopen(app.log_path, "w");
    if (!out) {
        fprintf(stderr, "kms-fed: cannot write %s: %s\n", app.log_path, strerror(errno));
        return;
    }
    fprintf(out, "{\n  \"api\": \"%s\",\n  \"period_ns\": %" PRId64 ",\n  \"frames\": %d,\n", app.atomic ? "atomic" : "legacy",
            app.period_ns, app.frames);
    fprintf(out, "  \"mode\": {\"name\": \"%s\", \"clock\": %u, \"htotal\": %u, \"vtotal\": %u, \"flags\": %u},\n", app.mode.name,
            app.mode.clock, app.mode.htotal, app.mode.vtotal, app.mode.flags);
    fprintf(out, "  \"failure\": ");
    if (failure) {
        fputc('"', out);
        for (const char *c = failure; *c; c++) fputc(*c == '"' || *c == '\\' ? '\'' : *c, out);
        fputs("\",\n", out);
    } else {
        fputs("null,\n", out);
    }
    fputs("  \"callbacks\": [\n", out);
    for (int i = 0; i < app.callback_count; i++) {
        const struct callback_entry *c = &app.callbacks[i];
        const dl_frame *f = &c->frame;
        fprintf(out,
                "    {\"order\": %d, \"context\": \"%s\", \"now_ns\": %" PRId64 ", \"timestamp_ns\": %" PRId64
                ", \"target_ns\": %" PRId64 ", \"deadline_ns\": ",
                c->order, c->in_presented ? "presented" : "dispatch", c->now_ns, f->timestamp_ns, f->target_timestamp_ns);
        if (f->deadline_provenance == DL_DEADLINE_NONE) fputs("null", out);
        else fprintf(out, "%" PRId64, f->deadline_ns);
        fprintf(out,
                ", \"deadline_provenance\": %d, \"sequence\": %" PRIu64 ", \"provenance\": %d, \"delta_ns\": %" PRId64
                ", \"missed\": %d, \"refresh_index\": %" PRIu64 ", \"duration_ns\": %" PRId64 ", \"render_estimate_ns\": %" PRId64
                "}%s\n",
                f->deadline_provenance, f->sequence, f->provenance, f->delta_ns, f->missed_frames, f->refresh_index,
                f->duration_ns, f->render_estimate_ns, i + 1 < app.callback_count ? "," : "");
    }
    fputs("  ],\n  \"submissions\": [\n", out);
    for (int i = 0; i < app.submission_count; i++) {
        const struct submission_entry *s = &app.submissions[i];
        fprintf(out,
                "    {\"order\": %d, \"callback\": %d, \"time_ns\": %" PRId64 ", \"action\": \"%s\", \"flipped_ns\": %" PRId64 "}%s\n",
                s->order, s->callback, s->time_ns, s->action == DL_SUBMIT_NOW ? "now" : "after_pending", s->flipped_ns,
                i + 1 < app.submission_count ? "," : "");
    }
    fputs("  ],\n  \"presentations\": [\n", out);
    for (int i = 0; i < app.presentation_count; i++) {
        const struct presentation_entry *p = &app.presentations[i];
        fprintf(out, "    {\"order\": %d, \"time_ns\": %" PRId64 ", \"sequence\": %" PRIu64 ", \"event\": \"%s\"}%s\n", p->order,
                p->time_ns, p->sequence, p->vblank_event ? "vblank" : "flip", i + 1 < app.presentation_count ? "," : "");
    }
    fputs("  ]\n}\n", out);
    fclose(out);
}

/* The program's own check of what the link gave; returns the number of callbacks whose time was
 * the predicted current vblank after a late frame. */
static int check(void) {
    const int64_t p = app.period_ns;
    if (app.callback_count != app.frames) fail("check: %d callbacks for %d frames", app.callback_count, app.frames);
    if (app.callbacks[0].frame.delta_ns != 0) fail("check: first delta %" PRId64 " ns, not 0", app.callbacks[0].frame.delta_ns);
    int predicted = 0;
    for (int i = 0; i < app.callback_count; i++) {
        const struct callback_entry *c = &app.callbacks[i];
        const dl_frame *f = &c->frame;
        if (f->duration_ns != p) fail("check: callback %d: duration %" PRId64 " ns, the period is %" PRId64, i, f->duration_ns, p);
        /* The last presentation reported before this callback. */
        const struct presentation_entry *last = NULL;
        for (int k = 0; k < app.presentation_count && app.presentations[k].order < c->order; k++) last = &app.presentations[k];
        if (f->provenance == DL_PROVENANCE_HARDWARE_VBLANK) {
            if (!last) fail("check: callback %d: hardware provenance before any presentation", i);
            if (!c->in_presented) fail("check: callback %d: hardware provenance outside a reported presentation", i);
            if (f->timestamp_ns != last->time_ns)
                fail("check: callback %d: timestamp %" PRId64 " is not the reported flip time %" PRId64, i, f->timestamp_ns,
                     last->time_ns);
        } else if (f->provenance == DL_PROVENANCE_ESTIMATE && i > 0 && !c->in_presented && last) {
            /* Run from dl_dispatch right after a frame missed its vblank: the vblank after that
             * frame's own, predicted from the last one reported. */
            int64_t since = f->timestamp_ns - last->time_ns;
            if (since <= 0 || since % p != 0 || f->sequence != last->sequence + (uint64_t)(since / p))
                fail("check: callback %d: timestamp %" PRId64 " (sequence %" PRIu64
                     ") run from dl_dispatch is not whole periods after the last reported flip %" PRId64,
                     i, f->timestamp_ns, f->sequence, last->time_ns);
            predicted++;
        } else if (i > 0) {
            fail("check: callback %d: provenance %d (not the hardware vblank)", i, f->provenance);
        }
        int64_t ahead = f->target_timestamp_ns - f->timestamp_ns;
        bool held = i > 0 && f->target_timestamp_ns == app.callbacks[i - 1].frame.target_timestamp_ns;
        if (ahead <= 0 || (ahead % p != 0 && !held))
            fail("check: callback %d: target − timestamp = %" PRId64 " ns, not whole periods", i, ahead);
        if (i == 0) continue;
        const dl_frame *a = &app.callbacks[i - 1].frame;
        if (f->target_timestamp_ns < a->target_timestamp_ns) fail("check: callback %d: the target went back", i);
        if (i == 1) {
            if (f->missed_frames != 0) fail("check: callback 1 (the first vblank after the mode set): %d missed", f->missed_frames);
            continue;
        }
        if (f->sequence <= a->sequence || f->sequence - a->sequence != (uint64_t)f->missed_frames + 1)
            fail("check: callback %d: sequence %" PRIu64 " → %" PRIu64 " with %d missed", i, a->sequence, f->sequence,
                 f->missed_frames);
        if (f->delta_ns != f->timestamp_ns - a->timestamp_ns) fail("check: callback %d: delta is not the timestamps' difference", i);
    }
    return predicted;
}

/* ---- Main ----------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    const char *device = "/dev/dri/card0";
    int timeout = 60;
    app.frames = 240;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--api") == 0 && i + 1 < argc) {
            const char *api = argv[++i];
            if (strcmp(api, "atomic") == 0) app.atomic = true;
            else if (strcmp(api, "legacy") == 0) app.atomic = false;
            else fail("--api %s: legacy or atomic", api);
        } else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
            app.frames = atoi(argv[++i]);
            if (app.frames < 2) fail("--frames: at least 2");
        } else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
            app.log_path = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = atoi(argv[++i]);
        } else if (argv[i][0] != '-') {
            device = argv[i];
        } else {
            fprintf(stderr, "usage: %s [--api legacy|atomic] [--frames N] [--log FILE] [--timeout S] [DEVICE]\n", argv[0]);
            return 2;
        }
    }
    app.callbacks = calloc((size_t)app.frames, sizeof *app.callbacks);
    app.submissions = calloc((size_t)app.frames, sizeof *app.submissions);
    app.presentations = calloc((size_t)app.frames, sizeof *app.presentations);
    if (!app.callbacks || !app.submissions || !app.presentations) fail("out of memory");
    struct sigaction action = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &action, NULL);
    alarm((unsigned)timeout);

    open_display(device);
    int result = dl_fed_source_create(app.period_ns, DL_LATENCY_THROUGHPUT, &app.source);
    if (result != DL_OK) fail("dl_fed_source_create: %s", dl_error_message());
    result = dl_link_create(app.source, on_frame, NULL, &app.link);
    if (result != DL_OK) fail("dl_link_create: %s", dl_error_message());
    int link_fd = dl_get_fd();
    if (link_fd < 0) fail("dl_get_fd: %s", dl_error_message());

    drmEventContext events = {.version = 3, .vblank_handler = on_vblank, .page_flip_handler2 = on_flip};
    while (app.drawn < app.frames || app.flipping >= 0 || app.held >= 0) {
        if (alarm_fired)
            fail("hang guard: %d s and %d of %d frames drawn, %d presentations (a flip pending: %s)", timeout, app.drawn,
                 app.frames, app.presentation_count, app.flipping >= 0 ? "yes" : "no");
        struct pollfd descriptors[2] = {{.fd = app.fd, .events = POLLIN}, {.fd = link_fd, .events = POLLIN}};
        int ready = poll(descriptors, 2, 1000);
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("poll: %s", strerror(errno));
        }
        if (descriptors[0].revents & POLLIN) {
            if (drmHandleEvent(app.fd, &events) != 0) fail("drmHandleEvent: %s", strerror(errno));
        }
        result = dl_dispatch(0);
        if (result < 0) fail("dl_dispatch: %s: %s", dl_result_name(result), dl_error_message());
    }
    alarm(0);
    restore_crtc();

    int predicted = check();
    int held = 0, missed = 0;
    for (int i = 0; i < app.submission_count; i++) held += app.submissions[i].action == DL_SUBMIT_AFTER_PENDING;
    for (int i = 0; i < app.callback_count; i++) missed += app.callbacks[i].frame.missed_frames;
    write_log(NULL);
    printf("kms-fed: api=%s mode=%s period_ns=%" PRId64 " frames=%d presentations=%d missed=%d held=%d predicted=%d check=ok\n",
           app.atomic ? "atomic" : "legacy", app.mode.name, app.period_ns, app.callback_count, app.presentation_count, missed,
           held, predicted);

    dl_link_destroy(app.link);
    dl_source_destroy(app.source);
    for (int i = 0; i < BUFFERS; i++) {
        munmap(app.buffers[i].pixels, app.buffers[i].size);
        drmModeRmFB(app.fd, app.buffers[i].fb);
        drmModeDestroyDumbBuffer(app.fd, app.buffers[i].handle);
    }
    if (app.mode_blob) drmModeDestroyPropertyBlob(app.fd, app.mode_blob);
    drmModeFreeCrtc(app.saved);
    close(app.fd);
    return 0;
}
