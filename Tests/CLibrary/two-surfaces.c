/* Two links on two surfaces of one Wayland display, the program's own: two xdg toplevels with
 * wl_shm buffers, each followed by a dl_wayland_source, each frame drawn and committed in its
 * link's callback behind dl_source_will_commit. The program dispatches its own queue itself, as a
 * toolkit would, after dl_dispatch. Checks what holds at any speed: each link calls back with a
 * first delta of 0, timestamps that increase, targets that never go back and deltas equal to the
 * timestamps' differences, and presentation-feedback timestamps that equal the times the
 * compositor reported through the link's presentation callback; the two sources share the
 * display. Runs against WAYLAND_DISPLAY; exit 0 when every check holds. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>
#include "check.h"
#include "xdg-shell-client-protocol.h"

enum { frames_wanted = 40, side = 64, reported_capacity = 256 };

struct window {
    struct wl_surface *surface;
    struct xdg_surface *xdg_surface;
    struct xdg_toplevel *toplevel;
    struct wl_buffer *buffer;
    uint32_t *pixels;
    bool configured;
    dl_source *source;
    dl_link *link;
    int callbacks;
    dl_frame last;
    int64_t reported[reported_capacity]; /* presentation times the link's presentation callback got */
    int reported_count;
    int feedback_stamped;                /* callbacks stamped from presentation feedback */
    int64_t stamped[frames_wanted * 2];
    int stamped_count;
};

static struct wl_compositor *compositor;
static struct wl_shm *shm;
static struct xdg_wm_base *wm_base;

static void global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    (void)data;
    if (strcmp(interface, "wl_compositor") == 0) compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
    if (strcmp(interface, "wl_shm") == 0) shm = wl_registry_bind(registry, name, &wl_shm_interface, 1);
    if (strcmp(interface, "xdg_wm_base") == 0) wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, version < 2 ? version : 2);
}
static void global_remove(void *data, struct wl_registry *registry, uint32_t name) { (void)data, (void)registry, (void)name; }
static const struct wl_registry_listener registry_listener = {global, global_remove};

static void ping(void *data, struct xdg_wm_base *base, uint32_t serial) { (void)data; xdg_wm_base_pong(base, serial); }
static const struct xdg_wm_base_listener wm_base_listener = {ping};

static void surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial) {
    struct window *window = data;
    xdg_surface_ack_configure(xdg_surface, serial);
    window->configured = true;
}
static const struct xdg_surface_listener xdg_surface_listener = {surface_configure};
static void toplevel_configure(void *d, struct xdg_toplevel *t, int32_t w, int32_t h, struct wl_array *s) { (void)d, (void)t, (void)w, (void)h, (void)s; }
static void toplevel_close(void *d, struct xdg_toplevel *t) { (void)d, (void)t; }
static void toplevel_bounds(void *d, struct xdg_toplevel *t, int32_t w, int32_t h) { (void)d, (void)t, (void)w, (void)h; }
static void toplevel_capabilities(void *d, struct xdg_toplevel *t, struct wl_array *c) { (void)d, (void)t, (void)c; }
static const struct xdg_toplevel_listener toplevel_listener = {toplevel_configure, toplevel_close, toplevel_bounds, toplevel_capabilities};

