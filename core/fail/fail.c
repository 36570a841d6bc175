/* SPDX-License-Identifier: MIT */
/*
 * fail.c - one disk's failures (fail.h): the request hooks, power on and
 * off, triggers coming due, the cut's protocol over NAME.undo, the backing
 * and NAME.disk, and what an open finds after a crash.  The attributes
 * and the counters are attr.c.
 *
 * Locks, always taken in this order:
 *   pw  a rwlock (writers first): requests hold it shared from begin to
 *       end; a cut and a power-on hold it exclusively, so they wait for
 *       the requests in flight and no request runs during them;
 *   mu  a mutex over the disk state (power, the list), the cut's settings,
 *       the counters and the last cut.
 * `off` is read without a lock: a request that sees it set is refused at
 * once, and a cut sets it before it waits for pw, so that requests do not
 * keep arriving while it waits.  The list is looked at only when `nbad`
 * (its ranges) is not zero, so a disk without bad sectors pays one load.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "util/step.h"
#include "util/tmpfile.h"


/* ---- the cut ---- */

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int sfs_fail_save(struct sfs_fail *f, const struct sfs_diskstate *ds)
{
	return f->gone ? 0 : sfs_disk_save(f->state_fd, f->dname, ds);
}

/* Steps 3 to 5: roll back as ds.cut decided, empty the log, record the cut done. */
static int finish_cut(struct sfs_fail *f)
{
	struct sfs_wc_state st = { 0 };
	int rc = 0;

	if (f->wc)
		sfs_wc_state(f->wc, &st);
	if (st.entries)
		rc = sfs_wc_rollback(f->wc, &f->ds.cut);
	if (rc == 0)
		rc = sfs_step("cut", 3);
	if (rc == 0 && f->wc)
		rc = sfs_wc_drop(f->wc, true);
	if (rc == 0)
		rc = sfs_step("cut", 4);
	if (rc == 0) {
		f->ds.cut_pending = false;
		rc = sfs_fail_save(f, &f->ds);
		if (rc < 0)
			f->ds.cut_pending = true;
	}
	if (rc == 0)
		rc = sfs_step("cut", 5);
	return rc;
}

/* The state to commit: power off, cut c under way when there is a log to roll back, the
 * damaged sectors of rep added. */
static int commit_state(struct sfs_fail *f, const struct sfs_wc_cut *c, const struct sfs_wc_report *rep,
			bool pending, struct sfs_diskstate *nds)
{
	int rc;

	sfs_disk_init(nds, f->ds.bad.lss, f->ds.bad.pss, f->ds.bad.nsect);
	rc = sfs_bad_copy(&nds->bad, &f->ds.bad);
	for (size_t i = 0; rc == 0 && i < rep->damaged_lba.n; i++) {   /* up to the end of the disk */
		const struct sfs_ext *x = &rep->damaged_lba.v[i];
		uint64_t end = x->end < nds->bad.nsect ? x->end : nds->bad.nsect;

		if (x->start < end)
			rc = sfs_ext_set(&nds->bad.ext, x->start, end, SFS_BAD_DAMAGED);
	}
	nds->power_off = true;
	nds->cut_pending = pending;
	nds->cut = *c;
	if (rc == 0)
		rc = sfs_fail_save(f, nds);
	if (rc < 0)
		sfs_disk_free(nds);
	return rc;
}

