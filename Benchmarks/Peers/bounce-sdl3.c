// The demo's bounce scene written the way SDL 3's documentation teaches it: an SDL_Renderer on its
// GLES 2 driver with vsync, one rounded-square texture drawn once per view, tinted with the view's
// colour and faded with its opacity (SDL batches the draws), moved by the time between frames.
// A peer for `make bench-peers` (Benchmarks/Scripts/peers-table), built and run inside the Debian
// forky root so that it draws with the same Mesa as the demo.
//
//   bounce-sdl3 [--views N] [--size WxH] [--seconds S]
//
// Prints one JSON line on stdout: frames (SDL_RenderPresent calls), presented (null: SDL does not
// say when a frame reaches the screen), the process's CPU time (getrusage: every thread, Mesa's
// included) in total and from the first frame on, wall time, and the CLOCK_MONOTONIC time at which
// each SDL_RenderPresent returned (with vsync it returns once per refresh the compositor gives it,
// so these are the nearest SDL has to presentation times).
#include <SDL3/SDL.h>
#include <SDL3/SDL_main.h>

#include "bounce-views.h"

// The texture is larger than any view (10–26 points), so that SDL scales it down; its corner radius
// is a quarter of its side, as the demo's views have.
#define TEXTURE_SIDE 64

static SDL_Texture *rounded_square(SDL_Renderer *renderer) {
    static uint8_t pixels[TEXTURE_SIDE * TEXTURE_SIDE * 4];
    const float half = TEXTURE_SIDE / 2.0f, radius = TEXTURE_SIDE / 4.0f;
    for (int y = 0; y < TEXTURE_SIDE; y++) {
        for (int x = 0; x < TEXTURE_SIDE; x++) {
            // Signed distance to the rounded square, one pixel of antialiasing as the demo's shader has.
            float qx = fabsf(x + 0.5f - half) - (half - radius), qy = fabsf(y + 0.5f - half) - (half - radius);
            float outside = hypotf(fmaxf(qx, 0), fmaxf(qy, 0)), inside = fminf(fmaxf(qx, qy), 0);
            float coverage = fminf(1, fmaxf(0, 0.5f - (outside + inside - radius)));
            uint8_t *p = &pixels[(y * TEXTURE_SIDE + x) * 4];
            p[0] = p[1] = p[2] = 255;  // white: the colour comes from the per-view tint
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

int main(int argc, char **argv) {
    BounceOptions o;
    if (!bounce_parse(argc, argv, "bounce-sdl3", &o)) return 2;
    double started = bounce_monotonic();
    SDL_SetHint(SDL_HINT_RENDER_DRIVER, "opengles2");
    if (!SDL_Init(SDL_INIT_VIDEO)) { fprintf(stderr, "bounce-sdl3: SDL_Init: %s\n", SDL_GetError()); return 1; }
    SDL_Window *window = SDL_CreateWindow("bounce-sdl3", o.width, o.height, 0);
    if (!window) { fprintf(stderr, "bounce-sdl3: SDL_CreateWindow: %s\n", SDL_GetError()); return 1; }
    SDL_Renderer *renderer = SDL_CreateRenderer(window, NULL);
    if (!renderer) { fprintf(stderr, "bounce-sdl3: SDL_CreateRenderer: %s\n", SDL_GetError()); return 1; }
    if (!SDL_SetRenderVSync(renderer, 1)) { fprintf(stderr, "bounce-sdl3: SDL_SetRenderVSync: %s\n", SDL_GetError()); return 1; }
    SDL_Texture *texture = rounded_square(renderer);
    if (!texture) { fprintf(stderr, "bounce-sdl3: texture: %s\n", SDL_GetError()); return 1; }

    BounceViews views;
    bounce_init(&views, o.views, o.width, o.height, 1);
    // Capacity for 1000 presents a second: enough for any vsync the run may see.
    size_t capacity = (size_t)(o.seconds * 1000) + 16, frames = 0;
    double *presents = malloc(capacity * sizeof(double));
    double first_cpu = -1, first_wall = 0, last = 0;
    int running = 1;
    while (running) {
        SDL_Event event;
        while (SDL_PollEvent(&event)) if (event.type == SDL_EVENT_QUIT) running = 0;
        double now = bounce_monotonic();
        if (first_cpu < 0) { first_cpu = bounce_process_cpu(); first_wall = now; }
        else if (now - first_wall >= o.seconds) break;
        bounce_update(&views, frames == 0 ? 0 : now - last);  // delta 0 on the first frame, as the demo's
        last = now;

        SDL_SetRenderDrawColorFloat(renderer, bounce_background.r, bounce_background.g, bounce_background.b, 1);
        SDL_RenderClear(renderer);
        for (int i = 0; i < views.count; i++) {
            float s = (float)views.size[i];
            const BounceColor c = bounce_palette[views.color[i]];
            SDL_SetTextureColorModFloat(texture, c.r, c.g, c.b);
            SDL_SetTextureAlphaModFloat(texture, (float)bounce_opacity(&views, i));
            SDL_FRect rect = {(float)views.x[i] - s / 2, (float)views.y[i] - s / 2, s, s};
            SDL_RenderTexture(renderer, texture, NULL, &rect);
        }
        if (!SDL_RenderPresent(renderer)) { fprintf(stderr, "bounce-sdl3: SDL_RenderPresent: %s\n", SDL_GetError()); return 1; }
        if (frames < capacity) presents[frames] = bounce_monotonic();
        frames++;
    }
    double cpu = bounce_process_cpu(), wall = bounce_monotonic() - started;
    printf("{\"peer\":\"sdl3\",\"renderer\":\"%s\",\"video_driver\":\"%s\",\"views\":%d,\"width\":%d,\"height\":%d,"
           "\"frames\":%zu,\"presented\":null,\"cpu_s\":%.6f,\"cpu_from_first_frame_s\":%.6f,\"wall_s\":%.6f,\"present_times\":[",
           SDL_GetRendererName(renderer), SDL_GetCurrentVideoDriver(), o.views, o.width, o.height, frames, cpu, cpu - first_cpu, wall);
    for (size_t i = 0; i < frames && i < capacity; i++) printf("%s%.6f", i ? "," : "", presents[i]);
    printf("]}\n");
    SDL_DestroyTexture(texture);
    SDL_DestroyRenderer(renderer);
    SDL_DestroyWindow(window);
    SDL_Quit();
    return 0;
}
