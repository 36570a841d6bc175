/* SPDX-License-Identifier: MIT */
/*
 * sectorfs.c - the daemon: read the command line (options.c), open (and
 * lock) the store, mount, serve, and unwind in reverse order.
 *
 *   sectorfs [FUSE options] [-o sector=,provisioning=,block_size=,nostats,pidfile=,nonempty]
 *            STORE MOUNTPOINT
 *
 * The mount point must be an empty directory that is not a mount point
 * already (core/mount/mountpoint.c), unless -o nonempty: libfuse 3 no
 * longer checks, and a mount hides what is below it.  Then, unless -f,
 * the daemon forks (daemon.c): the process that serves is the child from
 * the start, and the parent exits only when the child reports ready, or
 * with its failure.  The store is opened before mounting so that a second
 * daemon on the same store fails without touching the mount point.
 * Readiness: once mounted, the pid file (if asked for) is written; then
 * the loop starts, and when it answers the kernel's INIT the daemon is
 * ready: it reports what it serves ("serving N images from STORE at MNT
 * (K refused: see above)", the refusals having been logged as the store
 * was read; images still being eagerly zeroed, which they are in the
 * background, are counted too), then sfs_daemon_ready: the parent exits
 * 0, logging moves from stderr to syslog.  SIGINT, SIGTERM and SIGHUP end
 * the loop; the mount is then removed and every image flushed before
 * exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "fuse_version.h"
#include <fuse_lowlevel.h>

#include "util/bufpool.h"
#include "daemon.h"
#include "util/fdio.h"
#include "idle.h"
#include "mount/mountpoint.h"
#include "ops.h"
#include "options.h"
#include "xport.h"

/* Write our pid to path through a temporary file of a name no one else
 * has (mkostemp) and rename(2), so a reader sees the whole pid or no file;
 * mode 0644 less the umask.  The pid is written by core's sfs_pwrite_all,
 * so a short write carries on and one that writes nothing is -EIO
 * (test_faults.c, short_write_is_eio).  0 or -errno. */
static int write_pidfile(const char *path)
{
	char buf[32], tmp[PATH_MAX];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid()), fd, rc = 0;
	mode_t mask = umask(0);

	umask(mask);
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644 & ~mask) < 0)
		rc = -errno;
	else
		rc = sfs_pwrite_all(fd, buf, (size_t)n, 0);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* Descriptors kept for everything but the images' own: stdio, the store's three, /dev/fuse,
 * syslog, the pid file, and the short-lived ones of sidecars, records and temporary files
 * (the store makes one change at a time); with clone_fd one /dev/fuse per worker thread too. */
#define FD_RESERVE 64u
/* The most descriptors images hold at once, however high the limit: an image open keeps its
 * map's bitmap and its locks in memory too. */
#define FD_BUDGET_MAX (3u * 4096u)

/* Raise the soft RLIMIT_NOFILE to the hard limit; what is left for images after the reserve and
 * the transport's own (at least 3: one image at a time), the limit in *limit. */
static unsigned fd_budget(unsigned transport_fds, unsigned long *limit)
{
	unsigned reserve = FD_RESERVE + transport_fds;
	struct rlimit rl;
	unsigned long lim;
	unsigned budget;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_cur = rl.rlim_max = 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl.rlim_cur = want;
	}
	lim = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1ul << 30) ? 1ul << 30 : (unsigned long)rl.rlim_cur;
	*limit = lim;
	budget = lim > 2ul * reserve ? (unsigned)(lim - reserve) : (unsigned)(lim / 2);
	if (budget > FD_BUDGET_MAX)
		budget = FD_BUDGET_MAX;
	return budget < 3 ? 3 : budget;
}

