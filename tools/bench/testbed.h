/* SPDX-License-Identifier: MIT */
/*
 * testbed.h - a sectorfs store served at a mount, for experiments that
 * need images of their own (sectorfs-bench zeroing, powercut), and the
 * loop of their repeats.
 *
 * Three ways to get one:
 *   - nothing given: a temporary directory with a new store and a mount
 *     point, served by a daemon we start; all of it removed at the end;
 *   - a store directory: served by a daemon we start at a temporary mount
 *     point (the store must not be served already);
 *   - a mount point of a running sectorfs: its store is read from the
 *     mount's source ("sectorfs:STORE" in /proc/self/mountinfo), and the
 *     daemon is left alone.
 * Images are declared by writing sidecars into the store (the daemon
 * picks up a sidecar added since it started on the first lookup) and
 * removed through the mount, which takes the sidecar, the backing file
 * and the allocation map together.  A daemon we start runs in its own
 * process group, so a Ctrl-C at the terminal reaches only us, and is
 * stopped with fusermount3 -u and waited for by PID.
 */
#ifndef SFS_BENCH_TESTBED_H
#define SFS_BENCH_TESTBED_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#define TESTBED_MAX_IMAGES 16

struct testbed {
	char tmp[PATH_MAX - 64];     /* our temporary directory, "" when none */
	char store[PATH_MAX];
	char mnt[PATH_MAX];
	bool temporary_store;        /* the store is inside tmp */
	bool state_existed;          /* STORE/.sectorfs was there before us */
	pid_t daemon;                /* the daemon we started, 0 when none */
	bool buffered;               /* it runs with -o buffered (testbed_open's flags) */
	char daemon_path[PATH_MAX];
	char names[TESTBED_MAX_IMAGES][64];   /* images we declared */
	unsigned nimages;
};

/* Set up the store (store or mnt may be given, not both) and, unless mnt is given, start
 * the daemon (daemon_path, or the default) on it, with -o buffered when buffered (the
 * images are timed by a device profile: the host page cache keeps the host's disk out of
 * the figures).  0, or -1 with the problem printed; call testbed_close() either way. */
int testbed_open(struct testbed *tb, const char *store, const char *mnt, const char *daemon_path,
		 bool buffered);

/* Declare image name by writing STORE/name.json with json (refused when the name is in
 * use).  0 or -1 (printed). */
int testbed_declare(struct testbed *tb, const char *name, const char *json);

/* Remove image name, declared by testbed_declare, through the mount (sidecar, backing file and
 * map together).  0, or -1 (printed). */
int testbed_remove(struct testbed *tb, const char *name);

/* The loop of an experiment over repeat repeats, each on images of its own (powercut,
 * zeroing): for each, declare(tb, arg, rep) declares its images (0, or -1 printed), *nrep is set to
 * rep + 1, run(arg, rep) runs it (0; 1 when Ctrl-C cut it short; -1 failed, printed), then the
 * images declared for it are removed, in order; until a repeat fails or is cut short.  0, 1
 * when cut short, -1 when a step failed (the images it left are testbed_close's). */
int testbed_repeats(struct testbed *tb, unsigned repeat, unsigned *nrep,
		    int (*declare)(struct testbed *tb, void *arg, unsigned rep), int (*run)(void *arg, unsigned rep), void *arg);

/* MNT/name into buf. */
const char *testbed_path(const struct testbed *tb, const char *name, char *buf, size_t len);

/* MNT/.stats/name.json, loaded; NULL (printed) when it cannot be read. */
json_t *testbed_stats(const struct testbed *tb, const char *name);

/* The daemon to run into out: given, else ../fs/sectorfs next to this program (a build tree),
 * else sectorfs next to it, else "sectorfs" (found in PATH). */
void testbed_find_daemon(char *out, size_t len, const char *given);

/* Remove the tree at path, never crossing into a mount below it.  0, or -1 (errno set). */
int testbed_rm_tree(const char *path);

/* Remove the images we declared, stop the daemon we started, remove what we made.
 * 0, or -1 when something could not be undone (printed). */
int testbed_close(struct testbed *tb);

#endif
