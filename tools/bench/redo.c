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
 * The log runs --repeat times (5 by default), each run --time seconds on
 * a log started afresh at offset 0; with several redo blocks
 * (--redo-block 512,4096) the runs are interleaved, block after block,
 * the order turning by one each repeat, so that a drift of the host
 * touches every block alike.  Each block's figures are those of its
 * median run (by commits/s), with the spread of commits/s over the runs.
 *
 * A redo block smaller than the disk's logical sector cannot be written
 * with O_DIRECT at all: the command refuses to start, as a database
 * would (Oracle, for one, refuses such a log with ORA-01378).  A redo block smaller than the physical sector works but
 * makes the disk read-modify-write; the command says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redo.h"
#include "run.h"
#include "util/units.h"

static const char redo_help[] =
	"Simulate a database redo log on IMAGE: --clients threads commit transactions whose\n"
	"redo records are padded, group by group, to whole redo blocks and written with\n"
	"O_DIRECT at the head of the log, each write followed by fdatasync (group commit).\n"
	"THE LOG OVERWRITES THE DISK (its first --log-size bytes).\n\n"
	"  --redo-block N[,N..] the redo block size: 512 or 4096 (any power of two up to 64K);\n"
	"                       several (up to 4, e.g. 512,4096) run interleaved and compared\n"
	"  --clients N          committing threads (default 4)\n"
	"  --time SECONDS       length of each run (default 2)\n"
	"  --repeat N           runs of each redo block (default 5, at most 20): the figures\n"
	"                       are the median run's, with the spread of commits/s\n"
	"  --record-dist SPEC   redo record sizes: uniform:MIN-MAX (default uniform:100-2000),\n"
	"                       fixed:SIZE, or exp:MEAN (exponential, 1 byte .. 1M)\n"
	"  --log-size SIZE      the log is the first SIZE bytes of the disk (default: all)\n"
	"  --json               one JSON object with every figure\n"
	"  --svg FILE           also draw commits/s and wastage per redo block as an SVG chart\n"
	"  -h, --help           this help\n\n"
	"A redo block smaller than the disk's logical sector is refused with exit 1.\n";

#define MAX_RECORD (1ull << 20)

enum dist_kind { DIST_FIXED, DIST_UNIFORM, DIST_EXP };

struct dist {
	enum dist_kind kind;
	uint64_t a, b;          /* fixed: a; uniform: a..b; exp: mean a, capped at b */
};

/* The shared state of clients and log writer; lock guards pend* to failed and the figures
 * in res. */
struct redo {
	struct redo_result res;         /* the run going on */
	struct redo_set set;            /* every run */
	unsigned blocks[REDO_MAX_BLOCKS];
	double seconds;                 /* the run's length, asked */
	uint64_t cap;                   /* bytes one group can be */
	struct dist dist;
	unsigned char *pattern;         /* record contents */
	unsigned char *pend, *spare;    /* the log buffer clients append to, the writer's */
	uint64_t pend_len, pend_recs;
	uint64_t submitted, durable;    /* commit sequence numbers */
	unsigned active;                /* clients still running */
	bool writer_gone;               /* the writer has left: append nothing more */
	int failed;                     /* errno of a failed log write */
	uint64_t head;                  /* where the next group goes */
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct bench_hist *commit_lat;  /* one per client */
	struct tool_progress prog;
};

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
		t0 = sfs_now_ns();
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
		bench_hist_add(&s->commit_lat[idx], sfs_now_ns() - t0);
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

		wlen = (len + s->res.block - 1) / s->res.block * s->res.block;
		memset(buf + len, 0, wlen - len);                   /* pad the last block */
		off = s->head + wlen > s->res.log_size ? 0 : s->head;
		t0 = sfs_now_ns();
		n = pwrite(s->res.d->fd, buf, wlen, (off_t)off);
		err = n < 0 ? errno : (uint64_t)n != wlen ? EIO : 0;
		if (!err && fdatasync(s->res.d->fd) < 0)
			err = errno;
		t1 = sfs_now_ns();

		pthread_mutex_lock(&s->lock);
		if (err) {
			s->failed = err;
			if (n > 0)
				s->res.bytes_written += (uint64_t)n;
			atomic_store(&r->stop, true);
			pthread_cond_broadcast(&s->done);
			break;
		}
		bench_hist_add(&s->res.write_lat, t1 - t0);
		s->res.wraps += off != s->head;
		s->head = off + wlen;
		s->durable = upto;
		s->res.commits += recs;
		s->res.log_writes++;
		s->res.redo_bytes += len;
		s->res.bytes_written += wlen;
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
}

