/* SPDX-License-Identifier: MIT */
/*
 * test_model_limits.c - what keeps a device profile from holding a request
 * for ever (core/model/model.c).
 *
 * Proves: a profile whose numbers make no physical sense is refused with
 * the file, the key and the reason named (a latency above 60 s, a zeroing
 * rate below 1 KiB/s, a point larger than the largest request the model
 * prices, a curve whose last point runs slower than 1 KiB/s, numbers JSON
 * cannot hold), while the limits themselves pass and every shipped
 * profile parses; a profile path that names a FIFO (or a directory) is
 * refused at once, not waited on; whatever the profile, the model never prices one
 * request above 60 s, nor holds one longer behind a queue of others; the real wait (clock.h's clock) ends at once when
 * the process stops serving (the request fails with -ESHUTDOWN) or when
 * the hook says the request was interrupted (it completes, early), and
 * a wait that neither cuts reaches its time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "util/clock.h"
#include "model/model.h"

static int parse(const char *json, char *err)
{
	struct sfs_profile p;

	return sfs_profile_parse(json, strlen(json), "lim.json", "lim", &p, err, 256);
}

/* A profile with one extra key (or a curve replaced): its parse result, the message in err. */
static int with(const char *read, const char *extra, char *err)
{
	char json[1024];

	snprintf(json, sizeof json, "{\"read\": %s, \"write\": [{\"size\": \"4K\", \"us\": 20}]%s%s}",
		 read ? read : "[{\"size\": \"4K\", \"us\": 10}]", extra ? ", " : "", extra ? extra : "");
	return parse(json, err);
}

/* err names the file and key and says why. */
static void names(const char *err, const char *key, const char *why)
{
	char k[64];

	snprintf(k, sizeof k, "'%s'", key);
	cr_assert(strstr(err, "lim.json") && strstr(err, k) && strstr(err, why), "%s", err);
}

Test(limits, absurd_latencies_refused)
{
	char err[256];

	cr_assert_eq(with(NULL, "\"flush_us\": 1e300", err), -EINVAL);
	names(err, "flush_us", "60 s");
	cr_assert_eq(with(NULL, "\"flush_us\": 60000001", err), -EINVAL);
	names(err, "flush_us", "60 s");
	cr_assert_eq(with(NULL, "\"partial_write_us\": 1e12", err), -EINVAL);
	names(err, "partial_write_us", "60 s");
	cr_assert_eq(with(NULL, "\"zero_offload_us\": 6e7", err), 0, "%s", err);   /* the limit itself */
	cr_assert_eq(with(NULL, "\"zero_offload_us\": 6.0000001e7", err), -EINVAL);
	names(err, "zero_offload_us", "60 s");
	cr_assert_eq(with("[{\"size\": \"4K\", \"us\": 1e12}]", NULL, err), -EINVAL);
	names(err, "read", "60 s");
	cr_assert_eq(with(NULL, "\"flush_us\": -1", err), -EINVAL);
	names(err, "flush_us", "from 0");
	/* JSON has no NaN or infinity; a number too large for a double is a syntax error */
	cr_assert_eq(with(NULL, "\"flush_us\": 1e999", err), -EINVAL);
	cr_assert(strstr(err, "lim.json"), "%s", err);
	cr_assert_eq(with(NULL, "\"flush_us\": 60000000", err), 0, "%s", err);
}

Test(limits, rates_and_sizes_refused)
{
	char err[256];

	cr_assert_eq(with(NULL, "\"zero_offload_mb_s\": 1e-300", err), -EINVAL);
	names(err, "zero_offload_mb_s", "1 KiB/s");
	cr_assert_eq(with(NULL, "\"zero_offload_mb_s\": 0.001", err), -EINVAL);   /* 1000 B/s */
	names(err, "zero_offload_mb_s", "1 KiB/s");
	cr_assert_eq(with(NULL, "\"zero_offload_mb_s\": 0.001024", err), 0, "%s", err);
	cr_assert_eq(with(NULL, "\"zero_offload_mb_s\": 0", err), 0, "%s", err);   /* free */

	cr_assert_eq(with("[{\"size\": \"4096T\", \"us\": 10}]", NULL, err), -EINVAL);
	names(err, "read", "64 MiB");
	cr_assert_eq(with("[{\"size\": 67108865, \"us\": 10}]", NULL, err), -EINVAL);
	names(err, "read", "64 MiB");
	cr_assert_eq(with("[{\"size\": \"64M\", \"us\": 60000000}]", NULL, err), 0, "%s", err);
	/* a last point slower than 1 KiB/s prices every larger request slower still */
	cr_assert_eq(with("[{\"size\": 512, \"us\": 600000}]", NULL, err), -EINVAL);
	names(err, "read", "1 KiB/s");
	cr_assert_eq(with("[{\"size\": 512, \"us\": 500000}]", NULL, err), 0, "%s", err);
	/* only the last point sets the rate beyond the curve */
	cr_assert_eq(with("[{\"size\": 512, \"us\": 600000}, {\"size\": \"1M\", \"us\": 700000}]", NULL, err), 0,
		     "%s", err);
}

