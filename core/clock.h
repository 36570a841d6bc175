/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the one clock of sectorfs's times: CLOCK_MONOTONIC in
 * nanoseconds (latencies, elapsed times, progress and benchmark timing),
 * which no change of the wall clock moves.
 */
#ifndef SFS_CLOCK_H
#define SFS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t sfs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
