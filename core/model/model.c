/* SPDX-License-Identifier: MIT */
/*
 * model.c - device timing profiles (parse, load, dump) and the drive model
 * that holds each request back to the time the profiled drive would take.
 *
 * The queue is N channels, each with the model time it is free again:
 *
 *     arrival t0 ─┐   channel 0  [busy ..... free_at0]
 *                 ├─▶ channel k = argmin free_at      start = max(t0, free_at_k)
 *                 │   ...                             done  = start + cost
 *                 └─  channel N-1                     free_at_k = done
 *
 * so up to N requests overlap and further ones wait, and throughput stops
 * scaling with queue depth at N, as on a real drive.  See model.h.
 *
 * The wait sleeps on a futex word, wake_seq, with the completion time as
 * its timeout, so that a stop or an interrupt can wake it: the waker
 * changes the state (stopping, or the request's interrupted flag that the
 * hook reads), then bumps wake_seq and wakes every sleeper; a sleeper
 * reads wake_seq before it looks at the state, so a change made after it
 * looked makes its sleep return at once (the word moved) or wakes it.
 */
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/units.h"

#ifndef SFS_PROFILE_DIR
#define SFS_PROFILE_DIR "/usr/local/share/sectorfs/profiles"
#endif

/* ---- profiles ---- */

struct pparse {
	const char *fname;
	char *err;
	size_t errlen;
	struct sfs_profile *p;
	bool have_read, have_write, have_channels;
};

static int perr(const struct pparse *pp, const char *key, const char *what)
{
	return sfs_err(pp->err, pp->errlen, -EINVAL, "%s: key '%s': %s", pp->fname, key, what);
}

/* A latency in microseconds: 0 to SFS_PROFILE_MAX_US. */
static int get_us(const struct pparse *pp, const char *key, const json_t *v, double *out)
{
	if (!json_is_number(v))
		return perr(pp, key, "expected a number");
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0 || *out > SFS_PROFILE_MAX_US)
		return perr(pp, key, "expected microseconds from 0 to 60000000 (60 s)");
	return 0;
}

/* The zeroing rate in MB/s (10^6 bytes): 0 (free), or at least SFS_PROFILE_MIN_RATE. */
static int get_rate(const struct pparse *pp, const char *key, const json_t *v, double *out)
{
	if (!json_is_number(v))
		return perr(pp, key, "expected a number");
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0 || (*out > 0 && *out * 1e6 < SFS_PROFILE_MIN_RATE))
		return perr(pp, key, "expected 0 (free) or a rate of at least 1 KiB/s (0.001024 MB/s)");
	return 0;
}

/* Point i of a curve: its size (1 .. SFS_PROFILE_MAX_SIZE, above the point before) and us. */
static int get_point(const struct pparse *pp, const char *key, const json_t *e, size_t i,
		     struct sfs_profile_point *pts)
{
	json_t *s = json_object_get(e, "size"), *t = json_object_get(e, "us");
	uint64_t size = 0;
	char what[160];

	if (!json_is_object(e) || !s || !t || json_object_size(e) != 2)
		return perr(pp, key, "each point is {\"size\": bytes or \"4K\", \"us\": number}");
	if (json_is_integer(s) && json_integer_value(s) > 0)
		size = (uint64_t)json_integer_value(s);
	else if (!json_is_string(s) || sfs_parse_size(json_string_value(s), &size) || !size)
		return perr(pp, key, "a point's size is not a size");
	snprintf(what, sizeof what, "point %zu: ", i + 1);
	if (size > SFS_PROFILE_MAX_SIZE)
		return perr(pp, key, strcat(what, "its size is above 64 MiB, the largest request the model prices"));
	if (i && size <= pts[i - 1].size)
		return perr(pp, key, strcat(what, "sizes must increase"));
	if (!json_is_number(t) || !isfinite(json_number_value(t)) || json_number_value(t) < 0 ||
	    json_number_value(t) > SFS_PROFILE_MAX_US)
		return perr(pp, key, strcat(what, "its us is not microseconds from 0 to 60000000 (60 s)"));
	pts[i].size = size;
	pts[i].us = json_number_value(t);
	return 0;
}

