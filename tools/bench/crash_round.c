/* SPDX-License-Identifier: MIT */
/*
 * crash_round.c - one round of the crash explorer (crash.h):
 *
 *   fresh image      NAME.crash-XXXXXX-R from the snapshot (crash_image.c)
 *   arm              power_seed, power_cut_policy, the trigger
 *   [--loop]         a loop device over it, the image's logical sector
 *   workload         sh -c CMD in a process group of its own; the power
 *                    is watched every 5 ms: when it goes (the trigger, or
 *                    the explorer's own cut at a time or at the end), the
 *                    whole group is killed at once: the machine died
 *   [--loop]         the filesystems on the device unmounted (after a cut
 *                    their writes fail: what the page cache held is
 *                    lost), the device detached
 *   power on         the cut's report read from the image's statistics
 *   [--loop]         a new loop device
 *   check            sh -c CMD: exit 0 passes, anything else fails
 *   undo             processes, mounts, device, image, scratch directory
 *
 * The dry run is a round without a cut: the workload runs to its end, the
 * filesystems it left mounted are unmounted in order, and the check must
 * pass; its writes and flushes (the image's counters as the workload
 * exits) size the sample.
 *
 * Both commands get the round in their environment: SECTORFS_CRASH_DISK
 * (the loop device, or the image), SECTORFS_CRASH_IMAGE (the image),
 * SECTORFS_CRASH_DIR (a scratch directory outside the disk that the
 * workload and the check of one round share: where a workload logs what
 * it was told is durable), SECTORFS_CRASH_SECTOR (the logical sector),
 * SECTORFS_CRASH_PHASE (workload or check), SECTORFS_CRASH_TRIGGER,
 * SECTORFS_CRASH_SEED, SECTORFS_CRASH_ROUND and, for the check,
 * SECTORFS_CRASH_CUT (1 when the power was cut, 0 in the dry run).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"
#include "testbed.h"

#define POLL_NS 5000000ull

static void nap(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* In the child: the environment of the round, then sh -c cmd; never returns. */
static void exec_cmd(struct crash *c, const struct crash_point *p, const char *cmd, const char *phase,
		     const char *disk, const char *out, bool cut)
{
	char v[64];
	int fd;

	setpgid(0, 0);
	if ((fd = open("/dev/null", O_RDONLY)) >= 0)
		dup2(fd, STDIN_FILENO);
	if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	setenv("SECTORFS_CRASH_DISK", disk, 1);
	setenv("SECTORFS_CRASH_IMAGE", c->rpath, 1);
	setenv("SECTORFS_CRASH_DIR", c->rdir, 1);
	setenv("SECTORFS_CRASH_PHASE", phase, 1);
	setenv("SECTORFS_CRASH_TRIGGER", crash_trigger(p, v, sizeof(v)), 1);
	snprintf(v, sizeof(v), "%" PRIu64, p->seed);
	setenv("SECTORFS_CRASH_SEED", v, 1);
	snprintf(v, sizeof(v), "%u", c->round);
	setenv("SECTORFS_CRASH_ROUND", v, 1);
	snprintf(v, sizeof(v), "%u", c->img.logical);
	setenv("SECTORFS_CRASH_SECTOR", v, 1);
	if (strcmp(phase, "check") == 0)
		setenv("SECTORFS_CRASH_CUT", cut ? "1" : "0", 1);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	fprintf(stderr, "sectorfs-bench crash: cannot run /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* Start cmd for phase; the pid (c->child), or -1 (printed). */
static pid_t spawn(struct crash *c, const struct crash_point *p, const char *cmd, const char *phase,
		   const char *disk, const char *out, bool cut)
{
	pid_t pid = fork();

	if (pid < 0) {
		tool_error("cannot start the %s: %s", phase, strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_cmd(c, p, cmd, phase, disk, out, cut);
	setpgid(pid, pid);           /* as the child does: whoever runs first */
	c->child = pid;
	return pid;
}

/* Wait until no process of group pgid is left, reaping those orphaned to us (the explorer is
 * their subreaper): a process killed inside a system call (an umount under way) finishes the
 * call first, and what it writes must land before the power comes back. */
static void wait_group(pid_t pgid)
{
	for (int ms = 0; kill(-pgid, 0) == 0; ms += 5) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (ms && ms % 60000 == 0)
			tool_error("processes of the command (group %ld) still run %d s after SIGKILL (stuck in "
				   "the kernel?); waiting, Ctrl-C gives up", (long)pgid, ms / 1000);
		if (tool_interrupted && ms >= 1000)
			return;
		nap(POLL_NS);
	}
}

/* Kill the child's process group, reap the child and wait for the rest of the group; the
 * child's exit status (128 + signal), or st when it had exited already (c->child 0, group g). */
static int kill_group(struct crash *c, pid_t g, int st)
{
	if (c->child) {
		kill(-c->child, SIGKILL);
		while (waitpid(c->child, &st, 0) < 0 && errno == EINTR)
			;
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		c->child = 0;
	} else if (g) {
		kill(-g, SIGKILL);
	}
	if (g)
		wait_group(g);
	return st;
}

static int kill_child(struct crash *c)
{
	return kill_group(c, c->child, 0);
}

enum end { END_EXITED, END_CUT, END_TIMEOUT, END_INTERRUPTED, END_ERROR };

/* Wait for the child of point p's round (the workload, else the check), drawing the progress
 * line and, for the workload, watching for the cut of p and making the explorer's own at its
 * time.  The child is gone when it returns; *status its exit status. */
static enum end watch(struct crash *c, const struct crash_point *p, bool workload, int *status)
{
	const char *what = workload ? "workload" : "check";
	uint64_t t0 = sfs_now_ns(), limit = (uint64_t)(c->timeout * 1e9);
	char trig[64];
	int st;

	crash_trigger(p, trig, sizeof(trig));
	for (;;) {
		uint64_t el = sfs_now_ns() - t0;
		pid_t r = waitpid(c->child, &st, WNOHANG);

		if (r == c->child) {
			pid_t g = c->child;

			c->child = 0;
			/* what it left running in its group goes with it */
			*status = kill_group(c, g, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			return END_EXITED;
		}
		if (tool_interrupted) {
			*status = kill_child(c);
			return END_INTERRUPTED;
		}
		if (limit && el >= limit) {
			*status = kill_child(c);
			return END_TIMEOUT;
		}
		if (workload && p->kind == CRASH_SECONDS && (double)el / 1e9 >= p->at) {
			if (crash_set_attr(c, "power", "off") < 0) {
				*status = kill_child(c);
				return END_ERROR;
			}
			*status = kill_child(c);
			return END_CUT;
		}
		if (workload && (p->kind == CRASH_WRITES || p->kind == CRASH_FLUSHES) && crash_power_on(c) == 0) {
			*status = kill_child(c);
			return END_CUT;
		}
		if (c->npts)
			tool_progress_draw(&c->prog, "crash: round %u of %u  %s  %s %.1f s  %u failing so far",
					   c->round, c->npts, trig, what, (double)el / 1e9, c->nfailed);
		else
			tool_progress_draw(&c->prog, "crash: %s  %s %.1f s", c->replay ? "replay" : "dry run", what,
					   (double)el / 1e9);
		nap(POLL_NS);
	}
}

/* The end of file path (the last len - 1 bytes) into tail, its last non-empty line into why. */
static void read_tail(const char *path, char *tail, size_t len, char *why, size_t wlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n = 0;
	char *e, *s;

	tail[0] = why[0] = '\0';
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0)
		n = pread(fd, tail, len - 1, st.st_size > (off_t)len - 1 ? st.st_size - (off_t)len + 1 : 0);
	close(fd);
	tail[n > 0 ? n : 0] = '\0';
	e = tail + strlen(tail);
	while (e > tail && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'))
		e--;
	for (s = e; s > tail && s[-1] != '\n'; s--)
		;
	snprintf(why, wlen, "%.*s", (int)(e - s), s);
}

/* Unmount the device's filesystems and detach it; -1 (printed). */
static int loop_release(struct crash *c)
{
	char err[PATH_MAX + 200];
	int rc = 0;

	if (c->lo.fd < 0)
		return 0;
	if (loopdev_unmount_all(&c->lo, err, sizeof(err)) < 0) {
		tool_error("%s", err);
		rc = -1;
	}
	if (loopdev_detach(&c->lo, err, sizeof(err)) < 0) {
		tool_error("%s", err);
		rc = -1;
	}
	return rc;
}

/* The disk the commands get: a new loop device over the round's image, or the image. */
static const char *disk_of(struct crash *c)
{
	char err[PATH_MAX + 200];

	if (!c->loop)
		return c->rpath;
	if (loopdev_attach(&c->lo, c->rpath, c->img.logical, err, sizeof(err)) < 0) {
		tool_error("%s", err);
		return NULL;
	}
	return c->lo.path;
}

/* The image's writes and flushes (less what *p held: the counts before the workload), and
 * when report the cut's report, into p. */
static void take_counts(struct crash *c, struct crash_point *p, bool report)
{
	json_t *j = crash_round_stats(c), *lc;

	if (!j)
		return;
	if (!report) {
		p->writes = json_integer_value(json_object_get(j, "writes")) - p->writes;
		p->flushes = json_integer_value(json_object_get(j, "flushes")) - p->flushes;
	} else if ((lc = json_object_get(json_object_get(j, "failures"), "last_cut")) && json_is_object(lc)) {
		p->unflushed = json_integer_value(json_object_get(lc, "unflushed_writes"));
		p->kept = json_integer_value(json_object_get(lc, "kept_writes"));
		p->lost = json_integer_value(json_object_get(lc, "lost_writes"));
		p->torn = json_integer_value(json_object_get(lc, "torn_writes"));
		p->damaged = json_integer_value(json_object_get(lc, "damaged_sectors"));
		json_decref(p->lba);
		p->lba = json_pack("{sOsOsO}", "lost_lba", json_object_get(lc, "lost_lba"), "torn_lba",
				   json_object_get(lc, "torn_lba"), "damaged_lba", json_object_get(lc, "damaged_lba"));
	}
	json_decref(j);
}

/* Arm the cut of p and run the workload until it exits or the power goes; 0, 1 interrupted,
 * -1 (printed). */
static int run_workload(struct crash *c, struct crash_point *p)
{
	char trig[64], v[32], out[PATH_MAX + 32];
	const char *disk;
	enum end e;

	if (p->kind != CRASH_NONE) {
		snprintf(v, sizeof(v), "%" PRIu64, p->seed);
		if (crash_set_attr(c, "power_seed", v) < 0 ||
		    (c->policy && crash_set_attr(c, "power_cut_policy", c->policy) < 0))
			return -1;
	}
	if (!(disk = disk_of(c)))
		return -1;
	if ((p->kind == CRASH_WRITES || p->kind == CRASH_FLUSHES) &&
	    crash_set_attr(c, "power", crash_trigger(p, trig, sizeof(trig))) < 0)
		return -1;
	/* a loop device's set-up flushes its file: the workload's counts start after it, as the
	 * trigger's do */
	p->writes = p->flushes = 0;
	take_counts(c, p, false);
	snprintf(out, sizeof(out), "%s/workload.out", c->tmp);
	if (spawn(c, p, c->workload, "workload", disk, out, false) < 0)
		return -1;
	e = watch(c, p, true, &p->workload_status);
	if (e == END_INTERRUPTED)
		return 1;
	if (e == END_ERROR)
		return -1;
	p->workload_timeout = e == END_TIMEOUT;
	p->reached = e == END_CUT;
	p->cut = e == END_CUT;
	take_counts(c, p, false);
	if (p->kind != CRASH_NONE && !p->cut) {
		/* the trigger did not come (or the point is the end): cut as the workload ends */
		if (crash_set_attr(c, "power", "off") < 0)
			return -1;
		p->cut = true;
		p->reached = p->kind == CRASH_END;
	}
	return 0;
}

int crash_round(struct crash *c, struct crash_point *p)
{
	uint64_t t0 = sfs_now_ns(), tw;
	char out[PATH_MAX + 32];
	const char *disk;
	enum end e;
	int rc = -1;

	p->unflushed = p->kept = p->lost = p->torn = p->damaged = -1;
	p->writes = p->flushes = -1;
	snprintf(c->rdir, sizeof(c->rdir), "%s/round", c->tmp);
	if (mkdir(c->rdir, 0700) < 0) {
		tool_error("%s: %s", c->rdir, strerror(errno));
		c->rdir[0] = '\0';
		return -1;
	}
	if (crash_image_make(c) < 0)
		goto out;
	tw = sfs_now_ns();
	if ((rc = run_workload(c, p)) != 0)
		goto out;
	p->workload_secs = (double)(sfs_now_ns() - tw) / 1e9;
	rc = -1;
	if (loop_release(c) < 0)
		goto out;
	if (p->cut) {
		take_counts(c, p, true);
		if (crash_set_attr(c, "power", "on") < 0)
			goto out;
	}
	if (p->kind == CRASH_NONE && (p->workload_status || p->workload_timeout)) {
		rc = 0;                        /* the caller says what is wrong */
		goto out;
	}
	if (!(disk = disk_of(c)))
		goto out;
	snprintf(out, sizeof(out), "%s/check.out", c->tmp);
	if (spawn(c, p, c->check, "check", disk, out, p->cut) < 0)
		goto out;
	e = watch(c, p, false, &p->check_status);
	if (e == END_INTERRUPTED) {
		rc = 1;
		goto out;
	}
	p->check_timeout = e == END_TIMEOUT;
	p->failed = p->check_status != 0 || p->check_timeout;
	read_tail(out, p->tail, sizeof(p->tail), p->why, sizeof(p->why));
	if (p->check_timeout)
		snprintf(p->why, sizeof(p->why), "the check ran longer than %.0f s", c->timeout);
	p->ran = true;
	if (p->failed && c->keep_failing)
		snprintf(p->kept_image, sizeof(p->kept_image), "%s", c->rname);
	rc = 0;
out:
	if (crash_round_end(c, p->kept_image[0] != '\0') < 0 && rc == 0)
		rc = -1;
	p->secs = (double)(sfs_now_ns() - t0) / 1e9;
	return rc;
}

int crash_round_end(struct crash *c, bool keep)
{
	int rc = 0;

	kill_child(c);
	if (loop_release(c) < 0)
		rc = -1;
	if (crash_image_remove(c, keep) < 0)
		rc = -1;
	if (c->rdir[0] && testbed_rm_tree(c->rdir) < 0) {
		tool_error("cannot remove %s: %s (a filesystem the workload mounted there?)", c->rdir,
			   strerror(errno));
		rc = -1;
	}
	c->rdir[0] = '\0';
	return rc;
}
