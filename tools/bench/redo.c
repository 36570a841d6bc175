/* SPDX-License-Identifier: MIT */
/*
 * redo.c - sectorfs-bench redo: a database redo log with group commit.
 *
 * N client threads each commit one transaction after another.  A commit
 * appends one redo record (its size drawn from --record-dist) to the
 * shared log buffer and sleeps until the log writer says it is durable.
 * One log-writer thread takes everything pending, pads it to whole redo
 * blocks, writes it with one O_DIRECT pwrite() at the log's head, calls
 * fdatasync() and wakes the committers it covered:
 *
 *   clients:  [rec 1][rec 2   ][r3]      appended under the mutex, each
 *                                        client waits on "durable"
 *   writer:   |blk|blk|blk|blk.pad|      one write, then fdatasync
 *   log:      ...][this group    ][next group starts on a block boundary
 *
 * The next group starts in a fresh block, so the tail of the last block
 * of each write is padding: wastage = padding / bytes written.  Records
 * that fill whole blocks (fixed:4096 on 4096-byte blocks) waste nothing.
 * The log is the disk's first --log-size bytes; a group that does not
 * fit before the end starts again at offset 0 (a log switch).
 *
 * A redo block smaller than the disk's logical sector cannot be written
 * with O_DIRECT at all: the command refuses to start, as a database
 * would (Oracle, for one, refuses such a log with ORA-01378).  A redo block smaller than the physical sector works but
 * makes the disk read-modify-write; the command says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redo.h"
#include "units.h"

static int exec_redo(int argc, char **argv);

const struct tool_cmd bench_cmd_redo = {
	"redo", "--redo-block 512|4096 [options] IMAGE",
	"redo-log writer: group commit, fdatasync per log write, wastage",
	exec_redo,
};

static const char help[] =
	"Simulate a database redo log on IMAGE: --clients threads commit transactions whose\n"
	"redo records are padded, group by group, to whole redo blocks and written with\n"
	"O_DIRECT at the head of the log, each write followed by fdatasync (group commit).\n"
	"THE LOG OVERWRITES THE DISK (its first --log-size bytes).\n\n"
	"  --redo-block N       the redo block size: 512 or 4096 (any power of two up to 64K)\n"
	"  --clients N          committing threads (default 4)\n"
	"  --time SECONDS       length of the run (default 10)\n"
	"  --record-dist SPEC   redo record sizes: uniform:MIN-MAX (default uniform:100-2000),\n"
	"                       fixed:SIZE, or exp:MEAN (exponential, 1 byte .. 1M)\n"
	"  --log-size SIZE      the log is the first SIZE bytes of the disk (default: all)\n"
	"  --json               one JSON object with every figure\n"
	"  -h, --help           this help\n\n"
	"A redo block smaller than the disk's logical sector is refused with exit 1.\n";

#define MAX_RECORD (1ull << 20)
#define DEFAULT_DIST "uniform:100-2000"

static int parse_dist(const char *spec, struct dist *d)
{
	char buf[128], *colon, *dash;

	if (strlen(spec) >= sizeof(buf))
		return -1;
	strcpy(buf, spec);
	if (!(colon = strchr(buf, ':')))
		return -1;
	*colon++ = '\0';
	if (strcmp(buf, "fixed") == 0) {
		d->kind = DIST_FIXED;
		if (sfs_parse_size(colon, &d->a) < 0)
			return -1;
		d->b = d->a;
	} else if (strcmp(buf, "uniform") == 0) {
		d->kind = DIST_UNIFORM;
		if (!(dash = strchr(colon, '-')))
			return -1;
		*dash++ = '\0';
		if (sfs_parse_size(colon, &d->a) < 0 || sfs_parse_size(dash, &d->b) < 0 || d->a > d->b)
			return -1;
	} else if (strcmp(buf, "exp") == 0) {
		d->kind = DIST_EXP;
		if (sfs_parse_size(colon, &d->a) < 0)
			return -1;
		d->b = MAX_RECORD;
	} else {
		return -1;
	}
	return d->a >= 1 && d->a <= MAX_RECORD && d->b <= MAX_RECORD ? 0 : -1;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint64_t draw(const struct dist *d, uint64_t *seed)
{
	double u, v;

	switch (d->kind) {
	case DIST_UNIFORM:
		return d->a + rnd(seed) % (d->b - d->a + 1);
	case DIST_EXP:
		u = (double)(rnd(seed) >> 11) / 9007199254740992.0;   /* [0, 1) */
		v = -(double)d->a * log(1.0 - u);
		return v < 1 ? 1 : v > (double)d->b ? d->b : (uint64_t)v;
	default:
		return d->a;
	}
}

