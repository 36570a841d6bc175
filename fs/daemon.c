/* SPDX-License-Identifier: MIT */
/*
 * daemon.c - going to the background only once the mount serves.
 *
 * libfuse's fuse_daemonize() lets the parent exit as soon as the child
 * has forked, so whoever started the daemon could not count on the pid
 * file, the mount or the start-up messages when the command returned.
 * Here the fork comes first and the parent waits on a pipe:
 *
 *   sectorfs ──fork──> parent: read(pipe) ......................> exit 0
 *                 │                       ^ "ready" byte
 *                 └──> child: setsid, open the store, mount, pid file,
 *                      loop answers the kernel's INIT: sfs_daemon_ready()
 *
 *   end of file instead (the child exited before it was ready): the
 *   parent reaps it and exits with its status (1 if it died or exited 0).
 *
 * The serving process is thus the child from the start: the pid in the
 * store's lock and in the pid file is its own.  Until ready it keeps the
 * caller's stdio, so its own messages, libfuse's and fusermount3's reach
 * the caller's stderr, and core's log lines go there as well as to
 * syslog.  At ready it moves to "/", points stdio at /dev/null (a caller
 * reading its output through a pipe sees end of file) and logs to syslog
 * only.  In the foreground nothing forks and the log is stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "util/log.h"

#define READY 'R'

/* The parent's side: wait for the child's report; the status to exit with. */
static int wait_for_child(int fd, pid_t child)
{
	char c = 0;
	ssize_t n;
	int status;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n == 1 && c == READY)
		return 0;
	/* end of file: the child has exited, or is exiting, without being ready */
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "sectorfs: the daemon (pid %ld) exited before the mount was ready\n",
				(long)child);
			return 1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		return WEXITSTATUS(status);   /* it said why on stderr */
	if (WIFSIGNALED(status))
		fprintf(stderr, "sectorfs: the daemon (pid %ld) was killed by signal %d (%s) before the mount was ready\n",
			(long)child, WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "sectorfs: the daemon (pid %ld) exited before the mount was ready\n", (long)child);
	return 1;
}

int sfs_daemon_start(struct sfs_daemon *d, bool foreground, int *parent_status)
{
	int fds[2];
	pid_t pid;

	d->background = !foreground;
	d->report_fd = -1;
	atomic_init(&d->ready, false);
	*parent_status = -1;
	if (foreground)
		return 0;
	/* close-on-exec: fusermount3 and other programs the child runs must not hold it open */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	if (pid > 0) {
		close(fds[1]);
		*parent_status = wait_for_child(fds[0], pid);
		return 0;
	}
	close(fds[0]);
	d->report_fd = fds[1];
	if (setsid() < 0)
		return -errno;
	return 0;
}

void sfs_daemon_log(void *ctx, int level, const char *msg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	struct sfs_daemon *d = ctx;

	if (!d->background || !atomic_load(&d->ready))
		sfs_log_stderr(NULL, level, msg);
	if (d->background)
		syslog(prio[level & 3], "%s", msg);
}

void sfs_daemon_report(struct sfs_daemon *d, const char *msg)
{
	if (!d->background || !atomic_load(&d->ready))
		fprintf(stderr, "sectorfs: %s\n", msg);
	if (d->background)
		syslog(LOG_NOTICE, "%s", msg);
}

/* Tell the waiting parent; a parent that is gone (EPIPE) changes nothing. */
static void report_ready(struct sfs_daemon *d)
{
	static const char ready = READY;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	ssize_t n;

	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	do
		n = write(d->report_fd, &ready, 1);
	while (n < 0 && errno == EINTR);
	sigaction(SIGPIPE, &old, NULL);
	close(d->report_fd);
	d->report_fd = -1;
}

int sfs_daemon_ready(struct sfs_daemon *d)
{
	int nullfd = -1;

	if (atomic_load(&d->ready))
		return 0;
	if (d->background) {
		nullfd = open("/dev/null", O_RDWR);
		if (nullfd < 0)
			return -errno;
	}
	/* hold no directory busy: the caller's may be unmounted while we serve */
	if (chdir("/") < 0) {
		int rc = -errno;

		if (nullfd >= 0)
			close(nullfd);
		return rc;
	}
	atomic_store(&d->ready, true);   /* from here on core's lines go to syslog only */
	if (!d->background)
		return 0;
	fflush(NULL);
	for (int fd = 0; fd <= 2; fd++)
		dup2(nullfd, fd);
	if (nullfd > 2)
		close(nullfd);
	if (d->report_fd >= 0)
		report_ready(d);
	return 0;
}

bool sfs_daemon_is_ready(struct sfs_daemon *d)
{
	return atomic_load(&d->ready);
}

void sfs_daemon_end(struct sfs_daemon *d)
{
	if (d->report_fd >= 0) {
		close(d->report_fd);
		d->report_fd = -1;
	}
}
