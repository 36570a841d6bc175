/* SPDX-License-Identifier: MIT */
/*
 * common.c - messages, argument parsing, the progress line, signals and
 * the disk under test, for every sectorfs-bench command.
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
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "common.h"
#include "units.h"

/* ---- messages and arguments ---- */

void bench_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_verror(BENCH_PROG, fmt, ap);
	va_end(ap);
}

int bench_usage_error(const struct tool_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tool_vusage_error(BENCH_PROG, cmd, 1, fmt, ap);
	va_end(ap);
	return rc;
}

int bench_bad_option(const struct tool_cmd *cmd, int opt, char **argv)
{
	return tool_bad_option(BENCH_PROG, cmd, 1, opt, argv);
}

int bench_parse_size(const struct tool_cmd *cmd, const char *opt, const char *s, uint64_t *out)
{
	int rc = sfs_parse_size(s, out);

	if (rc == -ERANGE)
		fprintf(stderr, BENCH_PROG " %s: size '%s' for %s is too large\n", cmd->name, s, opt);
	else if (rc < 0)
		fprintf(stderr, BENCH_PROG " %s: invalid size '%s' for %s: use a number of bytes, "
			"optionally followed by K, M, G or T (e.g. 32K)\n", cmd->name, s, opt);
	else if (*out == 0)
		fprintf(stderr, BENCH_PROG " %s: %s must not be 0\n", cmd->name, opt);
	return rc < 0 || *out == 0 ? -1 : 0;
}

int bench_parse_seconds(const struct tool_cmd *cmd, const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*out) || *out <= 0 || *out > 1e6) {
		fprintf(stderr, BENCH_PROG " %s: invalid time '%s' for %s: give seconds, "
			"more than 0 (e.g. 0.5 or 10)\n", cmd->name, s, opt);
		return -1;
	}
	return 0;
}

int bench_parse_uint(const struct tool_cmd *cmd, const char *opt, const char *s,
		     unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out < min || *out > max) {
		fprintf(stderr, BENCH_PROG " %s: invalid value '%s' for %s: give an integer from %lu "
			"to %lu\n", cmd->name, s, opt, min, max);
		return -1;
	}
	return 0;
}

const char *bench_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes && bytes % (UINT64_C(1024) << (10 * u)) == 0)
		u++;
	if (u == 0 && bytes >= 1024) {
		if (sfs_format_human(bytes, buf, len) < 0 && len)
			buf[0] = '\0';
	} else {
		snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * u), units[u]);
	}
	return buf;
}

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

/* ---- time, signals, progress ---- */

void bench_progress_init(struct bench_progress *p)
{
	memset(p, 0, sizeof(*p));
	p->tty = isatty(STDERR_FILENO);
	p->t0 = tool_now_ns();
}

void bench_progress_draw(struct bench_progress *p, const char *fmt, ...)
{
	uint64_t now = tool_now_ns();
	va_list ap;

	if (!p->tty || now - p->t0 < BENCH_PROGRESS_AFTER_NS || (p->drawn && now - p->last < 100000000ull))
		return;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	p->drawn = true;
	p->last = now;
}

void bench_progress_clear(struct bench_progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
	}
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
			bench_error("%s: cannot open with O_DIRECT: its file system does not support "
				    "direct I/O", path);
		else
			bench_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(d->fd, &st) < 0) {
		bench_error("%s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		d->blockdev = true;
		if (ioctl(d->fd, BLKGETSIZE64, &d->size) < 0 || ioctl(d->fd, BLKSSZGET, &lss) < 0) {
			bench_error("%s: cannot read the size or sector of the block device: %s", path,
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
		d->logical = xattr_uint(d->fd, "user.sectorfs.logical_sector_size");
		d->physical = xattr_uint(d->fd, "user.sectorfs.physical_sector_size");
		d->sector_from = "xattr";
		if (!d->logical) {
			d->logical = 512;
			d->sector_from = "default";
		}
	} else {
		bench_error("%s: not a regular file or a block device", path);
		goto fail;
	}
	if (!sfs_is_pow2(d->logical))
		d->logical = 512;
	if (d->physical < d->logical || !sfs_is_pow2(d->physical))
		d->physical = d->logical;
	if (d->size == 0) {
		bench_error("%s: the disk is empty (size 0)", path);
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
		bench_error("cannot allocate a %zu-byte I/O buffer: %s", len, strerror(rc));
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
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));

	json_decref(o);
	if (!text) {
		bench_error("out of memory");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return fflush(stdout) == 0 ? 0 : 1;
}