static void client(struct redo *s, struct bench_run *r, unsigned idx)
{
	uint64_t seed = 0x2545f4914f6cdd1dull * (idx + 1), len, my, t0;
	unsigned char *rec;
	bool ok;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		len = draw(&s->dist, &seed);
		t0 = tool_now_ns();
		pthread_mutex_lock(&s->lock);
		if (s->failed || s->writer_gone) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		my = ++s->submitted;
		rec = s->pend + s->pend_len;
		memcpy(rec, s->pattern + (my % 4096), len);       /* the redo itself */
		if (len >= 12) {
			memcpy(rec, &my, 8);                        /* header: LSN, length */
			memcpy(rec + 8, &(uint32_t){ (uint32_t)len }, 4);
		}
		s->pend_len += len;
		s->pend_recs++;
		pthread_cond_signal(&s->work);
		while (s->durable < my && !s->failed)
			pthread_cond_wait(&s->done, &s->lock);
		ok = s->durable >= my;
		pthread_mutex_unlock(&s->lock);
		if (!ok)
			break;
		bench_hist_add(&s->commit_lat[idx], tool_now_ns() - t0);
	}
	pthread_mutex_lock(&s->lock);
	s->active--;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
}

static void log_writer(struct redo *s, struct bench_run *r)
{
	uint64_t len, recs, upto, wlen, off, t0, t1;
	unsigned char *buf;
	ssize_t n;
	int err;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->pend_len && s->active && !atomic_load(&r->stop))
			pthread_cond_wait(&s->work, &s->lock);
		if (!s->pend_len) {
			/* time is up (or every client gone) and nobody waits for the log */
			s->writer_gone = true;
			break;
		}
		buf = s->pend;
		len = s->pend_len;
		recs = s->pend_recs;
		upto = s->submitted;
		s->pend = s->spare;
		s->spare = buf;
		s->pend_len = s->pend_recs = 0;
		pthread_mutex_unlock(&s->lock);

		wlen = (len + s->block - 1) / s->block * s->block;
		memset(buf + len, 0, wlen - len);                   /* pad the last block */
		off = s->head + wlen > s->log_size ? 0 : s->head;
		t0 = tool_now_ns();
		n = pwrite(s->d.fd, buf, wlen, (off_t)off);
		err = n < 0 ? errno : (uint64_t)n != wlen ? EIO : 0;
		if (!err && fdatasync(s->d.fd) < 0)
			err = errno;
		t1 = tool_now_ns();

		pthread_mutex_lock(&s->lock);
		if (err) {
			s->failed = err;
			if (n > 0)
				s->bytes_written += (uint64_t)n;
			atomic_store(&r->stop, true);
			pthread_cond_broadcast(&s->done);
			break;
		}
		bench_hist_add(&s->write_lat, t1 - t0);
		s->wraps += off != s->head;
		s->head = off + wlen;
		s->durable = upto;
		s->commits += recs;
		s->log_writes++;
		s->redo_bytes += len;
		s->bytes_written += wlen;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
}

static void worker_fn(struct bench_run *r, unsigned idx, void *arg)
{
	if (idx == 0)
		log_writer(arg, r);
	else
		client(arg, r, idx - 1);
}

static void tick(struct bench_run *r, void *arg)
{
	struct redo *s = arg;
	double secs = (double)(tool_now_ns() - r->t0) / 1e9;
	uint64_t commits, writes;

	pthread_mutex_lock(&s->lock);
	commits = s->commits;
	writes = s->log_writes;
	pthread_mutex_unlock(&s->lock);
	bench_progress_draw(&s->prog, "redo: %.1f s of %.1f s  %.0f commits/s  %.0f log writes/s",
			    secs, r->seconds, commits / secs, writes / secs);
}