/* malloc: allocations this large are mappings of their own; arenas for the small ones. */
#define MMAP_THRESHOLD (128 << 10)
#define ARENA_MAX 4
/* Memory taken by a burst of I/O is given back once no request came for this long. */
#define QUIET_MS 2000u
/* Idle worker threads kept (libfuse's own default keeps every one it started).  Each worker
 * keeps glibc's per-thread cache of small chunks, which pins arena pages between the freed
 * page-aligned read replies where malloc_trim cannot reach them: 30 workers kept after a
 * load held 9-10 MiB that way, 10 kept 3 MiB, at the same IOPS.  A worker that exits
 * gives back its cache, its stack and its request buffer. */
#define IDLE_THREADS 10u

/* What on_serving reports on. */
struct start {
	struct sfs_daemon *daemon;
	struct sfs_store *store;
	const char *store_path, *mountpoint;
	unsigned long fd_limit;
};

/* The start-up summary: what is served, and whether lines above say what is not. */
static void report_start(const struct start *st)
{
	struct sfs_store_tally t;
	char msg[2 * PATH_MAX + 160], refused[48] = "", zeroing[64] = "";

	sfs_store_tally(st->store, &t);
	if (t.refused)
		snprintf(refused, sizeof(refused), "%zu refused: see above", t.refused);
	if (t.zeroing)
		snprintf(zeroing, sizeof(zeroing), "%zu eager zeroing in the background", t.zeroing);
	snprintf(msg, sizeof(msg), "serving %zu image%s from %s at %s%s%s%s%s%s", t.served,
		 t.served == 1 ? "" : "s", st->store_path, st->mountpoint, t.refused || t.zeroing ? " (" : "",
		 refused, t.refused && t.zeroing ? "; " : "", zeroing, t.refused || t.zeroing ? ")" : "");
	sfs_daemon_report(st->daemon, msg);
	snprintf(msg, sizeof(msg), "up to %zu images open at once (descriptor limit %lu)", t.open_max,
		 st->fd_limit);
	sfs_daemon_report(st->daemon, msg);
}

/* The loop answers the kernel's first request: the mount serves. */
static int on_serving(void *ctx)
{
	struct start *st = ctx;
	struct sfs_daemon *d = st->daemon;
	char msg[256];
	int rc;

	report_start(st);
	rc = sfs_daemon_ready(d);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "cannot detach (open /dev/null, chdir /): %s", strerror(-rc));
		sfs_daemon_log(d, SFS_LOG_ERR, msg);
	}
	return rc;
}

/* Everything the serving process sets up, in the order it does, and takes down in reverse. */
struct mount {
	struct sfs_options o;
	struct sfs_daemon daemon;
	unsigned threads;              /* worker threads, at most */
	struct sfs_store_opts sopts;
	struct sfs_store *store;
	struct sfs_fs fs;
	struct start start;
	struct fuse *fuse;
	bool mounted;
	struct sfs_xport_opts xopts;
	struct sfs_idle *idle;
	char holder[4200];
};

/* Read replies (page-aligned, up to 1 MiB, one per request: libfuse frees them) and
 * libfuse's request buffer of each worker are mappings of their own, given back when
 * freed: in the heap, freed page-aligned replies did not fit the next ones (the bytes
 * split off to align them went to smaller allocations) and the arenas grew to 300 MB
 * under 30 threads of 1 MiB I/O.  A fixed threshold also keeps glibc from raising it
 * after the first free.  Few arenas, trimmed early, for the small allocations; what
 * stays free once the mount is quiet is given back (idle.c).  Bounce and
 * read-modify-write buffers come from the shared pool (core/util/bufpool.c). */
static void tune_malloc(void)
{
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
	mallopt(M_ARENA_MAX, ARENA_MAX);
}

/* Refused before anything starts: a mount here would hide what is there.  0 or -errno, the
 * reason printed. */
static int check_mountpoint(const struct sfs_options *o)
{
	char err[1024];
	int rc;

	if (o->nonempty || (rc = sfs_mountpoint_check(o->cmdline.mountpoint, err, sizeof(err))) == 0)
		return 0;
	if (rc == -ENOTEMPTY || rc == -EBUSY)
		fprintf(stderr, "sectorfs: %s; -o nonempty mounts all the same\n", err);
	else
		fprintf(stderr, "sectorfs: %s\n", err);
	return rc;
}