static int get_curve(const struct pparse *pp, const char *key, const json_t *v,
		     struct sfs_profile_point *pts, unsigned *n)
{
	size_t i;
	json_t *e;
	int rc;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return perr(pp, key, "expected a non-empty array of {\"size\": ..., \"us\": ...}");
	if (json_array_size(v) > SFS_PROFILE_MAX_POINTS)
		return perr(pp, key, "more than 32 points");
	json_array_foreach(v, i, e)
		if ((rc = get_point(pp, key, e, i, pts)) < 0)
			return rc;
	*n = (unsigned)json_array_size(v);
	/* beyond its last point a curve prices requests at that point's rate */
	if ((double)pts[*n - 1].size * 1e6 < SFS_PROFILE_MIN_RATE * pts[*n - 1].us) {
		char what[160];

		snprintf(what, sizeof what, "the last point runs at %.0f bytes/s, below 1 KiB/s (larger "
			 "requests are priced at its rate)", (double)pts[*n - 1].size * 1e6 / pts[*n - 1].us);
		return perr(pp, key, what);
	}
	return 0;
}

static int pkey(struct pparse *pp, const char *key, const json_t *v)
{
	struct sfs_profile *p = pp->p;

	if (!strcmp(key, "name")) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) >= SFS_PROFILE_NAME_MAX)
			return perr(pp, key, "expected a string of 1 to 63 characters");
		snprintf(p->name, sizeof p->name, "%s", json_string_value(v));
		return 0;
	}
	if (!strcmp(key, "source") || !strcmp(key, "comment")) {
		if (!json_is_string(v))
			return perr(pp, key, "expected a string");
		return 0;
	}
	if (!strcmp(key, "channels")) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > SFS_PROFILE_MAX_CHANNELS)
			return perr(pp, key, "expected an integer from 1 to 1024");
		p->channels = (unsigned)json_integer_value(v);
		pp->have_channels = true;
		return 0;
	}
	if (!strcmp(key, "read")) {
		pp->have_read = true;
		return get_curve(pp, key, v, p->read, &p->nread);
	}
	if (!strcmp(key, "write")) {
		pp->have_write = true;
		return get_curve(pp, key, v, p->write, &p->nwrite);
	}
	if (!strcmp(key, "flush_us"))
		return get_us(pp, key, v, &p->flush_us);
	if (!strcmp(key, "partial_write_us")) {
		if (json_is_null(v)) {
			p->partial_write_us = -1;
			return 0;
		}
		return get_us(pp, key, v, &p->partial_write_us);
	}
	if (!strcmp(key, "zero_offload_mb_s"))
		return get_rate(pp, key, v, &p->zero_offload_mb_s);
	if (!strcmp(key, "zero_offload_us"))
		return get_us(pp, key, v, &p->zero_offload_us);
	if (!strcmp(key, "rotational")) {
		if (!json_is_boolean(v))
			return perr(pp, key, "expected true or false");
		p->rotational = json_is_true(v);
		return 0;
	}
	if (!strcmp(key, "latency_spike"))
		return sfs_spike_parse(v, pp->fname, key, &p->spike, pp->err, pp->errlen);
	return perr(pp, key, "unknown key");
}

