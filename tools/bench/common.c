/* SPDX-License-Identifier: MIT */
/*
 * common.c - the options several commands take, figures for people,
 * the progress line and the disk under test, for every sectorfs-bench
 * command.
 *
 * The disk's logical sector decides what a database or a file system
 * would do with it, so it is found the way such software finds it: the
 * sectorfs xattr when IMAGE is a file on a sectorfs mount, BLKSSZGET
 * when it is a block device (a loop device over a sectorfs image, say),
 * else the conventional 512.  The disk is always opened with O_DIRECT:
 * without it the page cache would measure itself, and misaligned I/O
 * would be silently fixed up instead of refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fs.h>

#include "common.h"
#include "contract/names.h"
#include "svg.h"
#include "util/units.h"

/* ---- options several commands take ---- */

const struct tool_opt bench_opts_testbed[] = {
	{ .name = "store", .type = TOOL_STRING },
	{ .name = "mount", .type = TOOL_STRING },
	{ NULL },
};
const struct tool_opt bench_opts_daemon[] = { { .name = "daemon", .type = TOOL_STRING }, { NULL } };
const struct tool_opt bench_opts_json[] = { { .name = "json", .type = TOOL_FLAG }, { NULL } };
const struct tool_opt bench_opts_svg[] = { { .name = "svg", .type = TOOL_STRING }, { NULL } };

int bench_check_testbed(const struct tool_cmd *self, const struct tool_item *item)
{
	if (tool_opt_set(item, "store") && tool_opt_set(item, "mount"))
		return tool_usage_error(self, "--store and --mount exclude each other");
	return 0;
}

int bench_parse_seed(const struct tool_cmd *self, const char *arg, uint64_t *seed)
{
	char *end;

	errno = 0;
	*seed = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || *arg == '-')
		return tool_usage_error(self, "--seed must be a number from 0 to 2^64-1, not '%s'", arg);
	return 0;
}

int bench_check_policy(const struct tool_cmd *self, const char *p)
{
	if (strcmp(p, "lose-all") && strcmp(p, "keep-all") && strncmp(p, "random", 6))
		return tool_usage_error(self, "--policy must be lose-all, keep-all, random or random:P, not '%s'", p);
	return 0;
}

/* ---- the figures ---- */

int bench_figures(const struct bench_figures *f, const void *res, const struct tool_item *item)
{
	const char *svg = tool_opt_arg(item, "svg");
	int rc = tool_opt_set(item, "json") ? f->json(res) : (f->text(res), 0);

	return svg ? rc | bench_chart(f->chart, res, svg) : rc;
}

int bench_chart(bench_chart_fn *draw, const void *res, const char *path)
{
	static struct svg_chart c;   /* large: not on the stack */

	draw(res, &c);
	return svg_write(&c, path) < 0 ? 1 : 0;
}

/* ---- for people ---- */

const char *bench_fmt_us(double us, char *buf, size_t len)
{
	if (us < 1000)
		snprintf(buf, len, "%.1f us", us);
	else if (us < 1e6)
		snprintf(buf, len, "%.2f ms", us / 1e3);
	else
		snprintf(buf, len, "%.2f s", us / 1e6);
	return buf;
}

