/* SPDX-License-Identifier: MIT */
/*
 * test_clock.c - unit tests of core/util/clock.h, the one monotonic clock.
 *
 * sfs_now_ns never goes back; sfs_deadline_ts gives the absolute
 * CLOCK_MONOTONIC time ns from now, with tv_nsec below a second for any
 * ns (a wait of 999 ms, of several seconds, of none), and a condition
 * variable set to CLOCK_MONOTONIC waits on it until that time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "util/clock.h"

#define NS 1000000000ull

static uint64_t ts_ns(struct timespec ts)
{
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

Test(clock, now_never_goes_back)
{
	uint64_t a = sfs_now_ns(), b = sfs_now_ns();

	cr_expect_geq(b, a);
	cr_expect_gt(a, 0);
}

Test(clock, deadline_is_now_plus_ns_normalised)
{
	static const uint64_t waits[] = { 0, 1, 250000000ull, 999000000ull, NS - 1, NS, NS + 1,
					  1500000000ull, 7 * NS + 999999999ull };

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		uint64_t before = sfs_now_ns();
		struct timespec ts = sfs_deadline_ts(waits[i]);
		uint64_t after = sfs_now_ns();

		cr_expect(ts.tv_nsec >= 0 && ts.tv_nsec < (long)NS, "ns %llu: tv_nsec %ld",
			  (unsigned long long)waits[i], ts.tv_nsec);
		cr_expect(ts_ns(ts) >= before + waits[i] && ts_ns(ts) <= after + waits[i],
			  "ns %llu: deadline %llu not in [%llu, %llu]", (unsigned long long)waits[i],
			  (unsigned long long)ts_ns(ts), (unsigned long long)(before + waits[i]),
			  (unsigned long long)(after + waits[i]));
	}
}

Test(clock, a_monotonic_condition_waits_until_the_deadline)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_condattr_t ca;
	pthread_cond_t cv;
	uint64_t start;
	struct timespec ts;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&mu);
	start = sfs_now_ns();
	ts = sfs_deadline_ts(20000000ull);   /* 20 ms */
	do
		rc = pthread_cond_timedwait(&cv, &mu, &ts);
	while (rc == 0);                     /* a spurious wake-up: wait again */
	pthread_mutex_unlock(&mu);
	cr_expect_eq(rc, ETIMEDOUT);
	cr_expect_geq(sfs_now_ns() - start, 20000000ull, "woke after %llu ns",
		      (unsigned long long)(sfs_now_ns() - start));
	pthread_cond_destroy(&cv);
}
