/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the one clock of sectorfs's times: CLOCK_MONOTONIC in
 * nanoseconds (latencies, elapsed times, progress and benchmark timing),
 * which no change of the wall clock moves, and the deadlines of waits
 * on it.
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

/* CLOCK_MONOTONIC ns nanoseconds from now, as the absolute time that waits on this clock
 * take (pthread_cond_timedwait on a condition set to CLOCK_MONOTONIC, clock_nanosleep with
 * TIMER_ABSTIME); tv_nsec is always below one second, whatever ns is. */
static inline struct timespec sfs_deadline_ts(uint64_t ns)
{
	uint64_t t = sfs_now_ns() + ns;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull) };
}

#endif