int sfs_profile_parse(const char *text, size_t len, const char *fname, const char *default_name,
		      struct sfs_profile *out, char *err, size_t errlen)
{
	struct sfs_profile p = { .channels = 1, .partial_write_us = -1 };
	struct pparse pp = { .fname = fname, .err = err, .errlen = errlen, .p = &p };
	json_error_t je;
	const char *key;
	json_t *root, *v;
	int rc = 0;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return sfs_err(err, errlen, -EINVAL, "%s: line %d: %s", fname, je.line, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return sfs_err(err, errlen, -EINVAL, "%s: expected a JSON object", fname);
	}
	json_object_foreach(root, key, v)
		if ((rc = pkey(&pp, key, v)))
			break;
	json_decref(root);
	if (rc)
		return rc;
	if (!pp.have_read || !pp.have_write)
		return sfs_err(err, errlen, -EINVAL, "%s: key '%s': required", fname,
			       pp.have_read ? "write" : "read");
	if (!p.name[0])
		snprintf(p.name, sizeof p.name, "%s", default_name ? default_name : "unnamed");
	*out = p;
	return 0;
}

const char *sfs_profile_dir(void)
{
	const char *d = getenv("SECTORFS_PROFILE_DIR");

	return d && *d ? d : SFS_PROFILE_DIR;
}

void sfs_profile_file_name(const char *spec, char *out, size_t outlen)
{
	const char *b = strrchr(spec, '/');
	size_t n;

	b = b ? b + 1 : spec;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, b, n);
	out[n] = 0;
}

int sfs_profile_load(int dirfd, const char *spec, struct sfs_profile *out, char *err, size_t errlen)
{
	char path[4096], name[SFS_PROFILE_NAME_MAX], *buf;
	struct stat stt;
	ssize_t n;
	int fd, rc;

	if (!spec || !*spec)
		return sfs_err(err, errlen, -EINVAL, "empty profile name");
	if (!strchr(spec, '/')) {
		if (spec[0] == '.')
			return sfs_err(err, errlen, -EINVAL, "profile '%s': not a profile name", spec);
		snprintf(path, sizeof path, "%s/%s.json", sfs_profile_dir(), spec);
		dirfd = AT_FDCWD;
	} else {
		snprintf(path, sizeof path, "%s", spec);
	}
	/* O_NONBLOCK: a FIFO there would hold the open until a writer came (refused below) */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
#ifdef SFS_PROFILE_SRCDIR
	/* not installed: the profiles of the source tree it was built from */
	if (fd < 0 && errno == ENOENT && !strchr(spec, '/') && !getenv("SECTORFS_PROFILE_DIR")) {
		char alt[4096];

		snprintf(alt, sizeof alt, "%s/%s.json", SFS_PROFILE_SRCDIR, spec);
		if ((fd = openat(AT_FDCWD, alt, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0)
			snprintf(path, sizeof path, "%s", alt);
		else
			errno = ENOENT;
	}
#endif
	if (fd < 0 && errno == ENXIO)          /* a socket: never opened */
		return sfs_err(err, errlen, -EINVAL, "profile '%s': %s: not a regular file of at most 64 KiB",
			       spec, path);
	if (fd < 0) {
		rc = -errno;
		return sfs_err(err, errlen, rc, "profile '%s': %s: %s", spec, path, strerror(-rc));
	}
	if (fstat(fd, &stt) < 0 || !S_ISREG(stt.st_mode) || stt.st_size > SFS_PROFILE_MAX_BYTES) {
		close(fd);
		return sfs_err(err, errlen, -EINVAL, "profile '%s': %s: not a regular file of at most 64 KiB",
			       spec, path);
	}
	buf = malloc((size_t)stt.st_size + 1);
	if (!buf) {
		close(fd);
		return sfs_err(err, errlen, -ENOMEM, "profile '%s': out of memory", spec);
	}
	n = read(fd, buf, (size_t)stt.st_size);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc == 0) {
		sfs_profile_file_name(spec, name, sizeof name);
		rc = sfs_profile_parse(buf, (size_t)n, path, name, out, err, errlen);
	} else {
		sfs_err(err, errlen, rc, "profile '%s': %s: %s", spec, path, strerror(-rc));
	}
	free(buf);
	return rc;
}

static json_t *curve_json(const struct sfs_profile_point *pts, unsigned n)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < n; i++) {
		char s[32];

		if (sfs_format_size(pts[i].size, s, sizeof s))
			snprintf(s, sizeof s, "%llu", (unsigned long long)pts[i].size);
		json_array_append_new(a, json_pack("{s:s, s:f}", "size", s, "us",
						   round(pts[i].us * 10) / 10));
	}
	return a;
}

