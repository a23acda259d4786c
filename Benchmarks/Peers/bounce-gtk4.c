// The demo's bounce scene written the way GTK 4's documentation teaches it: a GtkWidget subclass
// whose snapshot appends each view as a colour node inside a rounded clip (the GskRoundedRect
// gives the demo's corner radius, a quarter of the side), animated from the frame clock with
// gtk_widget_add_tick_callback and moved by the frame clock's frame time. A peer for
// `make bench-peers` (Benchmarks/Scripts/peers-table), built and run inside the Debian forky root
// so that it draws with the same Mesa as the demo.
//
//   bounce-gtk4 [--views N] [--size WxH] [--seconds S]
//
// Prints on stdout one JSON line per frame whose GdkFrameTimings are complete: the frame counter,
// frame time, predicted and actual presentation time and refresh interval, in microseconds of
// g_get_monotonic_time (CLOCK_MONOTONIC); 0 is GTK's "not known". Then one summary line: frames
// (tick callbacks), presented (frames with a presentation time), the process's CPU time
// (getrusage: every thread, Mesa's and GTK's included) in total and from the first frame on, wall
// time, the GSK renderer in use, and CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW in microseconds: GDK
// stores wp_presentation's timestamps as they come, whatever clock the compositor names, and
// weston presents on CLOCK_MONOTONIC_RAW, so the table converts them with this offset.
#include <gtk/gtk.h>

#include "bounce-views.h"

#define BOUNCE_TYPE_WIDGET (bounce_widget_get_type())
G_DECLARE_FINAL_TYPE(BounceWidget, bounce_widget, BOUNCE, WIDGET, GtkWidget)

struct _BounceWidget {
    GtkWidget parent;
    BounceViews views;
};
G_DEFINE_TYPE(BounceWidget, bounce_widget, GTK_TYPE_WIDGET)

static void bounce_widget_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
    BounceWidget *self = BOUNCE_WIDGET(widget);
    const GdkRGBA background = {bounce_background.r, bounce_background.g, bounce_background.b, 1};
    gtk_snapshot_append_color(snapshot, &background,
                              &GRAPHENE_RECT_INIT(0, 0, gtk_widget_get_width(widget), gtk_widget_get_height(widget)));
    const BounceViews *v = &self->views;
    for (int i = 0; i < v->count; i++) {
        float s = (float)v->size[i];
        graphene_rect_t rect = GRAPHENE_RECT_INIT((float)v->x[i] - s / 2, (float)v->y[i] - s / 2, s, s);
        GskRoundedRect rounded;
        gsk_rounded_rect_init_from_rect(&rounded, &rect, s / 4);
        const BounceColor c = bounce_palette[v->color[i]];
        const GdkRGBA color = {c.r, c.g, c.b, (float)bounce_opacity(v, i)};
        gtk_snapshot_push_rounded_clip(snapshot, &rounded);
        gtk_snapshot_append_color(snapshot, &color, &rect);
        gtk_snapshot_pop(snapshot);
    }
}
static void bounce_widget_class_init(BounceWidgetClass *klass) { GTK_WIDGET_CLASS(klass)->snapshot = bounce_widget_snapshot; }
static void bounce_widget_init(BounceWidget *self) {}

static struct {
    double seconds;
    gint64 first_frame_time, last_frame_time, next_report;
    double first_cpu;
    long frames, presented;
    gboolean done;
} run = {.first_cpu = -1, .next_report = -1};