Test(limits, shipped_profiles_pass)
{
	const char *names[] = { "hdd-7200", "sata-ssd", "nvme-slow-small-writes", "ram" };
	struct sfs_profile p;
	char err[256];

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		cr_assert_eq(sfs_profile_load(AT_FDCWD, names[i], &p, err, sizeof err), 0, "%s", err);
}

Test(limits, fifo_socket_or_directory_refused_at_once, .timeout = 10)
{
	char dir[] = "/tmp/sfs-prof-XXXXXX", fifo[64], err[256];
	struct sfs_profile p;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof fifo, "%s/p.json", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(sfs_profile_load(AT_FDCWD, fifo, &p, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, fifo) && strstr(err, "not a regular file"), "%s", err);
	cr_assert_eq(sfs_profile_load(AT_FDCWD, dir, &p, err, sizeof err), -EINVAL);
	cr_assert(strstr(err, "not a regular file"), "%s", err);
	unlink(fifo);
	cr_assert_eq(mknod(fifo, S_IFSOCK | 0600, 0), 0);     /* a socket: open says ENXIO */
	cr_assert_eq(sfs_profile_load(AT_FDCWD, fifo, &p, err, sizeof err), -EINVAL, "%s", err);
	cr_assert(strstr(err, "not a regular file"), "%s", err);
	unlink(fifo);
	rmdir(dir);
}

static uint64_t f_now(void *arg) { return *(uint64_t *)arg; }

static int f_sleep(void *arg, uint64_t t)
{
	*(uint64_t *)arg = t;
	return 0;
}

Test(limits, no_request_priced_above_60s)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1, .nread = 1, .nwrite = 1 };
	struct sfs_model_clock clk;
	struct sfs_model *m;
	uint64_t now = 0;

	/* at the limits: 60 s for 512 bytes, 1 KiB/s zeroing, 60 s per partial sector */
	p.read[0] = (struct sfs_profile_point){ 512, 60e6 };
	p.write[0] = (struct sfs_profile_point){ 512, 60e6 };
	p.flush_us = 60e6;
	p.partial_write_us = 60e6;
	p.zero_offload_mb_s = 0.001024;
	p.zero_offload_us = 60e6;
	clk = (struct sfs_model_clock){ f_now, f_sleep, &now };
	cr_assert_eq(sfs_model_new(&p, 4096, &clk, &m), 0);
	cr_assert_eq(sfs_model_cost_ns(m, &(struct sfs_model_req){ .op = SFS_MODEL_READ, .len = 1 << 20 }),
		     SFS_MODEL_MAX_NS);
	cr_assert_eq(sfs_model_cost_ns(m, &(struct sfs_model_req){ .op = SFS_MODEL_WRITE, .off = 512, .len = 512,
								    .zeroed = 64 << 20, .offload = true }),
		     SFS_MODEL_MAX_NS);
	cr_assert_eq(sfs_model_cost_ns(m, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }), SFS_MODEL_MAX_NS);
	/* a profile built in code, never parsed, is held to the same bound */
	p.flush_us = 1e300;
	sfs_model_free(m);
	cr_assert_eq(sfs_model_new(&p, 4096, &clk, &m), 0);
	cr_assert_eq(sfs_model_cost_ns(m, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }), SFS_MODEL_MAX_NS);
	sfs_model_free(m);
}

