/* SPDX-License-Identifier: MIT */
/*
 * sectorfs.c - the daemon: parse the command line, open (and lock) the
 * store, mount, serve, and unwind in reverse order.
 *
 *   sectorfs [FUSE options] [-o sector=,provisioning=,block_size=,nostats,pidfile=,nonempty]
 *            STORE MOUNTPOINT
 *
 * The mount point must be an empty directory that is not a mount point
 * already (core/mountpoint.c), unless -o nonempty: libfuse 3 no longer
 * checks, and a mount hides what is below it.  Then, unless -f, the daemon
 * forks (daemon.c): the process that serves
 * is the child from the start, and the parent exits only when the child
 * reports ready, or with its failure.  The store is opened before
 * mounting so that a second daemon on the same store fails without
 * touching the mount point.  Readiness: once mounted, the pid file (if
 * asked for) is written; then the loop starts, and when it answers the
 * kernel's INIT the daemon is ready: it reports what it serves ("serving
 * N images from STORE at MNT (K refused: see above)", the refusals having
 * been logged as the store was read; images still being eagerly zeroed,
 * which they are in the background, are counted too), then
 * sfs_daemon_ready: the parent
 * exits 0, logging moves from stderr to syslog.  SIGINT, SIGTERM and SIGHUP end
 * the loop; the mount is then removed and every image flushed before exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "fuse_version.h"
#include <fuse_lowlevel.h>

#include "bufpool.h"
#include "daemon.h"
#include "idle.h"
#include "model.h"
#include "mountpoint.h"
#include "ops.h"
#include "xport.h"
#include "units.h"

struct options {
	char *store;
	char *sector;
	char *provisioning;
	char *block_size;
	char *profile;
	char *pidfile;
	char *io_uring;
	unsigned max_background;
	char *max_open;
	int nostats;
	int buffered;
	int no_default_permissions;
	int no_zero_offload;
	int nonempty;
	int show_help;
	int show_version;
};

#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
	OPT("sector=%s", sector),
	OPT("provisioning=%s", provisioning),
	OPT("block_size=%s", block_size),
	OPT("profile=%s", profile),
	OPT("pidfile=%s", pidfile),
	OPT("max_background=%u", max_background),
	OPT("io_uring=%s", io_uring),
	OPT("max_open=%s", max_open),
	OPT("nostats", nostats),
	OPT("buffered", buffered),
	OPT("no_zero_offload", no_zero_offload),
	OPT("nodefault_permissions", no_default_permissions),
	OPT("nonempty", nonempty),
	OPT("-h", show_help),
	OPT("--help", show_help),
	OPT("-V", show_version),
	OPT("--version", show_version),
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s [options] STORE MOUNTPOINT\n"
	       "\n"
	       "Serve the disk images of STORE (raw files NAME with sidecars NAME.json) at\n"
	       "MOUNTPOINT, each behaving like a disk of its sector format and provisioning.\n"
	       "\n"
	       "sectorfs options:\n"
	       "    -o sector=FORMAT        512n, 512e or 4kn for images created in the mount (512n)\n"
	       "    -o provisioning=MODE    thin, zeroedthick or eagerzeroedthick for new images (thin)\n"
	       "    -o block_size=SIZE      allocation unit of new images, e.g. 64K, 1M (1M)\n"
	       "    -o no_zero_offload      new images zero by writing, not FALLOC_FL_ZERO_RANGE\n"
	       "    -o profile=NAME|PATH    device timing profile of new images: a shipped one\n"
	       "                            (sata-ssd, nvme-slow-small-writes, hdd-7200, ram)\n"
	       "                            or a profile JSON; requests complete no earlier\n"
	       "                            than that drive would complete them\n"
	       "    -o nostats              keep no statistics (no .stats directory)\n"
	       "    -o buffered             buffered I/O on the backing files (the host page\n"
	       "                            cache as a large volatile write cache) instead of\n"
	       "                            O_DIRECT\n"
	       "    -o pidfile=FILE         write the daemon's pid to FILE once the mount is up\n"
	       "    -o nonempty             mount even on a directory that is not empty or is\n"
	       "                            already a mount point (hiding what is there until\n"
	       "                            unmounted); without it such a mount point is refused\n"
	       "    -o max_open=N           at most N images with their files open at once (the\n"
	       "                            others are closed until used; default: as many as\n"
	       "                            the descriptor limit allows, at most 4096)\n"
	       "    -o max_threads=N        at most N worker threads (sectorfs default: 64)\n"
	       "    -o max_background=N     asynchronous requests the kernel may have in flight\n"
	       "                            (default: the number of worker threads, at least 12)\n"
	       "    -o io_uring=auto|on|off requests through FUSE over io_uring (Linux 6.14+,\n"
	       "                            fuse.enable_uring=Y): auto where the kernel offers it,\n"
	       "                            on or fail, off for /dev/fuse only (default: auto)\n"
	       "    -o max_idle_threads=N   keep at most N idle worker threads, the others exit\n"
	       "                            (sectorfs default: 10)\n"
	       "    -o nodefault_permissions  turn off the kernel's permission checks, which\n"
	       "                            sectorfs turns on by default (default_permissions)\n"
	       "    -h, --help              this help, then the FUSE options\n"
	       "    -V, --version           print the version\n"
	       "\n"
	       "Statistics: MOUNTPOINT/.stats/NAME (text, write \"reset\" to zero),\n"
	       "MOUNTPOINT/.stats/NAME.json, and every image's in the Prometheus text format\n"
	       "in MOUNTPOINT/.stats/metrics.  As a systemd service: sectorfs@INSTANCE, with\n"
	       "/etc/sectorfs/INSTANCE.conf.  See sectorfs(1) and sectorfs.json(5).\n"
	       "\n", prog);
	fuse_cmdline_help();
	fuse_lib_help(&(struct fuse_args)FUSE_ARGS_INIT(0, NULL));
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct options *o = data;

	if (key == FUSE_OPT_KEY_NONOPT && !o->store) {
		o->store = strdup(arg);
		return 0;
	}
	return 1;
}

/* Fill the defaults for new images from -o options; 0 or -EINVAL with a message printed. */
static int parse_defaults(const struct options *o, struct sfs_sidecar *d)
{
	const struct { const char *key, *text; } set[] = {
		{ "sector", o->sector }, { "provisioning", o->provisioning }, { "block_size", o->block_size },
		{ "zero_offload", o->no_zero_offload ? "false" : NULL },
	};
	struct sfs_sidecar_draft dr;
	char err[256];

	sfs_sidecar_draft_init(&dr, NULL);
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		if (set[i].text && sfs_sidecar_draft_set(&dr, set[i].key, set[i].text, err, sizeof(err)) < 0) {
			fprintf(stderr, "sectorfs: -o %s\n", err);
			return -EINVAL;
		}
	}
	if (o->profile) {
		struct sfs_profile p;

		if (strlen(o->profile) >= sizeof(d->profile)) {
			fprintf(stderr, "sectorfs: -o profile=%s: too long\n", o->profile);
			return -EINVAL;
		}
		if (sfs_profile_load(AT_FDCWD, o->profile, &p, err, sizeof(err)) < 0) {
			fprintf(stderr, "sectorfs: -o profile=%s: %s\n", o->profile, err);
			return -EINVAL;
		}
	}
	if (sfs_sidecar_draft_done(&dr, false, "-o", d, err, sizeof(err)) < 0) {
		fprintf(stderr, "sectorfs: %s\n", err);
		return -EINVAL;
	}
	if (o->profile)
		snprintf(d->profile, sizeof(d->profile), "%s", o->profile);
	return 0;
}

