/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the one clock of sectorfs's times: CLOCK_MONOTONIC in
 * nanoseconds (latencies, elapsed times, progress and benchmark timing,
 * the device model's completion times), which no change of the wall clock
 * moves, the deadlines of waits on it and a sleep until a time on it.
 * What needs another clock in its tests takes one injected (the model's
 * struct sfs_model_clock), whose default is this one.
 */
#ifndef SFS_CLOCK_H
#define SFS_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds. */
static inline uint64_t sfs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The time t (nanoseconds on this clock) as a timespec; tv_nsec always below one second. */
static inline struct timespec sfs_ns_ts(uint64_t t)
{
	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull) };
}

/* CLOCK_MONOTONIC ns nanoseconds from now, as the absolute time that waits on this clock
 * take (pthread_cond_timedwait on a condition set to CLOCK_MONOTONIC, clock_nanosleep with
 * TIMER_ABSTIME); tv_nsec is always below one second, whatever ns is. */
static inline struct timespec sfs_deadline_ts(uint64_t ns)
{
	return sfs_ns_ts(sfs_now_ns() + ns);
}

/* Sleep until sfs_now_ns() reaches t (at once when it has), signals or not. */
static inline void sfs_sleep_until_ns(uint64_t t)
{
	struct timespec ts = sfs_ns_ts(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

#endif