Test(limits, no_request_held_above_60s_behind_a_queue)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1, .nread = 1, .nwrite = 1 };
	struct sfs_model_clock clk;
	struct sfs_model *m;
	uint64_t now = 0, waited;

	p.read[0] = (struct sfs_profile_point){ 4096, 10 };
	p.write[0] = (struct sfs_profile_point){ 4096, 10 };
	p.flush_us = 40e6;
	clk = (struct sfs_model_clock){ f_now, f_sleep, &now };
	cr_assert_eq(sfs_model_new(&p, 4096, &clk, &m), 0);
	/* three flushes queued at once on one channel: done at 40, 80 and 120 s */
	sfs_model_schedule(m, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }, 0);
	sfs_model_schedule(m, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }, 0);
	cr_assert_eq(sfs_model_complete(m, &(struct sfs_model_req){ .op = SFS_MODEL_FLUSH }, 0, &waited), 0);
	cr_assert_eq(waited, SFS_MODEL_MAX_NS);
	cr_assert_eq(now, SFS_MODEL_MAX_NS);
	sfs_model_free(m);
}

/* ---- the real wait ---- */

static int interrupted_flag;

static int hook(void)
{
	return __atomic_load_n(&interrupted_flag, __ATOMIC_ACQUIRE);
}

struct waiter {
	uint64_t until, took;
	int rc;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	uint64_t t0 = sfs_now_ns();

	w->rc = sfs_model_wait_until(w->until);
	w->took = sfs_now_ns() - t0;
	return NULL;
}

/* Start a thread waiting 60 s, let it sleep 100 ms, cut it with cut(), join it: its waiter. */
static struct waiter cut_wait(void (*cut)(void))
{
	struct waiter w = { .until = sfs_now_ns() + 60000 * 1000000ull };
	struct timespec ts = { 0, 100 * 1000000 };
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	nanosleep(&ts, NULL);
	cut();
	pthread_join(t, NULL);
	return w;
}

static void interrupt(void)
{
	__atomic_store_n(&interrupted_flag, 1, __ATOMIC_RELEASE);
	sfs_model_wake();
}

Test(limits, wait_reaches_its_time)
{
	uint64_t t0 = sfs_now_ns();

	cr_assert_eq(sfs_model_wait_until(t0 + 30 * 1000000ull), 0);
	cr_assert_geq(sfs_now_ns() - t0, 30 * 1000000ull);
	cr_assert_eq(sfs_model_wait_until(t0), 0);   /* a time passed: at once */
}

Test(limits, interrupt_ends_a_wait_early)
{
	struct waiter w;

	sfs_model_set_interrupted(hook);
	w = cut_wait(interrupt);
	cr_assert_eq(w.rc, -EINTR);
	cr_assert_lt(w.took, 1000 * 1000000ull, "the wait took %llu ns", (unsigned long long)w.took);
	/* the hook is asked before a long wait starts too: an interrupt that came first */
	cr_assert_eq(sfs_model_wait_until(sfs_now_ns() + 60000 * 1000000ull), -EINTR);
}

Test(limits, stop_ends_every_wait)
{
	struct waiter w = cut_wait(sfs_model_stop);

	cr_assert_eq(w.rc, -ESHUTDOWN);
	cr_assert_lt(w.took, 1000 * 1000000ull, "the wait took %llu ns", (unsigned long long)w.took);
	cr_assert(sfs_model_stopped());
	/* and any wait after it */
	cr_assert_eq(sfs_model_wait_until(sfs_now_ns() + 60000 * 1000000ull), -ESHUTDOWN);
	cr_assert_eq(sfs_model_wait_until(0), 0);   /* nothing left to wait: no failure */
}

Test(limits, stopped_model_fails_held_requests)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1, .nread = 1, .nwrite = 1 };
	struct sfs_model *m;
	uint64_t waited = 1;

	p.read[0] = (struct sfs_profile_point){ 4096, 20e6 };
	p.write[0] = (struct sfs_profile_point){ 4096, 10 };
	cr_assert_eq(sfs_model_new(&p, 4096, NULL, &m), 0);
	sfs_model_stop();
	cr_assert_eq(sfs_model_complete(m, &(struct sfs_model_req){ .op = SFS_MODEL_READ, .len = 4096 },
					sfs_now_ns(), &waited), -ESHUTDOWN);
	sfs_model_free(m);
	/* a request the model would not hold any more completes */
	cr_assert_eq(sfs_model_new(&p, 4096, NULL, &m), 0);
	cr_assert_eq(sfs_model_complete(m, &(struct sfs_model_req){ .op = SFS_MODEL_WRITE, .len = 4096 },
					0, &waited), 0);
	cr_assert_eq(waited, 0);
	sfs_model_free(m);
}