int sfs_fail_cut_now(struct sfs_fail *f, const uint64_t *seed, const char *trigger, char *err, size_t errlen)
{
	struct sfs_wc_report rep;
	struct sfs_wc_state st = { 0 };
	struct sfs_diskstate nds;
	struct sfs_wc_cut c;
	uint64_t damaged0;
	int rc = 0;

	__atomic_store_n(&f->off, 1, __ATOMIC_SEQ_CST);
	pthread_rwlock_wrlock(&f->pw);
	pthread_mutex_lock(&f->mu);
	memset(&rep, 0, sizeof(rep));
	if (f->ds.power_off)
		goto out;
	c = f->cut;
	if (seed)
		c.seed = *seed;
	__atomic_store_n(&f->trig_writes, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->trig_flushes, 0, __ATOMIC_SEQ_CST);
	if (f->wc) {
		sfs_wc_state(f->wc, &st);
		rc = sfs_wc_sync_log(f->wc);
		if (rc == 0)
			rc = sfs_step("cut", 1);
		if (rc == 0)
			rc = sfs_wc_resolve(f->wc, &c, &rep);
	}
	if (rc == 0)
		rc = commit_state(f, &c, &rep, st.entries > 0, &nds);
	if (rc < 0) {                 /* the cut did not happen */
		sfs_wc_report_free(&rep);
		__atomic_store_n(&f->off, 0, __ATOMIC_SEQ_CST);
		sfs_err(err, errlen, rc, "%s: the power cut could not be recorded in %s: %s", f->name, f->dname,
			strerror(-rc));
		goto out;
	}
	damaged0 = sfs_bad_count(&f->ds.bad, SFS_BAD_DAMAGED);
	sfs_disk_free(&f->ds);
	f->ds = nds;
	__atomic_store_n(&f->nbad, f->ds.bad.ext.n, __ATOMIC_RELEASE);
	f->cnt.power_cuts++;
	f->cnt.lost_writes += rep.lost;
	f->cnt.torn_writes += rep.torn;
	f->cnt.damaged_sectors += sfs_bad_count(&f->ds.bad, SFS_BAD_DAMAGED) - damaged0;
	sfs_wc_report_free(&f->last.rep);
	f->last = (struct sfs_fail_cutinfo){ .number = f->cnt.power_cuts, .time_ns = real_ns(), .cut = c, .rep = rep };
	snprintf(f->last.trigger, sizeof(f->last.trigger), "%s", trigger);
	rc = sfs_step("cut", 2);
	if (rc == 0)
		rc = finish_cut(f);
	if (rc < 0)
		sfs_err(err, errlen, rc, "%s: the power is off, but the cut is not yet applied whole (%s): "
			"power on, or the next start, finishes it", f->name, strerror(-rc));
	sfs_logf(&f->log, SFS_LOG_INFO,
		 "%s: power cut (%s, seed %" PRIu64 "): %" PRIu64 " unflushed writes, %" PRIu64 " kept, %" PRIu64
		 " lost, %" PRIu64 " torn, %" PRIu64 " sectors damaged", f->name, trigger, c.seed, rep.unflushed,
		 rep.kept, rep.lost, rep.torn, sfs_ext_count(&rep.damaged_lba, ~0u));
out:
	pthread_mutex_unlock(&f->mu);
	pthread_rwlock_unlock(&f->pw);
	return rc;
}

int sfs_fail_power_on(struct sfs_fail *f, char *err, size_t errlen)
{
	int rc = 0;

	pthread_rwlock_wrlock(&f->pw);
	pthread_mutex_lock(&f->mu);
	__atomic_store_n(&f->trig_writes, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->trig_flushes, 0, __ATOMIC_SEQ_CST);
	if (!f->ds.power_off)
		goto out;
	if (f->ds.cut_pending && (rc = finish_cut(f)) < 0) {
		sfs_err(err, errlen, rc, "%s: the power cut could not be finished: %s", f->name, strerror(-rc));
		goto out;
	}
	f->ds.power_off = false;
	rc = sfs_fail_save(f, &f->ds);
	if (rc < 0) {
		f->ds.power_off = true;
		sfs_err(err, errlen, rc, "%s: power on could not be recorded in %s: %s", f->name, f->dname,
			strerror(-rc));
		goto out;
	}
	__atomic_store_n(&f->off, 0, __ATOMIC_SEQ_CST);
out:
	pthread_mutex_unlock(&f->mu);
	pthread_rwlock_unlock(&f->pw);
	return rc;
}

/* ---- open and close ---- */

/* Open the cache's log: a damaged one with no cut under way is removed (what it held is in the
 * backing already) and made again. */
static int open_cache(struct sfs_fail *f, char *err, size_t errlen)
{
	int rc = sfs_wc_open(&f->cfg.wc, &f->b, f->state_fd, f->uname, &f->wc, err, errlen);

	if (rc != -EUCLEAN || f->ds.cut_pending)
		return rc;
	sfs_logf(&f->log, SFS_LOG_WARN, "%s: %s: removed: not an undo log (its header is damaged); "
		 "every write it held is kept", f->name, f->uname);
	rc = sfs_remove_durably(f->state_fd, f->uname);
	return rc < 0 ? sfs_err(err, errlen, rc, "%s: %s", f->uname, strerror(-rc))
		      : sfs_wc_open(&f->cfg.wc, &f->b, f->state_fd, f->uname, &f->wc, err, errlen);
}

