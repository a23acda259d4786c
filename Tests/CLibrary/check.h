/* The C tests' one assertion: prints the failed expectation (and the library's message) and exits 1. */
#ifndef DL_TEST_CHECK_H
#define DL_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "displaylink.h"

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            fprintf(stderr, "%s:%d: expected %s (last message: %s)\n", __FILE__, __LINE__,         \
                    #condition, dl_error_message());                                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* CHECK_RESULT(call, DL_...): the call returns that code. */
#define CHECK_RESULT(call, expected)                                                               \
    do {                                                                                           \
        int result_ = (call);                                                                      \
        if (result_ != (expected)) {                                                               \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (message: %s)\n", __FILE__,         \
                    __LINE__, #call, dl_result_name(result_), dl_result_name(expected),            \
                    dl_error_message());                                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#endif