char *sfs_profile_dump(const struct sfs_profile *p, const char *source)
{
	json_t *o = json_object();
	char *s;

	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(p->name));
	if (source)
		json_object_set_new(o, "source", json_string(source));
	json_object_set_new(o, "channels", json_integer(p->channels));
	json_object_set_new(o, "read", curve_json(p->read, p->nread));
	json_object_set_new(o, "write", curve_json(p->write, p->nwrite));
	json_object_set_new(o, "flush_us", json_real(round(p->flush_us * 10) / 10));
	json_object_set_new(o, "partial_write_us",
			    p->partial_write_us < 0 ? json_null() : json_real(p->partial_write_us));
	json_object_set_new(o, "zero_offload_mb_s", json_real(p->zero_offload_mb_s));
	json_object_set_new(o, "zero_offload_us", json_real(p->zero_offload_us));
	json_object_set_new(o, "rotational", json_boolean(p->rotational));
	if (sfs_spike_on(&p->spike))
		json_object_set_new(o, "latency_spike", sfs_spike_json(&p->spike));
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(o);
	return s;
}

double sfs_profile_service_us(const struct sfs_profile *p, bool write, uint64_t size)
{
	const struct sfs_profile_point *pts = write ? p->write : p->read;
	unsigned n = write ? p->nwrite : p->nread, i;
	double x, x0, x1;

	if (size <= pts[0].size)
		return pts[0].us;
	if (size >= pts[n - 1].size)   /* beyond the curve: at the rate of its last point */
		return pts[n - 1].us * (double)size / (double)pts[n - 1].size;
	for (i = 1; pts[i].size < size; i++)
		;
	x = log2((double)size);
	x0 = log2((double)pts[i - 1].size);
	x1 = log2((double)pts[i].size);
	return pts[i - 1].us + (pts[i].us - pts[i - 1].us) * (x - x0) / (x1 - x0);
}

/* The model serves at most channels requests at once, each for its service time, so at its best
 * it completes channels / service_us per microsecond: the channels that replay a drive's best IOPS
 * are those IOPS times the service time.  The service time is the profile's, the QD1 figure, which
 * holds the host's own time too, as the replay's cost will; a queue-depth knee would take the
 * host's time per request under load (two threads per core) for the drive's. */
unsigned sfs_profile_channels_for(const struct sfs_profile *p, bool write, uint64_t size, double iops,
				  unsigned max_qd)
{
	double n = iops * sfs_profile_service_us(p, write, size) / 1e6;

	if (max_qd < 1)
		max_qd = 1;
	if (!(n >= 1))   /* NaN too */
		return 1;
	return n >= max_qd ? max_qd : (unsigned)llround(n);
}

unsigned sfs_model_partial_sectors(uint32_t pss, uint64_t off, uint64_t len)
{
	uint64_t end = off + len, s, e;

	if (!len || !pss)
		return 0;
	s = off / pss;
	e = (end - 1) / pss;
	if (s == e)
		return (off % pss || end % pss) ? 1 : 0;
	return (off % pss ? 1 : 0) + (end % pss ? 1 : 0);
}

/* ---- the model ---- */

struct sfs_model {
	struct sfs_profile p;
	uint32_t pss;
	struct sfs_model_clock clk;
	pthread_mutex_t lk;
	uint64_t *free_at;       /* p.channels model times */
	uint64_t nreq;           /* requests queued so far (lk): the latency spikes' numbers */
};