/* Size the store for the worker threads and the descriptor limit, and open (and lock) it;
 * 0 or -errno, the reason printed. */
static int open_store(struct mount *m)
{
	const struct sfs_options *o = &m->o;
	struct sfs_store_opts *so = &m->sopts;
	char err[1024];
	int rc;

	m->threads = o->cmdline.singlethread ? 1 : o->max_threads_given ? o->cmdline.max_threads : 64;
	so->defaults = o->defaults;
	/* a ring of its own for each io_uring worker, and the eventfd that stops them */
	so->fd_budget = fd_budget((o->cmdline.clone_fd ? m->threads : 0) +
				  (o->uring != SFS_URING_OFF ? m->threads + 1 : 0), &m->start.fd_limit);
	if (o->max_open && o->max_open * (o->buffered ? 2 : 3) < so->fd_budget)
		so->fd_budget = (unsigned)(o->max_open * (o->buffered ? 2 : 3));
	/* a worker holds at most one bounce or read-modify-write buffer at a time */
	if (sfs_bufpool_shared())
		sfs_bufpool_set_keep(sfs_bufpool_shared(), m->threads);
	so->stats = !o->nostats;
	so->buffered = o->buffered;
	/* a new eagerzeroedthick image must not hold up the mount or the rest of the store */
	so->zero_background = true;
	so->log.fn = sfs_daemon_log;
	so->log.ctx = &m->daemon;
	snprintf(m->holder, sizeof(m->holder), "pid %ld, mounted at %s", (long)getpid(), o->cmdline.mountpoint);
	so->holder = m->holder;
	rc = sfs_store_open(o->store, so, &m->store, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "sectorfs: %s\n", err);
	return rc;
}

/* What the operations share, and what the start-up report tells. */
static void set_up_fs(struct mount *m)
{
	struct sfs_fs *fs = &m->fs;

	fs->store = m->store;
	fs->stats = m->sopts.stats;
	fs->log = &m->sopts.log;
	fs->serving = on_serving;
	m->start.daemon = &m->daemon;
	m->start.store = m->store;
	m->start.store_path = m->o.store;
	m->start.mountpoint = m->o.cmdline.mountpoint;
	fs->serving_ctx = &m->start;
	pthread_mutex_init(&fs->lock, NULL);
	/* Each worker can have one backing I/O in flight: let the kernel send
	 * that many asynchronous (background) requests, not its default 12. */
	fs->max_background = m->o.max_background ? m->o.max_background : m->threads < 12 ? 12 : m->threads;
	if (fs->max_background > 65535)
		fs->max_background = 65535;
}

/* The session, then the mount; 0, or -1 (libfuse said why). */
static int mount_fs(struct mount *m)
{
	char fsname[4200];

	/* Rebuild the FUSE arguments: the defaults first, so the user's win. */
	snprintf(fsname, sizeof(fsname), "-ofsname=sectorfs:%s,subtype=sectorfs", m->o.store);
	fuse_opt_insert_arg(&m->o.args, 1, fsname);
	if (!m->o.no_default_permissions)
		fuse_opt_insert_arg(&m->o.args, 1, "-odefault_permissions");
	m->fuse = fuse_new(&m->o.args, &sfs_fs_ops, sizeof(sfs_fs_ops), &m->fs);
	if (!m->fuse)
		return -1;
	if (fuse_mount(m->fuse, m->o.cmdline.mountpoint) != 0)
		return -1;
	m->mounted = true;
	return 0;
}

/* The loop, with the thread that gives memory back, until a signal or the unmount; then the
 * pid file removed.  The exit status: 1 if the loop failed or the mount never served. */
