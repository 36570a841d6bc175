/*
 * toolutil.h - what the command-line tools share: a monotonic clock and
 * a Ctrl-C flag that long runs poll so they can stop cleanly.
 */
#ifndef SFS_TOOLUTIL_H
#define SFS_TOOLUTIL_H

#include <signal.h>
#include <stdint.h>

/* Set to the signal number by SIGINT, SIGTERM or SIGHUP once tool_catch_signals() ran. */
extern volatile sig_atomic_t tool_interrupted;

/* Catch SIGINT, SIGTERM and SIGHUP into tool_interrupted (system calls restart). */
void tool_catch_signals(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t tool_now_ns(void);

#endif
