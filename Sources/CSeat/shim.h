#include <libseat.h>
#include <stdarg.h>
#include <stdio.h>

/* libseat's log handler takes a va_list, which Swift cannot receive in a C function pointer:
   this formats each message and hands the text to a sink. */
typedef void (*cseat_log_sink)(int level, const char *message);

static inline cseat_log_sink *cseat_sink_slot(void) {
    static cseat_log_sink sink;
    return &sink;
}

static inline void cseat_log_trampoline(enum libseat_log_level level, const char *format, va_list args) {
    char buffer[512];
    vsnprintf(buffer, sizeof buffer, format, args);
    cseat_log_sink sink = *cseat_sink_slot();
    if (sink) sink((int)level, buffer);
}

static inline void cseat_set_log_sink(cseat_log_sink sink, enum libseat_log_level level) {
    *cseat_sink_slot() = sink;
    libseat_set_log_level(level);
    libseat_set_log_handler(sink ? cseat_log_trampoline : NULL);
}
