#include <libseat.h>
#include <stdarg.h>
#include <stdio.h>

/* libseat's log handler takes a va_list, which Swift cannot receive in a C function pointer:
   this formats each message and hands the text to a sink. */
typedef void (*cseat_log_sink)(int level, const char *message);

static cseat_log_sink cseat_current_sink;

static void cseat_log_trampoline(enum libseat_log_level level, const char *format, va_list args) {
    char buffer[512];
    vsnprintf(buffer, sizeof buffer, format, args);
    if (cseat_current_sink) cseat_current_sink((int)level, buffer);
}

static inline void cseat_set_log_sink(cseat_log_sink sink, enum libseat_log_level level) {
    cseat_current_sink = sink;
    libseat_set_log_level(level);
    libseat_set_log_handler(sink ? cseat_log_trampoline : NULL);
}