// Prints the timings of the frames before `counter` that GTK has completed (the presentation
// feedback of frame k arrives a frame or more after frame k is drawn), in order; a frame that has
// left the clock's history is skipped.
static void report_timings(GdkFrameClock *clock, gint64 counter) {
    if (run.next_report < 0) run.next_report = counter;
    gint64 history = gdk_frame_clock_get_history_start(clock);
    if (run.next_report < history) run.next_report = history;
    for (; run.next_report < counter; run.next_report++) {
        GdkFrameTimings *t = gdk_frame_clock_get_timings(clock, run.next_report);
        if (!t) continue;
        if (!gdk_frame_timings_get_complete(t)) break;
        gint64 presented = gdk_frame_timings_get_presentation_time(t);
        if (presented) run.presented++;
        printf("{\"frame\":%" G_GINT64_FORMAT ",\"frame_time\":%" G_GINT64_FORMAT ",\"predicted\":%" G_GINT64_FORMAT
               ",\"presented\":%" G_GINT64_FORMAT ",\"refresh_interval\":%" G_GINT64_FORMAT "}\n",
               run.next_report, gdk_frame_timings_get_frame_time(t), gdk_frame_timings_get_predicted_presentation_time(t),
               presented, gdk_frame_timings_get_refresh_interval(t));
    }
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
    BounceWidget *self = BOUNCE_WIDGET(widget);
    gint64 frame_time = gdk_frame_clock_get_frame_time(clock);
    report_timings(clock, gdk_frame_clock_get_frame_counter(clock));
    if (run.frames == 0) {
        run.first_frame_time = run.last_frame_time = frame_time;
        run.first_cpu = bounce_process_cpu();
    } else if ((frame_time - run.first_frame_time) / 1e6 >= run.seconds) {
        run.done = TRUE;
        return G_SOURCE_REMOVE;
    }
    bounce_update(&self->views, (frame_time - run.last_frame_time) / 1e6);  // 0 on the first frame
    run.last_frame_time = frame_time;
    run.frames++;
    gtk_widget_queue_draw(widget);
    return G_SOURCE_CONTINUE;
}

static void on_close(GtkWindow *window, gpointer data) { run.done = TRUE; }

int main(int argc, char **argv) {
    BounceOptions o;
    if (!bounce_parse(argc, argv, "bounce-gtk4", &o)) return 2;
    double started = bounce_monotonic();
    run.seconds = o.seconds;
    gtk_init();
    GtkWidget *window = gtk_window_new();
    // Undecorated: the window's content is exactly WxH, as the demo's (no client-side title bar).
    gtk_window_set_decorated(GTK_WINDOW(window), FALSE);
    gtk_window_set_default_size(GTK_WINDOW(window), o.width, o.height);
    gtk_window_set_title(GTK_WINDOW(window), "bounce-gtk4");
    BounceWidget *widget = g_object_new(BOUNCE_TYPE_WIDGET, NULL);
    bounce_init(&widget->views, o.views, o.width, o.height, 1);
    gtk_widget_set_hexpand(GTK_WIDGET(widget), TRUE);
    gtk_widget_set_vexpand(GTK_WIDGET(widget), TRUE);
    gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(widget));
    gtk_widget_add_tick_callback(GTK_WIDGET(widget), tick, NULL, NULL);
    g_signal_connect(window, "close-request", G_CALLBACK(on_close), NULL);
    gtk_window_present(GTK_WINDOW(window));
    while (!run.done) g_main_context_iteration(NULL, TRUE);

    GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(window));
    const char *renderer_name = renderer ? G_OBJECT_TYPE_NAME(renderer) : "none";
    double cpu = bounce_process_cpu(), wall = bounce_monotonic() - started;
    struct timespec mono, raw;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
    long long mono_minus_raw = ((long long)mono.tv_sec - raw.tv_sec) * 1000000LL + (mono.tv_nsec - raw.tv_nsec) / 1000;
    printf("{\"peer\":\"gtk4\",\"monotonic_minus_raw_us\":%lld,\"renderer\":\"%s\",\"views\":%d,\"width\":%d,\"height\":%d,\"frames\":%ld,\"presented\":%ld,"
           "\"cpu_s\":%.6f,\"cpu_from_first_frame_s\":%.6f,\"wall_s\":%.6f}\n",
           mono_minus_raw, renderer_name, o.views, o.width, o.height, run.frames, run.presented, cpu, run.first_cpu < 0 ? 0 : cpu - run.first_cpu, wall);
    fflush(stdout);
    gtk_window_destroy(GTK_WINDOW(window));
    return 0;
}