/* Settle what the log holds at open: finish a cut under way, or keep what a crash left. */
static int settle(struct sfs_fail *f, char *err, size_t errlen)
{
	struct sfs_wc_state st = { 0 };
	struct sfs_wc_report rep;
	int rc;

	if (f->wc)
		sfs_wc_state(f->wc, &st);
	if (f->ds.cut_pending) {
		if (f->wc && (rc = sfs_wc_resolve(f->wc, &f->ds.cut, &rep)) == 0) {
			sfs_logf(&f->log, SFS_LOG_WARN, "%s: finishing the power cut a crash interrupted (seed %" PRIu64
				 "): %" PRIu64 " unflushed writes, %" PRIu64 " lost, %" PRIu64 " torn", f->name,
				 f->ds.cut.seed, rep.unflushed, rep.lost, rep.torn);
			sfs_wc_report_free(&rep);
		}
		rc = finish_cut(f);
		return rc < 0 ? sfs_err(err, errlen, rc, "%s: the power cut a crash interrupted could not be "
					"finished: %s", f->name, strerror(-rc)) : 0;
	}
	if (!st.loaded)
		return 0;
	rc = sfs_wc_keep(f->wc);
	if (rc < 0)
		return sfs_err(err, errlen, rc, "%s: the writes of %s could not be kept: %s", f->name, f->uname,
			       strerror(-rc));
	f->cnt.kept_at_start = st.writes;
	sfs_logf(&f->log, SFS_LOG_WARN, "%s: the daemon stopped with %" PRIu64 " unflushed writes (%" PRIu64
		 " bytes) in the volatile write cache: all are kept (a daemon crash is not a power cut)", f->name,
		 st.writes, st.cached_bytes);
	return 0;
}

int sfs_fail_open(int state_fd, const char *name, const struct sfs_fail_config *cfg, const struct sfs_wc_backing *b,
		  const struct sfs_log *log, struct sfs_fail **out, char *err, size_t errlen)
{
	struct sfs_fail *f;
	pthread_rwlockattr_t ra;
	struct stat st;
	bool have_log;
	int rc;

	assert(cfg->wc.lss && cfg->size % cfg->wc.lss == 0 && b->read && b->write && b->sync);
	rc = sfs_wc_config_check(&cfg->wc, name, err, errlen);
	if (rc < 0)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return sfs_err(err, errlen, -ENOMEM, "%s: out of memory", name);
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->dname, sizeof(f->dname), "%s" SFS_DISK_SUFFIX, name);
	snprintf(f->uname, sizeof(f->uname), "%s" SFS_UNDO_SUFFIX, name);
	f->state_fd = state_fd;
	f->cfg = *cfg;
	f->b = *b;
	f->log = log ? *log : (struct sfs_log){ 0 };
	f->cut = cfg->cut;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&f->pw, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&f->mu, NULL);
	sfs_disk_init(&f->ds, cfg->wc.lss, cfg->wc.pss, cfg->size / cfg->wc.lss);
	rc = sfs_disk_load(state_fd, f->dname, &f->ds, err, errlen);
	if (rc == -ENOENT)
		rc = 0;
	have_log = fstatat(state_fd, f->uname, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
	if (rc == 0 && (cfg->wc.mode == SFS_WC_VOLATILE || have_log))
		rc = open_cache(f, err, errlen);
	if (rc == 0)
		rc = settle(f, err, errlen);
	if (rc == 0 && f->wc && cfg->wc.mode == SFS_WC_NONE) {   /* only there to be settled */
		sfs_wc_close(f->wc);
		f->wc = NULL;
		rc = sfs_remove_durably(state_fd, f->uname);
		if (rc < 0)
			sfs_err(err, errlen, rc, "%s: %s", f->uname, strerror(-rc));
	}
	if (rc < 0) {
		sfs_wc_close(f->wc);
		f->wc = NULL;
		sfs_disk_free(&f->ds);
		pthread_rwlock_destroy(&f->pw);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return rc;
	}
	f->off = f->ds.power_off;
	f->nbad = f->ds.bad.ext.n;
	if (f->off)
		sfs_logf(&f->log, SFS_LOG_INFO, "%s: the power is off (user.sectorfs.power): I/O fails with EIO "
			 "until it is set on", name);
	*out = f;
	return 0;
}

int sfs_fail_close(struct sfs_fail *f)
{
	struct sfs_wc_state st = { 0 };
	int rc = 0;

	if (f->wc && !f->ds.cut_pending && !f->gone) {   /* a cut under way is finished by the next open */
		sfs_wc_state(f->wc, &st);
		if (st.entries)
			rc = sfs_wc_keep(f->wc);
		sfs_wc_close(f->wc);
		if (rc == 0)
			rc = sfs_remove_durably(f->state_fd, f->uname);
	} else {
		sfs_wc_close(f->wc);
	}
	sfs_wc_report_free(&f->last.rep);
	sfs_disk_free(&f->ds);
	pthread_rwlock_destroy(&f->pw);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return rc;
}

