// A like-for-like peer for `make bench`: the demo's bounce scene without its HUD, written the way
// a plain Wayland + EGL + GLES 2 client would write it. 60 rounded, antialiased, translucent
// squares (the renderer's signed-distance coverage, premultiplied blending) moving with velocity
// and gravity by delta time and recycled when their lifetime ends; every frame cleared and drawn
// whole, one draw call per view with its uniforms; paced as weston-simple-egl is (swap interval 1:
// Mesa waits for the frame callback inside eglSwapBuffers).
//
//   naive-views [--views N] [--size WxH] [--seconds S] [--latency FILE]    (stops on SIGINT/SIGTERM too)
//
// --latency FILE (for `make bench-latency`): asks wp_presentation for each frame's feedback and writes
// one line a frame, `INDEX BEGAN PRESENTED` in seconds on the compositor's presentation clock (BEGAN:
// when the frame's drawing began, the loop's top, after the previous swap returned; PRESENTED: `-`
// when the frame was discarded or its fate never came), after a first line `# clock ID`.
//
// Built by `make bench` with the system C compiler against the project's generated xdg-shell and
// presentation-time code.
#include <EGL/egl.h>
#include <GLES2/gl2.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>
#include <wayland-egl.h>

#include "presentation-time-client-protocol.h"
#include "xdg-shell-client-protocol.h"

static struct wl_compositor *compositor;
static struct xdg_wm_base *wm_base;
static struct wp_presentation *presentation;
static clockid_t presentation_clock = CLOCK_MONOTONIC;
static int configured, width = 250, height = 250;
static volatile sig_atomic_t stop;

static void on_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    if (strcmp(interface, "wl_compositor") == 0) compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
    if (strcmp(interface, "xdg_wm_base") == 0) wm_base = wl_registry_bind(registry, name, &xdg_wm_base_interface, 1);
    if (strcmp(interface, "wp_presentation") == 0) presentation = wl_registry_bind(registry, name, &wp_presentation_interface, 1);
}
static void on_global_remove(void *data, struct wl_registry *registry, uint32_t name) {}
static const struct wl_registry_listener registry_listener = {on_global, on_global_remove};
static void on_ping(void *data, struct xdg_wm_base *base, uint32_t serial) { xdg_wm_base_pong(base, serial); }
static const struct xdg_wm_base_listener wm_base_listener = {on_ping};
static void on_surface_configure(void *data, struct xdg_surface *surface, uint32_t serial) {
    xdg_surface_ack_configure(surface, serial);
    configured = 1;
}
static const struct xdg_surface_listener surface_listener = {on_surface_configure};
static void on_toplevel_configure(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h, struct wl_array *states) {}
static void on_toplevel_close(void *data, struct xdg_toplevel *toplevel) { stop = 1; }
static void on_toplevel_bounds(void *data, struct xdg_toplevel *toplevel, int32_t w, int32_t h) {}
static void on_toplevel_capabilities(void *data, struct xdg_toplevel *toplevel, struct wl_array *capabilities) {}
static const struct xdg_toplevel_listener toplevel_listener = {on_toplevel_configure, on_toplevel_close, on_toplevel_bounds,
                                                               on_toplevel_capabilities};
static void on_signal(int sig) { stop = 1; }

// --latency: when each frame's drawing began and when it was presented (-1: not known), seconds.
typedef struct { double began, presented; } FrameTimes;
static FrameTimes *frame_times;
static long frame_capacity, feedback_pending;
static void on_clock_id(void *data, struct wp_presentation *p, uint32_t clock) { presentation_clock = (clockid_t)clock; }
static const struct wp_presentation_listener presentation_listener = {on_clock_id};
static void on_sync_output(void *data, struct wp_presentation_feedback *f, struct wl_output *output) {}
static void on_presented(void *data, struct wp_presentation_feedback *f, uint32_t sec_hi, uint32_t sec_lo, uint32_t nsec,
                         uint32_t refresh, uint32_t seq_hi, uint32_t seq_lo, uint32_t flags) {
    frame_times[(intptr_t)data].presented = (double)(((uint64_t)sec_hi << 32) | sec_lo) + nsec / 1e9;
    wp_presentation_feedback_destroy(f);
    feedback_pending--;
}
static void on_discarded(void *data, struct wp_presentation_feedback *f) {
    wp_presentation_feedback_destroy(f);
    feedback_pending--;
}
static const struct wp_presentation_feedback_listener feedback_listener = {on_sync_output, on_presented, on_discarded};
static double now_on(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *vertex_source =
    "attribute vec2 a_corner;\n"
    "uniform vec2 u_viewport;\n"
    "uniform vec4 u_rect;\n"
    "varying vec2 v_local;\n"
    "void main() {\n"
    "  vec2 p = u_rect.xy + a_corner * u_rect.zw;\n"
    "  v_local = p - (u_rect.xy + u_rect.zw * 0.5);\n"
    "  gl_Position = vec4(p.x / u_viewport.x * 2.0 - 1.0, 1.0 - p.y / u_viewport.y * 2.0, 0.0, 1.0);\n"
    "}\n";
static const char *fragment_source =
    "precision highp float;\n"
    "uniform vec4 u_color;\n"
    "uniform vec3 u_shape;\n"
    "varying vec2 v_local;\n"
    "void main() {\n"
    "  vec2 q = abs(v_local) - u_shape.xy;\n"
    "  float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - u_shape.z;\n"
    "  float a = u_color.a * clamp(0.5 - d, 0.0, 1.0);\n"
    "  gl_FragColor = vec4(u_color.rgb * a, a);\n"
    "}\n";

static GLuint compile(GLenum kind, const char *source) {
    GLuint shader = glCreateShader(kind);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) { fprintf(stderr, "naive-views: shader compile failed\n"); exit(1); }
    return shader;
}