static int run_loop(struct mount *m)
{
	const struct sfs_log *log = &m->sopts.log;
	int rc;

	if (sfs_idle_start(QUIET_MS, m->store, &m->idle) < 0)
		sfs_logf(log, SFS_LOG_WARN, "cannot start the thread that gives memory back when the "
			 "mount is quiet");
	/* the loop's init calls on_serving: the daemon is ready */
	rc = sfs_xport_loop(m->fuse);
	if (rc < 0)
		sfs_logf(log, SFS_LOG_ERR, "the loop ended on an error: %s", strerror(-rc));
	rc = rc < 0 ? 1 : 0;
	if (!sfs_daemon_is_ready(&m->daemon)) {
		sfs_logf(log, SFS_LOG_ERR, "the mount ended before it was ready");
		rc = 1;
	}
	if (m->o.pidfile)
		unlink(m->o.pidfile);
	sfs_idle_stop(m->idle);
	return rc;
}

/* Serve the mount: our own transport, the signals that end it, the pid file, the loop.  The
 * exit status. */
static int serve(struct mount *m)
{
	struct fuse_session *se = fuse_get_session(m->fuse);
	const struct sfs_log *log = &m->sopts.log;
	int rc;

	/* Our own loop: page-aligned write data, parallel direct writes (xport.c). */
	m->xopts.uring = m->o.uring;
	m->xopts.loop = m->o.loop;
	m->xopts.max_threads = m->threads;
	m->xopts.max_idle = m->o.cmdline.max_idle_threads != UINT_MAX ? m->o.cmdline.max_idle_threads : IDLE_THREADS;
	m->xopts.max_background = m->fs.max_background;
	m->xopts.log = log;
	if ((rc = sfs_xport_install(se, &m->xopts)) < 0) {
		sfs_logf(log, SFS_LOG_ERR, "cannot take over the session's I/O: %s", strerror(-rc));
		return 1;
	}
	/* A daemon started in the background by a script inherits SIGINT ignored,
	 * and libfuse only takes over signals left at their default. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (fuse_set_signal_handlers(se) != 0)
		return 1;
	if (m->o.pidfile && (rc = write_pidfile(m->o.pidfile)) < 0) {
		sfs_logf(log, SFS_LOG_ERR, "%s: cannot write pid file: %s", m->o.pidfile, strerror(-rc));
		rc = 1;
	} else {
		rc = run_loop(m);
	}
	fuse_remove_signal_handlers(se);
	return rc;
}

/* Unmount, end the session, release the files left open, flush and close the store: each if
 * it was set up.  rc, or 1 if the images could not all be flushed. */
static int tear_down(struct mount *m, int rc)
{
	if (m->mounted)
		fuse_unmount(m->fuse);
	if (m->fuse) {
		fuse_destroy(m->fuse);
		sfs_fs_release_all(&m->fs);
	}
	if (sfs_store_close(m->store) < 0) {
		sfs_logf(&m->sopts.log, SFS_LOG_ERR, "flushing images at exit failed");
		rc = 1;
	}
	return rc;
}

/* The daemon from the fork on: in the parent, the child's status once it is ready or has
 * failed; in the serving process (or with -f), set up, serve, tear down.  The exit status. */
static int run_daemon(struct mount *m)
{
	int rc, status = 1, parent_status;

	openlog("sectorfs", LOG_PID, LOG_DAEMON);
	rc = sfs_daemon_start(&m->daemon, m->o.cmdline.foreground, &parent_status);
	if (rc < 0) {
		fprintf(stderr, "sectorfs: cannot go to the background: %s\n", strerror(-rc));
	} else if (parent_status >= 0) {
		status = parent_status;
	} else if (open_store(m) == 0) {
		set_up_fs(m);
		if (mount_fs(m) == 0)
			status = serve(m);
		status = tear_down(m, status);
	}
	sfs_daemon_end(&m->daemon);
	closelog();
	return status;
}

int main(int argc, char *argv[])
{
	static struct mount m;
	int status;

	tune_malloc();
	if (sfs_options_parse(argc, argv, &m.o) < 0)
		status = 1;
	else if (m.o.done)
		status = 0;
	else if (check_mountpoint(&m.o) < 0)
		status = 1;
	else
		status = run_daemon(&m);
	sfs_options_free(&m.o);
	return status;
}