/* The default clock: clock.h's. */
static uint64_t mono_now(void *arg)
{
	(void)arg;
	return sfs_now_ns();
}

/* The last SPIN_NS of a wait are spun rather than slept, by at most spin_max threads at once (one
 * less than the CPUs, at least one): a timer's wake-up comes 30-80 us late (median) on a busy
 * virtual machine, which would add that much to every request of a fast profile (a SATA SSD's
 * 12 us write); spinning the last 100 us takes the median to under a microsecond.  Threads
 * beyond spin_max sleep to the end, so a deep queue does not spin every CPU.  SFS_XP_NOSPIN=1 in
 * the environment (for experiments) sleeps every wait to its end. */
#define SPIN_NS 100000ull

static atomic_uint spinners;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static unsigned spin_max(void)
{
	static atomic_uint max;
	unsigned v = atomic_load_explicit(&max, memory_order_relaxed);

	if (!v) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		const char *no = getenv("SFS_XP_NOSPIN");   /* experiments: every wait slept */

		v = no && *no == '1' ? UINT_MAX : n > 2 ? (unsigned)n - 1 : 1;
		atomic_store_explicit(&max, v, memory_order_relaxed);
	}
	return v;
}

/* ---- the wait, and what ends it early ---- */

static uint32_t wake_seq;           /* the futex word: bumped by every wake */
static int stopping;                /* sfs_model_stop was called (atomic) */
static int (*interrupted_hook)(void);   /* atomic */

#define HOOK_MIN_NS 1000000ull      /* waits this long ask the hook before they start */

void sfs_model_set_interrupted(int (*fn)(void))
{
	__atomic_store_n(&interrupted_hook, fn, __ATOMIC_RELEASE);
}

static bool interrupted(void)
{
	int (*fn)(void) = __atomic_load_n(&interrupted_hook, __ATOMIC_ACQUIRE);

	return fn && fn();
}