static void redo_worker(struct bench_run *r, unsigned idx, void *arg)
{
	if (idx == 0)
		log_writer(arg, r);
	else
		client(arg, r, idx - 1);
}

static void redo_tick(struct bench_run *r, void *arg)
{
	struct redo *s = arg;
	double secs = (double)(sfs_now_ns() - r->t0) / 1e9;
	uint64_t commits, writes;

	pthread_mutex_lock(&s->lock);
	commits = s->res.commits;
	writes = s->res.log_writes;
	pthread_mutex_unlock(&s->lock);
	tool_progress_draw(&s->prog, "redo: %.1f s of %.1f s  %.0f commits/s  %.0f log writes/s",
			   secs, r->seconds, commits / secs, writes / secs);
}

/* Check the parameters against the disk, fix the log's size (res.log_size: as asked, 0 for the
 * whole disk) and allocate the buffers; -1 (printed) to stop. */
static int redo_prepare(struct redo *s)
{
	uint64_t log_size = s->res.log_size;
	char a[32];

	for (unsigned b = 0; b < s->set.nblocks; b++) {
		s->res.block = s->blocks[b];
		if (s->res.block < s->res.d->logical) {
			tool_error("redo block %u is smaller than the disk's logical sector %u; a database would "
				   "refuse to start", s->res.block, s->res.d->logical);
			return -1;
		}
		if (s->res.block < s->res.d->physical)
			tool_cmd_error(&bench_cmd_redo, "note: redo block %u is smaller than the physical sector "
				       "%u: log writes that end inside a physical sector are read-modify-writes",
				       s->res.block, s->res.d->physical);
	}
	/* every client has at most one record pending; whole blocks of the largest redo block */
	s->cap = (uint64_t)s->res.clients * s->dist.b;
	for (unsigned b = 0; b < s->set.nblocks; b++)
		if (s->blocks[b] > s->res.block)
			s->res.block = s->blocks[b];
	s->cap = (s->cap + s->res.block - 1) / s->res.block * s->res.block;
	s->res.log_size = log_size && log_size < s->res.d->size ? log_size : s->res.d->size;
	s->res.log_size = s->res.log_size / s->res.block * s->res.block;
	if (s->res.log_size < s->cap) {
		tool_error("%s: the log (%s) is smaller than one group can be: %u clients with records "
			   "up to %" PRIu64 " bytes need %" PRIu64 " bytes", s->res.d->path,
			   tool_fmt_size(s->res.log_size, TOOL_SIZE_IEC, a, sizeof(a)), s->res.clients,
			   s->dist.b, s->cap);
		return -1;
	}
	s->pend = bench_buf_alloc(s->cap, s->res.block);
	s->spare = bench_buf_alloc(s->cap, s->res.block);
	s->pattern = bench_buf_alloc(MAX_RECORD + 4096, 8);
	s->commit_lat = calloc(s->res.clients, sizeof(*s->commit_lat));
	if (!s->commit_lat)
		tool_error("out of memory");
	return s->pend && s->spare && s->pattern && s->commit_lat ? 0 : -1;
}

enum { REDO_BLOCK, REDO_CLIENTS, REDO_TIME, REDO_DIST, REDO_LOG_SIZE, REDO_REPEAT };
static const struct tool_opt redo_opts[] = {
	[REDO_BLOCK] = { "redo-block", 0, TOOL_STRING },
	[REDO_CLIENTS] = { "clients", 0, TOOL_UINT, 1, 1024, .def = "4" },
	[REDO_TIME] = { "time", 0, TOOL_SECONDS, .def = "2" },
	[REDO_DIST] = { "record-dist", 0, TOOL_STRING, .def = "uniform:100-2000" },
	[REDO_LOG_SIZE] = { "log-size", 0, TOOL_SIZE, .min = 1 },
	[REDO_REPEAT] = { "repeat", 0, TOOL_UINT, 1, REDO_MAX_REPEAT, .def = "5" },
	{ NULL },
};