const char *bench_errno_name(int e, char *buf, size_t len)
{
	static const struct { int e; const char *name; } names[] = {
		{ EINVAL, "EINVAL" }, { EIO, "EIO" }, { ENOSPC, "ENOSPC" }, { EROFS, "EROFS" },
		{ EBADF, "EBADF" }, { EFBIG, "EFBIG" }, { EPERM, "EPERM" }, { EACCES, "EACCES" },
		{ ENOMEM, "ENOMEM" }, { EINTR, "EINTR" }, { ENOTCONN, "ENOTCONN" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { ENXIO, "ENXIO" }, { EAGAIN, "EAGAIN" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	snprintf(buf, len, "E%d", e);
	return buf;
}

int bench_interrupted(int rc, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tool_error("interrupted%s", what);
	return rc ? rc : BENCH_EXIT_INTERRUPTED;
}

void bench_begin(struct tool_progress *p)
{
	tool_catch_signals();
	tool_progress_start(p, stderr, BENCH_PROGRESS_AFTER_NS);
}

int bench_end(struct tool_progress *p, int r, bool *interrupted, const struct bench_figures *f,
	      const void *res, const struct tool_item *item)
{
	int rc = r >= 0 ? 0 : 1;

	tool_progress_clear(p);
	*interrupted = r == 1;
	if (!f->any || f->any(res))
		rc |= bench_figures(f, res, item);
	fflush(stdout);
	return *interrupted ? bench_interrupted(rc, "%s", f->cut) : rc;
}

/* ---- the disk under test ---- */

/* The sectorfs geometry xattr attr as a number; 0 when absent or not a number. */
static unsigned xattr_uint(int fd, const char *attr)
{
	char v[32], *end;
	ssize_t n = fgetxattr(fd, attr, v, sizeof(v) - 1);
	unsigned long x;

	if (n <= 0)
		return 0;
	v[n] = '\0';
	x = strtoul(v, &end, 10);
	return end != v && *end == '\0' && x <= UINT_MAX ? (unsigned)x : 0;
}

int bench_disk_open(struct bench_disk *d, const char *path, int flags)
{
	struct stat st;
	int lss = 0, pss = 0;

	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = open(path, flags | O_DIRECT | O_CLOEXEC);
	if (d->fd < 0) {
		if (errno == EINVAL)
			tool_error("%s: cannot open with O_DIRECT: its file system does not support "
				   "direct I/O", path);
		else
			tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(d->fd, &st) < 0) {
		tool_error("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		d->blockdev = true;
		if (ioctl(d->fd, BLKGETSIZE64, &d->size) < 0 || ioctl(d->fd, BLKSSZGET, &lss) < 0) {
			tool_error("%s: cannot read the size or sector of the block device: %s", path,
				   strerror(errno));
			goto fail;
		}
		if (ioctl(d->fd, BLKPBSZGET, &pss) < 0)
			pss = lss;
		d->logical = (unsigned)lss;
		d->physical = (unsigned)pss;
		d->sector_from = "BLKSSZGET";
	} else if (S_ISREG(st.st_mode)) {
		d->size = (uint64_t)st.st_size;
		d->logical = xattr_uint(d->fd, SFS_XATTR_PREFIX "logical_sector_size");
		d->physical = xattr_uint(d->fd, SFS_XATTR_PREFIX "physical_sector_size");
		d->sector_from = "xattr";
		if (!d->logical) {
			d->logical = 512;
			d->sector_from = "default";
		}
	} else {
		tool_error("%s: not a regular file or a block device", path);
		goto fail;
	}
	if (!sfs_is_pow2(d->logical))
		d->logical = 512;
	if (d->physical < d->logical || !sfs_is_pow2(d->physical))
		d->physical = d->logical;
	if (d->size == 0) {
		tool_error("%s: the disk is empty (size 0)", path);
		goto fail;
	}
	return 0;
fail:
	close(d->fd);
	d->fd = -1;
	return -1;
}

void bench_disk_close(struct bench_disk *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

void *bench_buf_alloc(size_t len, size_t align)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned char *p;
	void *buf;
	int rc;

	if (align < 4096)
		align = 4096;
	rc = posix_memalign(&buf, align, len ? len : 1);
	if (rc) {
		tool_error("cannot allocate a %zu-byte I/O buffer: %s", len, strerror(rc));
		return NULL;
	}
	p = buf;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x | 1);
	}
	return buf;
}

/* ---- output ---- */

json_t *bench_jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int bench_json_print(json_t *o)
{
	int rc = tool_print_json(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	return fflush(stdout) == 0 ? rc : 1;
}

int bench_run_cmd(char *const argv[], const char *in, const char *out)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = in ? open(in, O_RDONLY | O_CLOEXEC) : -1;

		if (fd >= 0)
			dup2(fd, STDIN_FILENO);
		fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* In the forked child of bench_start_daemon: set up and exec argv; never returns. */
static void exec_daemon(char *const argv[], const char *log, bool truncate, unsigned long nofile)
{
	int fd;

	setpgid(0, 0);
	if (nofile) {
		struct rlimit rl = { nofile, nofile };

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(126);
	}
	fd = open(log, O_WRONLY | O_CREAT | (truncate ? O_TRUNC : O_APPEND) | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	execvp(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

pid_t bench_start_daemon(char *const argv[], const char *log, bool truncate, unsigned long nofile)
{
	pid_t pid = fork();

	if (pid < 0) {
		tool_error("cannot start the daemon: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_daemon(argv, log, truncate, nofile);
	return pid;
}

void bench_show_log(const char *log, unsigned tail)
{
	char line[1024], (*lines)[1024] = tail ? calloc(tail, sizeof(*lines)) : NULL;
	unsigned long n = 0;
	FILE *f = fopen(log, "re");

	if (!f || (tail && !lines)) {
		if (f)
			fclose(f);
		free(lines);
		return;
	}
	while (fgets(tail ? lines[n % tail] : line, sizeof(line), f)) {
		if (!tail)
			fprintf(stderr, "  daemon: %s", line);
		n++;
	}
	fclose(f);
	if (tail && n > tail)
		fprintf(stderr, "  daemon: (%lu lines before)\n", n - tail);
	for (unsigned long i = tail && n > tail ? n - tail : 0; tail && i < n; i++)
		fprintf(stderr, "  daemon: %s", lines[i % tail]);
	free(lines);
}

int bench_reap_daemon(pid_t pid, double secs, const char *log, unsigned tail)
{
	struct timespec step = { 0, 50 * 1000000L };
	int status = 0;
	pid_t got = 0;

	for (double waited = 0; waited < secs && got == 0; waited += 0.05) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == 0)
			nanosleep(&step, NULL);
	}
	if (got == 0) {
		tool_error("the daemon (pid %ld) still runs %.0f s after the unmount; killing it", (long)pid, secs);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	if (got > 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		tool_error("the daemon exited badly after the unmount:");
		bench_show_log(log, tail);
		return -1;
	}
	return 0;
}