void sfs_model_wake(void)
{
	__atomic_add_fetch(&wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &wake_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void sfs_model_stop(void)
{
	__atomic_store_n(&stopping, 1, __ATOMIC_SEQ_CST);
	sfs_model_wake();
}

bool sfs_model_stopped(void)
{
	return __atomic_load_n(&stopping, __ATOMIC_ACQUIRE) != 0;
}

/* Sleep until t unless woken: the futex's absolute timeout is on CLOCK_MONOTONIC, clock.h's. */
static void sleep_on_seq(uint32_t seq, uint64_t t)
{
	struct timespec ts = sfs_ns_ts(t);

	syscall(SYS_futex, &wake_seq, FUTEX_WAIT_BITSET_PRIVATE, seq, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

int sfs_model_wait_until(uint64_t t)
{
	static __thread bool slack_set;
	uint64_t now = sfs_now_ns();
	bool woken = t > now + HOOK_MIN_NS;   /* a long wait asks the hook first */

	/* the default 50 us of timer slack would add up to 50 us to every modelled request */
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
		slack_set = true;
	}
	while (now < t) {
		/* the word before the state: a change after this look moves it */
		uint32_t seq = __atomic_load_n(&wake_seq, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&stopping, __ATOMIC_SEQ_CST))
			return -ESHUTDOWN;
		if (woken && interrupted())
			return -EINTR;
		if (t <= now + SPIN_NS)
			break;
		sleep_on_seq(seq, t - SPIN_NS);
		now = sfs_now_ns();
		woken = now < t - SPIN_NS;   /* early: woken (or a signal), so look again */
	}
	if (now >= t)
		return 0;
	if (spin_max() != UINT_MAX) {
		bool spin = atomic_fetch_add(&spinners, 1) < spin_max();

		while (spin && sfs_now_ns() < t)
			cpu_relax();
		atomic_fetch_sub(&spinners, 1);
		if (spin)
			return 0;
	}
	sfs_sleep_until_ns(t);
	return 0;
}

static int mono_sleep_until(void *arg, uint64_t t)
{
	(void)arg;
	return sfs_model_wait_until(t);
}

int sfs_model_new(const struct sfs_profile *p, uint32_t pss, const struct sfs_model_clock *clk,
		  struct sfs_model **out)
{
	struct sfs_model *m = calloc(1, sizeof *m);

	if (!m)
		return -ENOMEM;
	m->p = *p;
	if (m->p.channels < 1)
		m->p.channels = 1;
	m->pss = pss;
	m->clk = clk ? *clk : (struct sfs_model_clock){ mono_now, mono_sleep_until, NULL };
	m->free_at = calloc(m->p.channels, sizeof *m->free_at);
	if (!m->free_at) {
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_init(&m->lk, NULL);
	*out = m;
	return 0;
}

void sfs_model_free(struct sfs_model *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lk);
	free(m->free_at);
	free(m);
}

const struct sfs_profile *sfs_model_profile(const struct sfs_model *m)
{
	return &m->p;
}

uint64_t sfs_model_cost_ns(const struct sfs_model *m, const struct sfs_model_req *rq)
{
	const struct sfs_profile *p = &m->p;
	double us = 0;

	switch (rq->op) {
	case SFS_MODEL_FLUSH:
		us = p->flush_us;
		break;
	case SFS_MODEL_READ:
		us = sfs_profile_service_us(p, false, rq->len);
		break;
	case SFS_MODEL_WRITE: {
		uint32_t pss = rq->pss ? rq->pss : m->pss;
		unsigned parts = sfs_model_partial_sectors(pss, rq->off, rq->len);

		us = sfs_profile_service_us(p, true, rq->len);
		if (parts)
			us += parts * (p->partial_write_us >= 0 ? p->partial_write_us
				       : sfs_profile_service_us(p, false, pss));
		if (rq->zeroed && rq->offload)
			us += p->zero_offload_us +
			      (p->zero_offload_mb_s > 0 ? (double)rq->zeroed / p->zero_offload_mb_s : 0);
		else if (rq->zeroed)
			us += sfs_profile_service_us(p, true, rq->zeroed);
		break;
	}
	}
	/* no request is held longer, whatever the profile (NaN and infinities too) */
	if (!(us * 1000.0 < (double)SFS_MODEL_MAX_NS))
		return us > 0 || isnan(us) ? SFS_MODEL_MAX_NS : 0;
	return (uint64_t)llround(us * 1000.0);
}

uint64_t sfs_model_schedule(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns)
{
	uint64_t cost = sfs_model_cost_ns(m, rq), start, done;
	unsigned k = 0;

	pthread_mutex_lock(&m->lk);
	for (unsigned i = 1; i < m->p.channels; i++)
		if (m->free_at[i] < m->free_at[k])
			k = i;
	start = m->free_at[k] > t0_ns ? m->free_at[k] : t0_ns;
	done = start + cost + sfs_spike_extra_ns(&m->p.spike, m->nreq++);
	m->free_at[k] = done;
	pthread_mutex_unlock(&m->lk);
	return done;
}

int sfs_model_complete(struct sfs_model *m, const struct sfs_model_req *rq, uint64_t t0_ns, uint64_t *waited)
{
	uint64_t done = sfs_model_schedule(m, rq, t0_ns), now = m->clk.now(m->clk.arg), end;
	int rc;

	*waited = 0;
	if (done <= now)
		return 0;
	if (done - now > SFS_MODEL_MAX_NS)   /* a queue of slow requests: none waits longer either */
		done = now + SFS_MODEL_MAX_NS;
	rc = m->clk.sleep_until(m->clk.arg, done);
	end = m->clk.now(m->clk.arg);
	*waited = (end < done ? end : done) - now;   /* what the model added, less when cut short */
	return rc == -ESHUTDOWN ? rc : 0;
}
