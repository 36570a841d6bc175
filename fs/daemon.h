/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - going to the background once the mount serves (see daemon.c).
 */
#ifndef SFS_DAEMON_H
#define SFS_DAEMON_H

#include <stdatomic.h>
#include <stdbool.h>

struct sfs_daemon {
	bool background;               /* forked: the parent waits for the report */
	int report_fd;                 /* serving process: write end of the pipe to the parent, or -1 */
	atomic_bool ready;             /* set by sfs_daemon_ready() */
};

/*
 * Unless foreground, fork: the child calls setsid() and returns 0 with
 * *parent_status = -1 to go on and serve; the parent waits until the child
 * reports ready or exits, then returns 0 with *parent_status the status
 * to exit with (0 once ready; non-zero when the child failed, whose reason
 * the child printed on stderr, or it died, which the parent prints).  In
 * the foreground returns 0 with *parent_status = -1 and forks nothing.
 * -errno if pipe or fork fails (nothing forked), or, in the child, if
 * setsid fails (the parent then reports the child's exit).
 */
int sfs_daemon_start(struct sfs_daemon *d, bool foreground, int *parent_status);

/*
 * Log sink for struct sfs_log, ctx a struct sfs_daemon: stderr in the
 * foreground; in the background stderr and syslog until ready, then
 * syslog only.  Safe from any thread.  Call openlog() before forking.
 */
void sfs_daemon_log(void *ctx, int level, const char *msg);

/*
 * A line for the user who started the daemon (msg without the "sectorfs: "
 * prefix): "sectorfs: msg" on stderr while it still reaches them (in the
 * foreground always, in the background until ready), and in the
 * background to syslog as well.
 */
void sfs_daemon_report(struct sfs_daemon *d, const char *msg);

/*
 * The serving process is ready (pid file written, mount answering): move
 * to "/", and in the background point stdio at /dev/null, log to syslog
 * only and let the parent exit 0.  Once only; later calls return 0.
 * 0, or -errno (nothing changed, the parent still waits) if /dev/null
 * cannot be opened.
 */
int sfs_daemon_ready(struct sfs_daemon *d);

/* Whether sfs_daemon_ready() has succeeded. */
bool sfs_daemon_is_ready(struct sfs_daemon *d);

/*
 * Last step of the serving process's exit: close the pipe if ready was
 * never reported, so the parent exits non-zero.
 */
void sfs_daemon_end(struct sfs_daemon *d);

#endif
