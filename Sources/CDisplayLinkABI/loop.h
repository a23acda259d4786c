/* The system interfaces the C library's event loop needs that Swift's Glibc module lacks. */
#ifndef CDISPLAYLINKABI_LOOP_H
#define CDISPLAYLINKABI_LOOP_H
#include <sys/epoll.h>
#endif
