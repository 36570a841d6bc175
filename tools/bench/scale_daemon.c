/* SPDX-License-Identifier: MIT */
/*
 * scale_daemon.c - the daemons sectorfs-bench scale starts and watches:
 * a store of sidecars made, a daemon started under --nofile and waited for
 * until its mount is ready, its RSS, threads and descriptors read from
 * /proc, ls -l timed, and the daemon stopped with fusermount3 -u and
 * waited for by pid (its log shown when it fails).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "util/fdio.h"
#include "scale.h"
#include "testbed.h"
#include "util/units.h"

double scale_now_s(void)
{
	return (double)sfs_now_ns() / 1e9;
}

void scale_sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !tool_interrupted)
		;
}

/* A field of /proc/PID/status ("VmRSS", "Threads"): its number, -1 when unreadable. */
long scale_proc_status(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

long scale_count_names(const char *path)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

long scale_proc_fds(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	return scale_count_names(path);
}

bool scale_mounted(const char *mnt)
{
	struct statfs sf;

	return statfs(mnt, &sf) == 0 && sf.f_type == FUSE_MAGIC;
}

/* The lines of a daemon's log shown when it fails: its last ones (a store of thousands of
 * images may have logged a line for each). */
#define LOG_TAIL 10

/* Start the daemon on d (under nofile when > 0); the seconds until the mount was ready, or
 * -1 (printed). */
double scale_start_daemon(struct scale *sc, struct daemon_run *d)
{
	char opt[PATH_MAX + 16];
	char *argv[] = { sc->daemon, (char *)"-f", (char *)"-o", opt, d->store, d->mnt, NULL };
	double t0 = scale_now_s();
	struct stat st;
	int status;

	unlink(d->pidfile);
	snprintf(opt, sizeof(opt), "pidfile=%s", d->pidfile);
	if ((d->pid = bench_start_daemon(argv, d->log, false, sc->res.nofile)) < 0) {
		d->pid = 0;
		return -1;
	}
	while (!tool_interrupted) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = 0;
			tool_error("the daemon %s exited before its mount of %s was ready:", sc->daemon, d->store);
			bench_show_log(d->log, LOG_TAIL);
			return -1;
		}
		if (stat(d->pidfile, &st) == 0 && st.st_size > 0 && scale_mounted(d->mnt))
			return scale_now_s() - t0;
		if (scale_now_s() - t0 > 1800) {
			tool_error("the mount of %s was not ready after 30 minutes", d->store);
			return -1;
		}
		scale_sleep_s(0.005);
	}
	return -1;
}

int scale_stop_daemon(struct daemon_run *d)
{
	char *argv[] = { (char *)"fusermount3", (char *)"-u", d->mnt, NULL };
	int rc = 0;

	if (!d->pid)
		return 0;
	for (int i = 0; i < 50 && bench_run_cmd(argv, NULL, "/dev/null") != 0; i++)
		scale_sleep_s(0.1);              /* busy: a file of ours may still be closing */
	if (bench_reap_daemon(d->pid, 60, d->log, LOG_TAIL) < 0)
		rc = -1;
	d->pid = 0;
	return rc;
}

int scale_make_store(struct scale *sc, struct daemon_run *d, const char *tag, unsigned long n)
{
	char path[PATH_MAX + 64], json[128];
	int len = snprintf(json, sizeof(json), "{ \"size\": %llu, \"sector\": \"4kn\", \"provisioning\": \"thin\" }\n",
			   (unsigned long long)sc->res.size);

	snprintf(d->store, sizeof(d->store), "%s/%s", sc->dir, tag);
	snprintf(d->mnt, sizeof(d->mnt), "%s/%s.mnt", sc->dir, tag);
	snprintf(d->pidfile, sizeof(d->pidfile), "%s/%s.pid", sc->dir, tag);
	snprintf(d->log, sizeof(d->log), "%s/%s.log", sc->dir, tag);
	if (mkdir(d->store, 0755) < 0 || mkdir(d->mnt, 0755) < 0) {
		tool_error("%s: %s", d->store, strerror(errno));
		return -1;
	}
	for (unsigned long i = 0; i < n && !tool_interrupted; i++) {
		int fd, rc;

		snprintf(path, sizeof(path), "%s/d%05lu.json", d->store, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		rc = fd < 0 ? -errno : sfs_pwrite_all(fd, json, (size_t)len, 0);  /* no progress: -EIO */
		if (fd >= 0 && close(fd) < 0 && !rc)
			rc = -errno;
		if (rc) {
			tool_error("%s: %s", path, strerror(-rc));
			return -1;
		}
	}
	return tool_interrupted ? -1 : 0;
}

/* The wall time of `ls -l MNT` (output dropped), or -1. */
double scale_time_ls(const struct daemon_run *d)
{
	char *argv[] = { (char *)"ls", (char *)"-l", (char *)d->mnt, NULL };
	double t0 = scale_now_s();

	return bench_run_cmd(argv, NULL, "/dev/null") == 0 ? scale_now_s() - t0 : -1;
}