/* ---- requests ---- */

/* A read of an unreadable sector: -EIO with the sector in io, else 0. */
static int check_read(struct sfs_fail *f, struct sfs_fail_io *io)
{
	int rc;

	if (!__atomic_load_n(&f->nbad, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&f->mu);
	rc = sfs_bad_check_read(&f->ds.bad, io->off, io->len, &io->bad_lba, &io->bad_kind);
	if (rc < 0)
		f->cnt.media_errors++;
	pthread_mutex_unlock(&f->mu);
	return rc;
}

int sfs_fail_begin(struct sfs_fail *f, struct sfs_fail_io *io)
{
	int rc = 0;

	assert(io->op <= SFS_FAIL_ZERO && (io->op == SFS_FAIL_FLUSH || io->op == SFS_FAIL_READ || io->len));
	io->bad_kind = 0;
	if (__atomic_load_n(&f->off, __ATOMIC_ACQUIRE))
		return -EIO;
	pthread_rwlock_rdlock(&f->pw);
	if (__atomic_load_n(&f->off, __ATOMIC_ACQUIRE))
		rc = -EIO;
	else if (io->op == SFS_FAIL_READ)
		rc = check_read(f, io);
	else if (io->op == SFS_FAIL_FLUSH)
		io->mark = f->wc ? sfs_wc_flush_mark(f->wc) : 0;
	else if (f->wc && io->len)
		rc = sfs_wc_write(f->wc, io->off, io->len, io->op == SFS_FAIL_WRITE ? io->flags : SFS_WC_ZERO);
	if (rc < 0)
		pthread_rwlock_unlock(&f->pw);
	return rc;
}

/* A completed write, discard or write-zeroes heals what it covered. */
static void heal(struct sfs_fail *f, const struct sfs_fail_io *io)
{
	bool changed = false;
	int rc;

	if (!__atomic_load_n(&f->nbad, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&f->mu);
	rc = sfs_bad_heal(&f->ds.bad, io->off, io->len, &changed);
	if (rc == 0 && changed)
		rc = sfs_fail_save(f, &f->ds);
	__atomic_store_n(&f->nbad, f->ds.bad.ext.n, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&f->mu);
	if (rc < 0)
		sfs_logf(&f->log, SFS_LOG_WARN, "%s: the bad sectors a write healed are not saved in %s: %s "
			 "(the next change saves them)", f->name, f->dname, strerror(-rc));
}

/* Count one down on trigger t; true when it came due now. */
static bool due(int64_t *t)
{
	int64_t v = __atomic_load_n(t, __ATOMIC_ACQUIRE);

	while (v > 0)
		if (__atomic_compare_exchange_n(t, &v, v - 1, false, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
			return v == 1;
	return false;
}

void sfs_fail_end(struct sfs_fail *f, struct sfs_fail_io *io, int rc)
{
	bool fire = false;
	char trig[SFS_FAIL_VALUE_MAX], msg[256];

	if (rc >= 0 && io->op == SFS_FAIL_FLUSH && f->wc) {
		int r = sfs_wc_flushed(f->wc, io->mark);

		if (r < 0)
			sfs_logf(&f->log, SFS_LOG_WARN, "%s: %s: %s", f->name, f->uname, strerror(-r));
	}
	if (rc >= 0 && io->op != SFS_FAIL_READ && io->op != SFS_FAIL_FLUSH)
		heal(f, io);
	if (rc >= 0 && (io->op == SFS_FAIL_WRITE ? due(&f->trig_writes)
						 : io->op == SFS_FAIL_FLUSH && due(&f->trig_flushes))) {
		fire = true;
		__atomic_store_n(&f->off, 1, __ATOMIC_SEQ_CST);   /* nothing after this request gets in */
	}
	pthread_rwlock_unlock(&f->pw);
	if (!fire)
		return;
	pthread_mutex_lock(&f->mu);
	snprintf(trig, sizeof(trig), "%s", f->trig);
	pthread_mutex_unlock(&f->mu);
	if (sfs_fail_cut_now(f, NULL, trig, msg, sizeof(msg)) < 0)
		sfs_logf(&f->log, SFS_LOG_ERR, "%s (%s)", msg, trig);
}

/* ---- the store's moves ---- */

void sfs_fail_pause(struct sfs_fail *f)
{
	pthread_rwlock_wrlock(&f->pw);
	pthread_mutex_lock(&f->mu);
}

void sfs_fail_resume(struct sfs_fail *f, const char *name)
{
	if (name && !f->gone) {
		snprintf(f->name, sizeof(f->name), "%s", name);
		snprintf(f->dname, sizeof(f->dname), "%s" SFS_DISK_SUFFIX, name);
		snprintf(f->uname, sizeof(f->uname), "%s" SFS_UNDO_SUFFIX, name);
		if (f->wc)
			sfs_wc_set_name(f->wc, f->uname);
	}
	pthread_mutex_unlock(&f->mu);
	pthread_rwlock_unlock(&f->pw);
}

void sfs_fail_detach(struct sfs_fail *f)
{
	f->gone = true;
	sfs_wc_close(f->wc);
	f->wc = NULL;
}

static bool has_file(int dirfd, const char *name, const char *suffix)
{
	char fname[SFS_FILE_NAME_LEN];
	struct stat st;

	snprintf(fname, sizeof(fname), "%s%s", name, suffix);
	return fstatat(dirfd, fname, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int sfs_fail_cover_files(int statefd, const char *from, const char *to, uint32_t lss, uint32_t pss)
{
	char fname[SFS_FILE_NAME_LEN], *text = NULL;
	struct sfs_diskstate ds;
	struct sfs_undo_hdr h = { .g = { .lss = lss, .pss = pss, .awu = pss, .rmw_power_safe = lss == pss } };
	size_t len;
	int rc = 0, fd;

	if (has_file(statefd, to, SFS_DISK_SUFFIX) && !has_file(statefd, from, SFS_DISK_SUFFIX)) {
		sfs_disk_init(&ds, lss, pss, 0);
		rc = sfs_disk_encode(&ds, &text, &len);
		snprintf(fname, sizeof(fname), "%s" SFS_DISK_SUFFIX, from);
		if (rc == 0)
			rc = sfs_write_file_atomic(statefd, statefd, fname, text, len, 0600);
		free(text);
		sfs_disk_free(&ds);
	}
	if (rc == 0 && has_file(statefd, to, SFS_UNDO_SUFFIX) && !has_file(statefd, from, SFS_UNDO_SUFFIX)) {
		snprintf(fname, sizeof(fname), "%s" SFS_UNDO_SUFFIX, from);
		fd = sfs_undo_open(statefd, fname, true);
		rc = fd < 0 ? fd : sfs_undo_reset(fd, &h, 0, true);
		if (fd >= 0)
			close(fd);
		if (rc == 0 && fsync(statefd) < 0)
			rc = -errno;
	}
	return rc;
}

static int count_entry(void *ctx, const struct sfs_undo_rec *r)
{
	if (r->kind == SFS_UNDO_WRITE)
		++*(uint64_t *)ctx;
	return 0;
}

int sfs_fail_peek(int statefd, const char *name, uint32_t lss, uint32_t pss, uint64_t size,
		  struct sfs_diskstate *ds, uint64_t *writes, char *err, size_t errlen)
{
	char fname[SFS_FILE_NAME_LEN];
	struct sfs_undo_hdr h;
	long n = 0;
	int fd, rc;

	*writes = 0;
	sfs_disk_init(ds, lss, pss, size / lss);
	snprintf(fname, sizeof(fname), "%s" SFS_DISK_SUFFIX, name);
	rc = sfs_disk_load(statefd, fname, ds, err, errlen);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	snprintf(fname, sizeof(fname), "%s" SFS_UNDO_SUFFIX, name);
	fd = sfs_undo_open(statefd, fname, false);
	if (fd == -ENOENT)
		return 0;
	rc = fd < 0 ? fd : sfs_undo_read_hdr(fd, &h);
	if (rc == 0)
		n = sfs_undo_scan(fd, &h, count_entry, writes, NULL);
	if (fd >= 0)
		close(fd);
	if (rc == -ENODATA)
		return 0;                  /* just made, never written */
	if (rc == 0 && n < 0)
		rc = (int)n;
	if (rc < 0) {
		sfs_disk_free(ds);
		return sfs_err(err, errlen, rc, "%s: %s", fname,
			       rc == -EUCLEAN ? "not an undo log (its header is damaged)" : strerror(-rc));
	}
	return 0;
}