typedef struct { double x, y, vx, vy, age, lifetime, size; int color; } View;
static unsigned long long seed = 1;
static double uniform(double lo, double hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(seed >> 11) / (double)(1ULL << 53);
}
static void respawn(View *v) {
    double angle = uniform(0, 2 * M_PI), speed = uniform(40, 220);
    v->x = uniform(0, width); v->y = uniform(0, height);
    v->vx = speed * cos(angle); v->vy = speed * sin(angle);
    v->age = 0; v->lifetime = uniform(1.5, 4.0); v->size = uniform(10, 26);
    v->color = (int)uniform(0, 8);
}
static const float palette[8][3] = {{0.95f, 0.33f, 0.31f}, {0.98f, 0.66f, 0.23f}, {0.99f, 0.86f, 0.30f}, {0.45f, 0.82f, 0.42f},
                                    {0.30f, 0.74f, 0.90f}, {0.40f, 0.50f, 0.95f}, {0.70f, 0.45f, 0.92f}, {0.93f, 0.47f, 0.75f}};

int main(int argc, char **argv) {
    int count = 60;
    double seconds = 0;
    const char *latency_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--views") == 0) count = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--size") == 0) sscanf(argv[i + 1], "%dx%d", &width, &height);
        else if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--latency") == 0) latency_path = argv[i + 1];
        else { fprintf(stderr, "naive-views: unknown argument %s\n", argv[i]); return 2; }
    }
    if (count < 1 || width < 16 || height < 16) { fprintf(stderr, "naive-views: bad arguments\n"); return 2; }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    struct wl_display *display = wl_display_connect(NULL);
    if (!display) { fprintf(stderr, "naive-views: no Wayland display\n"); return 1; }
    struct wl_registry *registry = wl_display_get_registry(display);
    wl_registry_add_listener(registry, &registry_listener, NULL);
    wl_display_roundtrip(display);
    if (!compositor || !wm_base) { fprintf(stderr, "naive-views: wl_compositor or xdg_wm_base missing\n"); return 1; }
    if (latency_path) {
        if (!presentation) { fprintf(stderr, "naive-views: --latency: the compositor offers no wp_presentation\n"); return 1; }
        wp_presentation_add_listener(presentation, &presentation_listener, NULL);
        wl_display_roundtrip(display);  // clock_id
    }
    xdg_wm_base_add_listener(wm_base, &wm_base_listener, NULL);
    struct wl_surface *surface = wl_compositor_create_surface(compositor);
    struct xdg_surface *xsurface = xdg_wm_base_get_xdg_surface(wm_base, surface);
    xdg_surface_add_listener(xsurface, &surface_listener, NULL);
    struct xdg_toplevel *toplevel = xdg_surface_get_toplevel(xsurface);
    xdg_toplevel_add_listener(toplevel, &toplevel_listener, NULL);
    xdg_toplevel_set_title(toplevel, "naive-views");
    wl_surface_commit(surface);
    while (!configured && wl_display_dispatch(display) != -1) {}

    EGLDisplay egl = eglGetDisplay((EGLNativeDisplayType)display);
    if (!eglInitialize(egl, NULL, NULL)) { fprintf(stderr, "naive-views: eglInitialize failed\n"); return 1; }
    eglBindAPI(EGL_OPENGL_ES_API);
    EGLint attributes[] = {EGL_SURFACE_TYPE, EGL_WINDOW_BIT, EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
                           EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT, EGL_NONE};
    EGLConfig config;
    EGLint configs = 0;
    if (!eglChooseConfig(egl, attributes, &config, 1, &configs) || configs < 1) { fprintf(stderr, "naive-views: no EGL config\n"); return 1; }
    EGLint context_attributes[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
    EGLContext context = eglCreateContext(egl, config, EGL_NO_CONTEXT, context_attributes);
    struct wl_egl_window *native = wl_egl_window_create(surface, width, height);
    EGLSurface window = eglCreateWindowSurface(egl, config, (EGLNativeWindowType)native, NULL);
    if (!context || !window || !eglMakeCurrent(egl, window, window, context)) { fprintf(stderr, "naive-views: EGL set-up failed\n"); return 1; }

    GLuint program = glCreateProgram();
    glAttachShader(program, compile(GL_VERTEX_SHADER, vertex_source));
    glAttachShader(program, compile(GL_FRAGMENT_SHADER, fragment_source));
    glBindAttribLocation(program, 0, "a_corner");
    glLinkProgram(program);
    glUseProgram(program);
    GLint u_viewport = glGetUniformLocation(program, "u_viewport"), u_rect = glGetUniformLocation(program, "u_rect");
    GLint u_color = glGetUniformLocation(program, "u_color"), u_shape = glGetUniformLocation(program, "u_shape");
    static const float corners[] = {0, 0, 1, 0, 0, 1, 1, 1};
    GLuint buffer;
    glGenBuffers(1, &buffer);
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
    glEnable(GL_BLEND);
    glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glViewport(0, 0, width, height);
    glUniform2f(u_viewport, (float)width, (float)height);
    glClearColor(0.07f, 0.08f, 0.11f, 1);

    View *views = calloc((size_t)count, sizeof(View));
    for (int i = 0; i < count; i++) { respawn(&views[i]); views[i].age = uniform(0, views[i].lifetime * 0.9); }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double start = now.tv_sec + now.tv_nsec / 1e9, last = start;
    long frames = 0;
    while (!stop) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = now.tv_sec + now.tv_nsec / 1e9, dt = frames == 0 ? 0 : t - last;
        last = t;
        if (seconds > 0 && t - start >= seconds) break;
        if (latency_path) {
            if (frames == frame_capacity) {
                frame_capacity = frame_capacity ? 2 * frame_capacity : 1024;
                frame_times = realloc(frame_times, (size_t)frame_capacity * sizeof *frame_times);
                if (!frame_times) { fprintf(stderr, "naive-views: out of memory\n"); return 1; }
            }
            frame_times[frames] = (FrameTimes){now_on(presentation_clock), -1};
            // For the next commit of the surface: the one eglSwapBuffers makes below.
            struct wp_presentation_feedback *feedback = wp_presentation_feedback(presentation, surface);
            wp_presentation_feedback_add_listener(feedback, &feedback_listener, (void *)(intptr_t)frames);
            feedback_pending++;
        }
        glClear(GL_COLOR_BUFFER_BIT);
        for (int i = 0; i < count; i++) {
            View *v = &views[i];
            v->x += v->vx * dt; v->y += v->vy * dt + 45 * dt * dt;
            v->vy += 90 * dt; v->age += dt;
            if (v->age >= v->lifetime || v->x < -v->size || v->x > width + v->size || v->y < -v->size || v->y > height + v->size) respawn(v);
            double opacity = fmin(fmin(1, v->age / 0.2), fmax(0, fmin(1, (v->lifetime - v->age) / 0.4)));
            float s = (float)v->size, r = s / 4;
            glUniform4f(u_rect, (float)v->x - s / 2, (float)v->y - s / 2, s, s);
            glUniform4f(u_color, palette[v->color][0], palette[v->color][1], palette[v->color][2], (float)opacity);
            glUniform3f(u_shape, s / 2 - r, s / 2 - r, r);
            glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        }
        if (!eglSwapBuffers(egl, window)) { fprintf(stderr, "naive-views: eglSwapBuffers failed\n"); return 1; }
        frames++;
        if (wl_display_dispatch_pending(display) == -1) break;
    }
    fprintf(stderr, "naive-views: %ld frames\n", frames);
    if (latency_path) {
        // The last frames' feedback: up to 1 s more of the compositor's events.
        double until = now_on(CLOCK_MONOTONIC) + 1;
        while (feedback_pending > 0 && now_on(CLOCK_MONOTONIC) < until && wl_display_roundtrip(display) != -1) {
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        }
        FILE *file = fopen(latency_path, "w");
        if (!file) { fprintf(stderr, "naive-views: cannot write %s\n", latency_path); return 1; }
        fprintf(file, "# clock %d\n", (int)presentation_clock);
        for (long i = 0; i < frames; i++) {
            if (frame_times[i].presented < 0) fprintf(file, "%ld %.9f -\n", i, frame_times[i].began);
            else fprintf(file, "%ld %.9f %.9f\n", i, frame_times[i].began, frame_times[i].presented);
        }
        fclose(file);
        free(frame_times);
    }
    eglMakeCurrent(egl, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroySurface(egl, window);
    wl_egl_window_destroy(native);
    eglDestroyContext(egl, context);
    eglTerminate(egl);
    xdg_toplevel_destroy(toplevel);
    xdg_surface_destroy(xsurface);
    wl_surface_destroy(surface);
    wl_display_disconnect(display);
    free(views);
    return 0;
}