static void make_buffer(struct window *window) {
    int fd = memfd_create("two-surfaces", MFD_CLOEXEC);
    CHECK(fd >= 0 && ftruncate(fd, side * side * 4) == 0);
    window->pixels = mmap(NULL, side * side * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(window->pixels != MAP_FAILED);
    struct wl_shm_pool *pool = wl_shm_create_pool(shm, fd, side * side * 4);
    window->buffer = wl_shm_pool_create_buffer(pool, 0, side, side, side * 4, WL_SHM_FORMAT_XRGB8888);
    wl_shm_pool_destroy(pool);
    close(fd);
}

static void draw(struct window *window, uint32_t color) {
    for (int i = 0; i < side * side; i++) window->pixels[i] = color;
    wl_surface_attach(window->surface, window->buffer, 0, 0);
    wl_surface_damage(window->surface, 0, 0, side, side);
}

static void on_presentation(dl_link *link, const dl_presentation *presentation, void *data) {
    (void)link;
    struct window *window = data;
    if (presentation->presented && window->reported_count < reported_capacity)
        window->reported[window->reported_count++] = presentation->presented_ns;
}

static void on_frame(dl_link *link, const dl_frame *frame, void *data) {
    struct window *window = data;
    CHECK(link == window->link);
    if (window->callbacks == 0) {
        CHECK(frame->delta_ns == 0);
    } else {
        CHECK(frame->timestamp_ns > window->last.timestamp_ns);
        CHECK(frame->delta_ns == frame->timestamp_ns - window->last.timestamp_ns);
        CHECK(frame->target_timestamp_ns >= window->last.target_timestamp_ns);
    }
    CHECK(frame->target_timestamp_ns > frame->timestamp_ns);
    if (frame->provenance == DL_PROVENANCE_PRESENTATION_FEEDBACK && window->stamped_count < frames_wanted * 2)
        window->stamped[window->stamped_count++] = frame->timestamp_ns;
    window->last = *frame;
    window->callbacks += 1;
    draw(window, window->callbacks % 2 ? 0xff3080ff : 0xffff8030);
    CHECK_RESULT(dl_source_will_commit(window->source), DL_OK);
    wl_surface_commit(window->surface);
}

int main(void) {
    alarm(120); /* a hang guard: a failure, never a pass */
    struct wl_display *display = wl_display_connect(NULL);
    CHECK(display != NULL);
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    CHECK(compositor && shm && wm_base);
    xdg_wm_base_add_listener(wm_base, &wm_base_listener, NULL);

    struct window windows[2] = {0};
    for (int w = 0; w < 2; w++) {
        struct window *window = &windows[w];
        window->surface = wl_compositor_create_surface(compositor);
        window->xdg_surface = xdg_wm_base_get_xdg_surface(wm_base, window->surface);
        xdg_surface_add_listener(window->xdg_surface, &xdg_surface_listener, window);
        window->toplevel = xdg_surface_get_toplevel(window->xdg_surface);
        xdg_toplevel_add_listener(window->toplevel, &toplevel_listener, window);
        xdg_toplevel_set_title(window->toplevel, w == 0 ? "two-surfaces A" : "two-surfaces B");
        wl_surface_commit(window->surface);
        make_buffer(window);
    }
    while (!windows[0].configured || !windows[1].configured) CHECK(wl_display_dispatch(display) >= 0);

    for (int w = 0; w < 2; w++) {
        struct window *window = &windows[w];
        CHECK_RESULT(dl_wayland_source_create(display, window->surface, NULL, &window->source), DL_OK);
        CHECK_RESULT(dl_link_create(window->source, on_frame, window, &window->link), DL_OK);
        CHECK_RESULT(dl_link_set_presentation_callback(window->link, on_presentation, window), DL_OK);
    }
    CHECK_RESULT(dl_wayland_source_create(display, NULL, NULL, &(dl_source *){NULL}), DL_ERROR_INVALID_ARGUMENT);

    while (windows[0].callbacks < frames_wanted || windows[1].callbacks < frames_wanted) {
        CHECK(dl_dispatch(-1) >= 0);
        /* The program's own events (configures, pings), as its toolkit would dispatch them. */
        CHECK(wl_display_dispatch_pending(display) >= 0);
    }
    for (int w = 0; w < 2; w++) {
        struct window *window = &windows[w];
        CHECK(window->stamped_count > 0);
        for (int s = 0; s < window->stamped_count; s++) {
            bool reported = false;
            for (int r = 0; r < window->reported_count; r++) reported |= window->reported[r] == window->stamped[s];
            CHECK(reported); /* a feedback timestamp is a time the compositor reported */
        }
        printf("two-surfaces: window %d: %d callbacks, %d stamped from feedback, %d presentations reported\n", w,
               window->callbacks, window->stamped_count, window->reported_count);
    }
    for (int w = 0; w < 2; w++) {
        CHECK_RESULT(dl_link_destroy(windows[w].link), DL_OK);
        CHECK_RESULT(dl_source_destroy(windows[w].source), DL_OK);
        xdg_toplevel_destroy(windows[w].toplevel);
        xdg_surface_destroy(windows[w].xdg_surface);
        wl_surface_destroy(windows[w].surface);
    }
    wl_display_roundtrip(display);
    wl_display_disconnect(display);
    printf("two-surfaces: all checks passed\n");
    return 0;
}