/* The parameters of the log, in item->data (struct redo). */
static int check_redo(const struct tool_cmd *self, struct tool_item *item)
{
	const struct tool_value *o = item->opt;
	struct redo *s = item->data;
	char list[128], *tok, *save = NULL;

	s->res.clients = (unsigned)o[REDO_CLIENTS].n;
	s->seconds = o[REDO_TIME].secs;
	s->res.dist_spec = o[REDO_DIST].arg;
	s->res.log_size = o[REDO_LOG_SIZE].n;
	s->set.repeat = (unsigned)o[REDO_REPEAT].n;
	if (!o[REDO_BLOCK].set)
		return tool_usage_error(self, "--redo-block is required (512 or 4096)");
	snprintf(list, sizeof(list), "%s", o[REDO_BLOCK].arg);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t block;

		if (sfs_parse_size(tok, &block) < 0 || !sfs_is_pow2(block) || block < 512 || block > 65536)
			return tool_usage_error(self, "--redo-block must be 512, 4096 or another power of two up to 64K");
		if (s->set.nblocks == REDO_MAX_BLOCKS)
			return tool_usage_error(self, "--redo-block: at most %d sizes", REDO_MAX_BLOCKS);
		s->blocks[s->set.nblocks++] = (unsigned)block;
	}
	if (!s->set.nblocks)
		return tool_usage_error(self, "--redo-block is required (512 or 4096)");
	if (parse_dist(s->res.dist_spec, &s->dist) < 0)
		return tool_usage_error(self, "invalid --record-dist '%s': use uniform:MIN-MAX, fixed:SIZE "
					"or exp:MEAN, sizes from 1 byte to 1M", s->res.dist_spec);
	return 0;
}

/* One run of the log with redo block `block` from a fresh start, into *out; -1 when threads
 * cannot be started, else 0 (r->interrupted, s->failed tell the rest). */
static int run_once(struct redo *s, unsigned block, struct redo_result *out, bool *interrupted)
{
	struct bench_run r = { .nthreads = s->res.clients + 1, .worker = redo_worker, .arg = s,
			       .seconds = s->seconds, .tick = redo_tick };
	struct redo_result fresh = { .d = s->res.d, .block = block, .clients = s->res.clients,
				     .log_size = s->res.log_size, .dist_spec = s->res.dist_spec };

	s->res = fresh;
	bench_hist_init(&s->res.write_lat);
	bench_hist_init(&s->res.commit_lat);
	for (unsigned i = 0; i < s->res.clients; i++)
		bench_hist_init(&s->commit_lat[i]);
	s->pend_len = s->pend_recs = s->submitted = s->durable = s->head = 0;
	s->writer_gone = false;
	s->active = s->res.clients;
	if (bench_run(&r) < 0)
		return -1;
	s->res.secs = bench_run_seconds(&r);
	s->res.interrupted = r.interrupted;
	for (unsigned i = 0; i < s->res.clients; i++)
		bench_hist_merge(&s->res.commit_lat, &s->commit_lat[i]);
	*out = s->res;
	*interrupted = r.interrupted;
	return 0;
}

/* Every repeat of every block, interleaved, then print; the exit status. */
static int run_log(struct redo *s, const struct tool_item *item)
{
	bool interrupted = false;
	int rc;

	for (unsigned k = 0; k < s->set.repeat && !interrupted && !s->failed; k++) {
		s->set.nrep = k + 1;
		for (unsigned j = 0; j < s->set.nblocks && !interrupted && !s->failed; j++) {
			unsigned b = (j + k) % s->set.nblocks;

			if (run_once(s, s->blocks[b], &s->set.runs[b][k], &interrupted) < 0)
				return 1;
		}
	}
	tool_progress_clear(&s->prog);
	rc = bench_figures(&redo_figures, &s->set, item);
	fflush(stdout);
	if (s->failed) {
		tool_error("%s: the log write failed: %s", s->res.d->path, strerror(s->failed));
		return 1;
	}
	if (interrupted)
		return bench_interrupted(rc, " after %.2f s: the figures cover that time", s->res.secs);
	return rc;
}

static int exec_redo(const struct tool_cmd *self, struct tool_item *item)
{
	struct redo *s = item->data;
	int rc = 1;

	(void)self;
	s->res.d = &((struct bench_target *)item->target)->disk;
	bench_begin(&s->prog);
	if (redo_prepare(s) == 0) {
		pthread_mutex_init(&s->lock, NULL);
		pthread_cond_init(&s->work, NULL);
		pthread_cond_init(&s->done, NULL);
		rc = run_log(s, item);
		pthread_cond_destroy(&s->done);
		pthread_cond_destroy(&s->work);
		pthread_mutex_destroy(&s->lock);
	}
	free(s->pend);
	free(s->spare);
	free(s->pattern);
	free(s->commit_lat);
	return rc;
}

TOOL_CMD(bench_cmd_redo, "redo", "--redo-block 512|4096[,...] [options] IMAGE",
	 "redo-log writer: group commit, fdatasync per log write, wastage",
	 .help = redo_help, .opts = redo_opts, .shared = { bench_opts_json, bench_opts_svg }, .args = { "IMAGE" },
	 .target = BENCH_TARGET_DISK, .data_size = sizeof(struct redo), .check = check_redo, .exec = exec_redo);