/* Check the options against the disk and allocate the buffers; -1 (printed) to stop. */
static int prepare(struct redo *s, uint64_t log_size)
{
	char a[32];

	if (s->block < s->d.logical) {
		bench_error("redo block %u is smaller than the disk's logical sector %u; a database would "
			    "refuse to start", s->block, s->d.logical);
		return -1;
	}
	if (s->block < s->d.physical)
		fprintf(stderr, BENCH_PROG " redo: note: redo block %u is smaller than the physical sector "
			"%u: log writes that end inside a physical sector are read-modify-writes\n",
			s->block, s->d.physical);
	/* every client has at most one record pending */
	s->cap = (uint64_t)s->clients * s->dist.b;
	s->cap = (s->cap + s->block - 1) / s->block * s->block;
	s->log_size = log_size && log_size < s->d.size ? log_size : s->d.size;
	s->log_size = s->log_size / s->block * s->block;
	if (s->log_size < s->cap) {
		bench_error("%s: the log (%s) is smaller than one group can be: %u clients with records "
			    "up to %" PRIu64 " bytes need %" PRIu64 " bytes", s->d.path,
			    bench_fmt_size(s->log_size, a, sizeof(a)), s->clients, s->dist.b, s->cap);
		return -1;
	}
	s->pend = bench_buf_alloc(s->cap, s->block);
	s->spare = bench_buf_alloc(s->cap, s->block);
	s->pattern = bench_buf_alloc(MAX_RECORD + 4096, 8);
	s->commit_lat = calloc(s->clients, sizeof(*s->commit_lat));
	if (!s->commit_lat)
		bench_error("out of memory");
	return s->pend && s->spare && s->pattern && s->commit_lat ? 0 : -1;
}

static int exec_redo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "redo-block", required_argument, NULL, 'b' }, { "clients", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, 't' }, { "record-dist", required_argument, NULL, 'd' },
		{ "log-size", required_argument, NULL, 'l' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const struct tool_cmd *cmd = &bench_cmd_redo;
	struct redo s = { .clients = 4, .dist_spec = DEFAULT_DIST };
	struct bench_run r = { .seconds = 10 };
	struct bench_hist cl;
	unsigned long ul;
	uint64_t log_size = 0, block = 0;
	bool json = false;
	int c, rc = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': if (bench_parse_size(cmd, "--redo-block", optarg, &block) < 0) return 1; break;
		case 'c':
			if (bench_parse_uint(cmd, "--clients", optarg, 1, 1024, &ul) < 0)
				return 1;
			s.clients = (unsigned)ul;
			break;
		case 't': if (bench_parse_seconds(cmd, "--time", optarg, &r.seconds) < 0) return 1; break;
		case 'd': s.dist_spec = optarg; break;
		case 'l': if (bench_parse_size(cmd, "--log-size", optarg, &log_size) < 0) return 1; break;
		case 'j': json = true; break;
		case 'h':
			printf("usage: " BENCH_PROG " redo %s\n\n%s", cmd->usage, help);
			return 0;
		default:
			return bench_bad_option(cmd, c, argv);
		}
	}
	if (optind != argc - 1)
		return bench_usage_error(cmd, optind == argc ? "missing IMAGE" : "too many arguments");
	if (!block)
		return bench_usage_error(cmd, "--redo-block is required (512 or 4096)");
	if (!sfs_is_pow2(block) || block < 512 || block > 65536)
		return bench_usage_error(cmd, "--redo-block must be 512, 4096 or another power of two up to 64K");
	if (parse_dist(s.dist_spec, &s.dist) < 0)
		return bench_usage_error(cmd, "invalid --record-dist '%s': use uniform:MIN-MAX, fixed:SIZE "
					 "or exp:MEAN, sizes from 1 byte to 1M", s.dist_spec);
	s.block = (unsigned)block;

	tool_catch_signals();
	bench_progress_init(&s.prog);
	if (bench_disk_open(&s.d, argv[optind], O_RDWR) < 0)
		return 1;
	if (prepare(&s, log_size) < 0)
		goto out;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.work, NULL);
	pthread_cond_init(&s.done, NULL);
	bench_hist_init(&s.write_lat);
	s.active = s.clients;
	r.nthreads = s.clients + 1;
	r.worker = worker_fn;
	r.arg = &s;
	r.tick = tick;
	if (bench_run(&r) == 0) {
		bench_progress_clear(&s.prog);
		bench_hist_init(&cl);
		for (unsigned i = 0; i < s.clients; i++)
			bench_hist_merge(&cl, &s.commit_lat[i]);
		rc = json ? redo_print_json(&s, &cl, bench_run_seconds(&r), r.interrupted)
			  : (redo_print_text(&s, &cl, bench_run_seconds(&r)), 0);
		fflush(stdout);
		if (s.failed) {
			bench_error("%s: the log write failed: %s", s.d.path, strerror(s.failed));
			rc = 1;
		} else if (r.interrupted) {
			bench_error("interrupted after %.2f s: the figures cover that time", bench_run_seconds(&r));
			rc = rc ? rc : BENCH_EXIT_INTERRUPTED;
		}
	}
	pthread_cond_destroy(&s.done);
	pthread_cond_destroy(&s.work);
	pthread_mutex_destroy(&s.lock);
out:
	free(s.pend);
	free(s.spare);
	free(s.pattern);
	free(s.commit_lat);
	bench_disk_close(&s.d);
	return rc;
}
