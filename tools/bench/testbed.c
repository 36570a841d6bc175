/* SPDX-License-Identifier: MIT */
/*
 * testbed.c - a store served at a mount for sectorfs-bench zeroing: the
 * daemon started and stopped as the mount tests do it (pidfile, then the
 * mount point in /proc/self/mountinfo; fusermount3 -u, then wait for the
 * PID), and everything we made removed again.  See testbed.h.
 *
 * The daemon's messages go to TMP/daemon.log and are shown when it fails
 * to start or exits badly.  It is found as --daemon PATH, else next to
 * this binary (../fs/sectorfs in a build tree, ./sectorfs when both are
 * installed in one bin directory), else as "sectorfs" in PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "util/fdio.h"
#include "mount/mountpoint.h"
#include "contract/names.h"
#include "testbed.h"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int testbed_rm_tree(const char *path)
{
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 && errno != ENOENT ? -1 : 0;
}

/* The daemon's log, TMP/daemon.log, whole on stderr. */
static void testbed_show_log(const struct testbed *tb)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/daemon.log", tb->tmp);
	bench_show_log(path, 0);
}

void testbed_find_daemon(char *out, size_t len, const char *given)
{
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (given) {
		snprintf(out, len, "%s", given);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dir = dirname(self);
		snprintf(out, len, "%s/../fs/sectorfs", dir);
		if (access(out, X_OK) == 0) {
			if (realpath(out, self))
				snprintf(out, len, "%s", self);
			return;
		}
		snprintf(out, len, "%s/sectorfs", dir);
		if (access(out, X_OK) == 0)
			return;
	}
	snprintf(out, len, "sectorfs");
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int start_daemon(struct testbed *tb)
{
	char pidfile[PATH_MAX + 8], logf[PATH_MAX + 16], opt[PATH_MAX + 16], fstype[64], src[PATH_MAX];
	char *argv[] = { tb->daemon_path, (char *)"-f", (char *)"-o", opt, tb->store, tb->mnt, NULL, NULL,
			 NULL };
	struct stat st;
	int status;

	snprintf(pidfile, sizeof(pidfile), "%s/pid", tb->tmp);
	snprintf(logf, sizeof(logf), "%s/daemon.log", tb->tmp);
	snprintf(opt, sizeof(opt), "pidfile=%s", pidfile);
	if (tb->buffered) {
		argv[4] = (char *)"-o";
		argv[5] = (char *)"buffered";
		argv[6] = tb->store;
		argv[7] = tb->mnt;
	}
	if ((tb->daemon = bench_start_daemon(argv, logf, true, 0)) < 0) {
		tb->daemon = 0;
		return -1;
	}
	for (int i = 0; i < 200; i++) {            /* 20 s */
		if (waitpid(tb->daemon, &status, WNOHANG) == tb->daemon) {
			tb->daemon = 0;
			tool_error("the daemon %s exited before the mount was ready (%s %d):", tb->daemon_path,
				   WIFEXITED(status) ? "status" : "signal",
				   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			testbed_show_log(tb);
			return -1;
		}
		if (stat(pidfile, &st) == 0 && st.st_size > 0 &&
		    sfs_mount_lookup(tb->mnt, fstype, src, sizeof(src)))
			return 0;
		sleep_ms(100);
	}
	tool_error("the mount at %s was not ready after 20 s", tb->mnt);
	testbed_show_log(tb);
	return -1;
}

static int stop_daemon(struct testbed *tb)
{
	char *argv[] = { (char *)"fusermount3", (char *)"-u", tb->mnt, NULL }, logf[PATH_MAX + 16];
	int rc = 0;

	snprintf(logf, sizeof(logf), "%s/daemon.log", tb->tmp);
	if (bench_run_cmd(argv, "/dev/null", NULL) != 0) {
		tool_error("fusermount3 -u %s failed; stopping the daemon (pid %ld) with SIGTERM",
			   tb->mnt, (long)tb->daemon);
		kill(tb->daemon, SIGTERM);
		rc = -1;
	}
	if (bench_reap_daemon(tb->daemon, 30, logf, 0) < 0)
		rc = -1;
	tb->daemon = 0;
	return rc;
}

/* The store behind a running sectorfs mount. */
static int store_of_mount(struct testbed *tb, const char *mnt)
{
	char fstype[64], src[PATH_MAX];

	if (!realpath(mnt, tb->mnt)) {
		tool_error("%s: %s", mnt, strerror(errno));
		return -1;
	}
	if (!sfs_mount_lookup(tb->mnt, fstype, src, sizeof(src)) || strcmp(fstype, SFS_FSTYPE) != 0 ||
	    strncmp(src, "sectorfs:", 9) != 0) {
		tool_error("%s is not a sectorfs mount point", mnt);
		return -1;
	}
	if (src[9] != '/') {
		tool_error("%s: its daemon was started with the relative store path '%s'; give the store "
			   "with --store instead of --mount", mnt, src + 9);
		return -1;
	}
	snprintf(tb->store, sizeof(tb->store), "%s", src + 9);
	return 0;
}

int testbed_open(struct testbed *tb, const char *store, const char *mnt, const char *daemon_path,
		 bool buffered)
{
	const char *tmpdir = getenv("TMPDIR");
	char state[PATH_MAX + 16];
	struct stat st;

	memset(tb, 0, sizeof(*tb));
	tb->buffered = buffered;
	if (mnt)
		return store_of_mount(tb, mnt);
	testbed_find_daemon(tb->daemon_path, sizeof(tb->daemon_path), daemon_path);
	snprintf(tb->tmp, sizeof(tb->tmp), "%s/sectorfs-bench-zeroing.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tb->tmp)) {
		tool_error("cannot make a temporary directory %s: %s", tb->tmp, strerror(errno));
		tb->tmp[0] = '\0';
		return -1;
	}
	snprintf(tb->mnt, sizeof(tb->mnt), "%s/mnt", tb->tmp);
	if (store) {
		if (!realpath(store, tb->store) || stat(tb->store, &st) < 0 || !S_ISDIR(st.st_mode)) {
			tool_error("%s: not a directory", store);
			return -1;
		}
		snprintf(state, sizeof(state), "%s/.sectorfs", tb->store);
		tb->state_existed = access(state, F_OK) == 0;
	} else {
		snprintf(tb->store, sizeof(tb->store), "%s/store", tb->tmp);
		tb->temporary_store = true;
		if (mkdir(tb->store, 0755) < 0) {
			tool_error("%s: %s", tb->store, strerror(errno));
			return -1;
		}
	}
	if (mkdir(tb->mnt, 0755) < 0) {
		tool_error("%s: %s", tb->mnt, strerror(errno));
		return -1;
	}
	return start_daemon(tb);
}

int testbed_declare(struct testbed *tb, const char *name, const char *json)
{
	char path[PATH_MAX + 80];
	size_t len = strlen(json);
	int fd, rc;

	if (tb->nimages == TESTBED_MAX_IMAGES || strlen(name) >= sizeof(tb->names[0]))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", tb->store, name);
	if (access(path, F_OK) == 0) {
		tool_error("%s already exists: remove it or use another store", path);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s" SFS_SIDECAR_SUFFIX, tb->store, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		tool_error(errno == EEXIST ? "%s already exists: remove it or use another store" : "%s: %s",
			   path, strerror(errno));
		return -1;
	}
	snprintf(tb->names[tb->nimages++], sizeof(tb->names[0]), "%s", name);
	rc = sfs_pwrite_all(fd, json, len, 0);          /* a write that makes no progress: -EIO */
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc) {
		tool_error("%s: %s", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int testbed_remove(struct testbed *tb, const char *name)
{
	char path[PATH_MAX + 80];

	for (unsigned i = 0; i < tb->nimages; i++) {
		if (strcmp(tb->names[i], name))
			continue;
		testbed_path(tb, name, path, sizeof(path));
		if (unlink(path) < 0) {
			tool_error("cannot remove %s: %s", path, strerror(errno));
			return -1;
		}
		memmove(&tb->names[i], &tb->names[i + 1], (tb->nimages - i - 1) * sizeof(tb->names[0]));
		tb->nimages--;
		return 0;
	}
	return 0;
}

int testbed_repeats(struct testbed *tb, unsigned repeat, unsigned *nrep,
		    int (*declare)(struct testbed *tb, void *arg, unsigned rep), int (*run)(void *arg, unsigned rep), void *arg)
{
	int r = 0;

	for (unsigned rep = 0; rep < repeat && !r; rep++) {
		unsigned first = tb->nimages;

		if (declare(tb, arg, rep) < 0)
			return -1;
		*nrep = rep + 1;
		r = run(arg, rep);
		while (r >= 0 && tb->nimages > first) {
			char name[sizeof(tb->names[0])];

			memcpy(name, tb->names[first], sizeof(name));   /* testbed_remove moves the list */
			if (testbed_remove(tb, name) < 0)
				r = -1;
		}
	}
	return r;
}

const char *testbed_path(const struct testbed *tb, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", tb->mnt, name);
	return buf;
}

json_t *testbed_stats(const struct testbed *tb, const char *name)
{
	char path[PATH_MAX + 80];
	json_error_t e;
	json_t *j;

	snprintf(path, sizeof(path), "%s/" SFS_STATS_DIR "/%s" SFS_SIDECAR_SUFFIX, tb->mnt, name);
	if (!(j = json_load_file(path, 0, &e)))
		tool_error("cannot read %s: %s%s", path, e.text,
			   access(path, F_OK) < 0 ? " (a mount made with -o nostats has no statistics)" : "");
	return j;
}

int testbed_close(struct testbed *tb)
{
	char path[PATH_MAX + 80], fstype[64], src[PATH_MAX];
	int rc = 0;

	/* Through the mount: sidecar, backing file and map go together. */
	for (unsigned i = 0; i < tb->nimages; i++) {
		testbed_path(tb, tb->names[i], path, sizeof(path));
		if ((tb->daemon || !tb->tmp[0]) && unlink(path) == 0)
			continue;
		/* no mount (the daemon never came up): the sidecar is all there is */
		snprintf(path, sizeof(path), "%s/%s" SFS_SIDECAR_SUFFIX, tb->store, tb->names[i]);
		if (unlink(path) < 0 && errno != ENOENT) {
			tool_error("cannot remove %s: %s", path, strerror(errno));
			rc = -1;
		}
	}
	if (tb->daemon && stop_daemon(tb) < 0)
		rc = -1;
	if (!tb->temporary_store && tb->tmp[0] && !tb->state_existed) {
		snprintf(path, sizeof(path), "%s/.sectorfs", tb->store);
		if (testbed_rm_tree(path) < 0)
			rc = -1;
	}
	if (tb->tmp[0] && sfs_mount_lookup(tb->mnt, fstype, src, sizeof(src))) {
		tool_error("%s is still mounted: leaving %s in place", tb->mnt, tb->tmp);
		return -1;
	}
	if (tb->tmp[0] && testbed_rm_tree(tb->tmp) < 0) {
		tool_error("cannot remove %s: %s", tb->tmp, strerror(errno));
		rc = -1;
	}
	return rc;
}
