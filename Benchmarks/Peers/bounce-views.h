// The demo's bounce scene as plain C, shared by the GTK 4 and SDL 3 peers (bounce-gtk4.c,
// bounce-sdl3.c): a port of Sources/Motion/MovingViews.swift and the palette of
// Sources/Scenes/Scene.swift, so that every client moves the same views with the same seed.
// SplitMix64 and the order of the draws in respawn() match the Swift code, so with seed 1 the first
// frame places the views where the demo places them; what each frame shows after that depends on
// each client's frame times.
#ifndef BOUNCE_VIEWS_H
#define BOUNCE_VIEWS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct { float r, g, b; } BounceColor;

// Sources/Scenes/Scene.swift, Palette.colors; BounceScene.background.
static const BounceColor bounce_palette[8] = {
    {0.96f, 0.36f, 0.27f}, {0.98f, 0.69f, 0.20f}, {0.55f, 0.80f, 0.30f}, {0.20f, 0.72f, 0.66f},
    {0.25f, 0.55f, 0.95f}, {0.56f, 0.40f, 0.90f}, {0.90f, 0.35f, 0.70f}, {0.95f, 0.95f, 0.95f},
};
static const BounceColor bounce_background = {0.07f, 0.08f, 0.11f};

// Structure of arrays, as MovingViews keeps them.
typedef struct {
    int count;
    double width, height;
    double *x, *y, *vx, *vy, *ax, *ay, *age, *lifetime, *size;
    uint32_t *color;
    uint64_t state;  // SplitMix64
} BounceViews;

static uint64_t bounce_next(BounceViews *v) {
    v->state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = v->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static double bounce_uniform(BounceViews *v, double lo, double hi) {
    double unit = (double)(bounce_next(v) >> 11) / (double)(1ULL << 53);
    return lo + (hi - lo) * unit;
}

// MovingViews.respawn: lifetime 1.5–4 s, speed 40–220 points/s, size 10–26 points, gravity 90.
static void bounce_respawn(BounceViews *v, int i) {
    v->x[i] = bounce_uniform(v, 0, v->width > 1 ? v->width : 1);
    v->y[i] = bounce_uniform(v, 0, v->height > 1 ? v->height : 1);
    double angle = bounce_uniform(v, 0, 2 * M_PI);
    double speed = bounce_uniform(v, 40, 220);
    v->vx[i] = speed * cos(angle);
    v->vy[i] = speed * sin(angle);
    v->ax[i] = 0;
    v->ay[i] = 90;
    v->age[i] = 0;
    v->lifetime[i] = bounce_uniform(v, 1.5, 4.0);
    v->size[i] = bounce_uniform(v, 10, 26);
    v->color[i] = (uint32_t)(bounce_next(v) % 8);
}

static void bounce_init(BounceViews *v, int count, double width, double height, uint64_t seed) {
    memset(v, 0, sizeof *v);
    v->count = count; v->width = width; v->height = height; v->state = seed;
    double **arrays[] = {&v->x, &v->y, &v->vx, &v->vy, &v->ax, &v->ay, &v->age, &v->lifetime, &v->size};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) *arrays[k] = calloc((size_t)count, sizeof(double));
    v->color = calloc((size_t)count, sizeof(uint32_t));
    for (int i = 0; i < count; i++) {
        bounce_respawn(v, i);
        v->age[i] = bounce_uniform(v, 0, v->lifetime[i] * 0.9);  // stagger the first generation
    }
}

// MovingViews.update: the exact constant-acceleration step, recycling at the end of a lifetime or
// outside the bounds.
static void bounce_update(BounceViews *v, double dt) {
    double half_dt2 = 0.5 * dt * dt;
    for (int i = 0; i < v->count; i++) {
        v->x[i] += v->vx[i] * dt + v->ax[i] * half_dt2;
        v->y[i] += v->vy[i] * dt + v->ay[i] * half_dt2;
        v->vx[i] += v->ax[i] * dt;
        v->vy[i] += v->ay[i] * dt;
        v->age[i] += dt;
        double m = v->size[i];
        if (v->age[i] >= v->lifetime[i] || v->x[i] < -m || v->x[i] > v->width + m || v->y[i] < -m || v->y[i] > v->height + m)
            bounce_respawn(v, i);
    }
}

// MovingViews.opacity: fades in over the first 0.2 s, out over the last 0.4 s.
static double bounce_opacity(const BounceViews *v, int i) {
    double in = fmin(1, v->age[i] / 0.2);
    double out = fmin(1, fmax(0, (v->lifetime[i] - v->age[i]) / 0.4));
    return fmin(in, out);
}

// Options every peer takes: --views N --size WxH --seconds S.
typedef struct { int views, width, height; double seconds; } BounceOptions;
static int bounce_parse(int argc, char **argv, const char *name, BounceOptions *o) {
    o->views = 60; o->width = 250; o->height = 250; o->seconds = 10;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--views") == 0 && value) o->views = atoi(value);
        else if (strcmp(argv[i], "--size") == 0 && value) { if (sscanf(value, "%dx%d", &o->width, &o->height) != 2) o->width = 0; }
        else if (strcmp(argv[i], "--seconds") == 0 && value) o->seconds = atof(value);
        else { fprintf(stderr, "%s: usage: %s [--views N] [--size WxH] [--seconds S]\n", name, name); return 0; }
        i++;
    }
    if (o->views < 1 || o->width < 16 || o->height < 16 || o->seconds <= 0) { fprintf(stderr, "%s: bad arguments\n", name); return 0; }
    return 1;
}

static double bounce_monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
// User + system time of the whole process (every thread: Mesa's and the toolkit's too).
static double bounce_process_cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

#endif