/* Make *path absolute, from the current directory, so that it names the
 * same file after the daemon moves to "/".  0 or -ENOMEM, -errno of getcwd. */
static int absolute_path(char **path)
{
	char *cwd, *abs;

	if ((*path)[0] == '/')
		return 0;
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return -errno;
	if (asprintf(&abs, "%s/%s", cwd, *path) < 0) {
		free(cwd);
		return -ENOMEM;
	}
	free(cwd);
	free(*path);
	*path = abs;
	return 0;
}

/* Write our pid to path through a temporary file of a name no one else
 * has (mkostemp) and rename(2), so a reader sees the whole pid or no file;
 * mode 0644 less the umask.  0 or -errno. */
static int write_pidfile(const char *path)
{
	char buf[32], tmp[PATH_MAX];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid()), fd, rc = 0;
	mode_t mask = umask(0);
	ssize_t w;

	umask(mask);
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644 & ~mask) < 0 || (w = write(fd, buf, (size_t)n)) < 0)
		rc = -errno;
	else if (w != n)
		rc = -EIO;
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

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct options o = { 0 };
	struct fuse_cmdline_opts copts = { 0 };
	struct sfs_store_opts sopts = { 0 };
	struct sfs_xport_opts xopts = { 0 };
	struct sfs_store *store = NULL;
	struct fuse *fuse = NULL;
	struct sfs_fs fs = { 0 };
	struct sfs_daemon daemon;
	struct sfs_idle *idle = NULL;
	struct start start = { &daemon, NULL, NULL, NULL, 0 };
	char err[1024], holder[4200], fsname[4200];
	int rc = 1, max_threads_given = 0, parent_status;
	unsigned threads;
	unsigned long max_open = 0;

	/* Read replies (page-aligned, up to 1 MiB, one per request: libfuse frees them) and
	 * libfuse's request buffer of each worker are mappings of their own, given back when
	 * freed: in the heap, freed page-aligned replies did not fit the next ones (the bytes
	 * split off to align them went to smaller allocations) and the arenas grew to 300 MB
	 * under 30 threads of 1 MiB I/O.  A fixed threshold also keeps glibc from raising it
	 * after the first free.  Few arenas, trimmed early, for the small allocations; what
	 * stays free once the mount is quiet is given back (idle.c).  Bounce and
	 * read-modify-write buffers come from the shared pool (core/bufpool.c). */
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
	mallopt(M_ARENA_MAX, ARENA_MAX);

	for (int i = 1; i < argc; i++)
		if (strstr(argv[i], "max_threads="))
			max_threads_given = 1;
	if (fuse_opt_parse(&args, &o, option_spec, opt_proc) < 0)
		goto out_args;
	if (o.show_version || o.show_help) {
		if (o.show_version)
			printf("sectorfs %s (libfuse %s)\n", PACKAGE_VERSION, fuse_pkgversion());
		else
			usage(argv[0]);
		rc = 0;
		goto out_args;
	}
	if (fuse_parse_cmdline(&args, &copts) < 0)
		goto out_args;
	if (!o.store || !copts.mountpoint) {
		fprintf(stderr, "usage: %s [options] STORE MOUNTPOINT  (see --help)\n", argv[0]);
		goto out_args;
	}
	/* a path names the same file from the store, where sidecars' paths start */
	if (o.profile && strchr(o.profile, '/') && absolute_path(&o.profile) < 0)
		goto out_args;
	if (parse_defaults(&o, &sopts.defaults) < 0)
		goto out_args;
	if (!o.io_uring || strcmp(o.io_uring, "auto") == 0) {
		xopts.uring = SFS_URING_AUTO;
	} else if (strcmp(o.io_uring, "on") == 0) {
		xopts.uring = SFS_URING_ON;
	} else if (strcmp(o.io_uring, "off") == 0) {
		xopts.uring = SFS_URING_OFF;
	} else {
		fprintf(stderr, "sectorfs: -o io_uring=%s: expected auto, on or off\n", o.io_uring);
		goto out_args;
	}
	if (o.max_open) {
		char *end;

		max_open = strtoul(o.max_open, &end, 10);
		if (!*o.max_open || *end || max_open == 0 || max_open > 1000000) {
			fprintf(stderr, "sectorfs: -o max_open=%s: expected a number of images from 1 to 1000000\n",
				o.max_open);
			goto out_args;
		}
	}
	if (o.pidfile && (rc = absolute_path(&o.pidfile)) < 0) {
		fprintf(stderr, "sectorfs: -o pidfile=%s: %s\n", o.pidfile, strerror(-rc));
		rc = 1;
		goto out_args;
	}
	/* Refused before anything starts: a mount here would hide what is there. */
	if (!o.nonempty && (rc = sfs_mountpoint_check(copts.mountpoint, err, sizeof(err))) < 0) {
		if (rc == -ENOTEMPTY || rc == -EBUSY)
			fprintf(stderr, "sectorfs: %s; -o nonempty mounts all the same\n", err);
		else
			fprintf(stderr, "sectorfs: %s\n", err);
		rc = 1;
		goto out_args;
	}

	openlog("sectorfs", LOG_PID, LOG_DAEMON);
	/* Unless -f the parent stops here, once the child is ready or has failed. */
	if ((rc = sfs_daemon_start(&daemon, copts.foreground, &parent_status)) < 0) {
		fprintf(stderr, "sectorfs: cannot go to the background: %s\n", strerror(-rc));
		rc = 1;
		goto out_daemon;
	}
	rc = 1;
	if (parent_status >= 0) {
		rc = parent_status;
		goto out_daemon;
	}

	threads = copts.singlethread ? 1 : max_threads_given ? copts.max_threads : 64;
	/* a ring of its own for each io_uring worker, and the eventfd that stops them */
	sopts.fd_budget = fd_budget((copts.clone_fd ? threads : 0) + (xopts.uring != SFS_URING_OFF ? threads + 1 : 0),
				    &start.fd_limit);
	if (max_open && max_open * (o.buffered ? 2 : 3) < sopts.fd_budget)
		sopts.fd_budget = (unsigned)(max_open * (o.buffered ? 2 : 3));
	/* a worker holds at most one bounce or read-modify-write buffer at a time */
	if (sfs_bufpool_shared())
		sfs_bufpool_set_keep(sfs_bufpool_shared(), threads);
	sopts.stats = !o.nostats;
	sopts.buffered = o.buffered;
	/* a new eagerzeroedthick image must not hold up the mount or the rest of the store */
	sopts.zero_background = true;
	sopts.log.fn = sfs_daemon_log;
	sopts.log.ctx = &daemon;
	snprintf(holder, sizeof(holder), "pid %ld, mounted at %s", (long)getpid(), copts.mountpoint);
	sopts.holder = holder;
	if (sfs_store_open(o.store, &sopts, &store, err, sizeof(err)) < 0) {
		fprintf(stderr, "sectorfs: %s\n", err);
		goto out_daemon;
	}
	fs.store = store;
	fs.stats = sopts.stats;
	fs.log = &sopts.log;
	fs.serving = on_serving;
	start.store = store;
	start.store_path = o.store;
	start.mountpoint = copts.mountpoint;
	fs.serving_ctx = &start;
	pthread_mutex_init(&fs.lock, NULL);
	/* Each worker can have one backing I/O in flight: let the kernel send
	 * that many asynchronous (background) requests, not its default 12. */
	fs.max_background = o.max_background ? o.max_background : threads < 12 ? 12 : threads;
	if (fs.max_background > 65535)
		fs.max_background = 65535;

	/* Rebuild the FUSE arguments: the defaults first, so the user's win. */
	snprintf(fsname, sizeof(fsname), "-ofsname=sectorfs:%s,subtype=sectorfs", o.store);
	fuse_opt_insert_arg(&args, 1, fsname);
	if (!o.no_default_permissions)
		fuse_opt_insert_arg(&args, 1, "-odefault_permissions");
	fuse = fuse_new(&args, &sfs_fs_ops, sizeof(sfs_fs_ops), &fs);
	if (!fuse)
		goto out_store;
	if (fuse_mount(fuse, copts.mountpoint) != 0)
		goto out_fuse;
	/* Our own loop: page-aligned write data, parallel direct writes (xport.c). */
	xopts.max_threads = threads;
	xopts.max_idle = copts.max_idle_threads != UINT_MAX ? copts.max_idle_threads : IDLE_THREADS;
	xopts.max_background = fs.max_background;
	xopts.log = &sopts.log;
	if ((rc = sfs_xport_install(fuse_get_session(fuse), &xopts)) < 0) {
		sfs_logf(&sopts.log, SFS_LOG_ERR, "cannot take over the session's I/O: %s", strerror(-rc));
		rc = 1;
		goto out_unmount;
	}
	/* A daemon started in the background by a script inherits SIGINT ignored,
	 * and libfuse only takes over signals left at their default. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out_unmount;
	if (o.pidfile && (rc = write_pidfile(o.pidfile)) < 0) {
		sfs_logf(&sopts.log, SFS_LOG_ERR, "%s: cannot write pid file: %s", o.pidfile, strerror(-rc));
		rc = 1;
		goto out_signals;
	}
	if (sfs_idle_start(QUIET_MS, &idle) < 0)
		sfs_logf(&sopts.log, SFS_LOG_WARN, "cannot start the thread that gives memory back when the "
			 "mount is quiet");
	/* the loop's init calls on_serving: the daemon is ready */
	rc = sfs_xport_loop(fuse);
	if (rc < 0)
		sfs_logf(&sopts.log, SFS_LOG_ERR, "the loop ended on an error: %s", strerror(-rc));
	rc = rc < 0 ? 1 : 0;
	if (!sfs_daemon_is_ready(&daemon)) {
		sfs_logf(&sopts.log, SFS_LOG_ERR, "the mount ended before it was ready");
		rc = 1;
	}
	if (o.pidfile)
		unlink(o.pidfile);
	sfs_idle_stop(idle);
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_fuse:
	fuse_destroy(fuse);
	sfs_fs_release_all(&fs);
out_store:
	if (sfs_store_close(store) < 0) {
		sfs_logf(&sopts.log, SFS_LOG_ERR, "flushing images at exit failed");
		rc = 1;
	}
out_daemon:
	sfs_daemon_end(&daemon);
	closelog();
out_args:
	free(copts.mountpoint);
	fuse_opt_free_args(&args);
	free(o.store);
	free(o.sector);
	free(o.provisioning);
	free(o.block_size);
	free(o.profile);
	free(o.pidfile);
	free(o.io_uring);
	free(o.max_open);
	return rc;
}
