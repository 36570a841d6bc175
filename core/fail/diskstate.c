/* SPDX-License-Identifier: MIT */
/*
 * diskstate.c - NAME.disk, a disk's power state, cut under way and
 * bad-sector list (diskstate.h draws the format): encode, decode, load and
 * the durable save.
 */
#include "diskstate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/fdio.h"
#include "util/log.h"
#include "util/step.h"
#include "util/tmpfile.h"

#define FIRST_LINE "sectorfs-disk 1\n"

void sfs_disk_init(struct sfs_diskstate *ds, uint32_t lss, uint32_t pss, uint64_t nsect)
{
	memset(ds, 0, sizeof(*ds));
	ds->cut.policy = SFS_WC_LOSE_ALL;
	ds->cut.p = 0.5;
	sfs_bad_init(&ds->bad, lss, pss, nsect);
}

void sfs_disk_free(struct sfs_diskstate *ds)
{
	sfs_bad_free(&ds->bad);
	ds->power_off = ds->cut_pending = false;
}

bool sfs_disk_is_default(const struct sfs_diskstate *ds)
{
	return !ds->power_off && !ds->cut_pending && ds->bad.ext.n == 0;
}

/* ---- the text ---- */

int sfs_disk_encode(const struct sfs_diskstate *ds, char **out, size_t *len)
{
	char *list = NULL, *s, pol[48];
	size_t llen = 0, cap, n = 0;

	if (sfs_bad_format(&ds->bad, &list, &llen) < 0)
		return -ENOMEM;
	cap = 160 + llen + 4 * ds->bad.ext.n;   /* "bad " a range */
	s = malloc(cap);
	if (!s) {
		free(list);
		return -ENOMEM;
	}
	n += (size_t)snprintf(s + n, cap - n, FIRST_LINE "power %s\n", ds->power_off ? "off" : "on");
	if (ds->cut_pending) {
		sfs_wc_format_policy(&ds->cut, pol, sizeof(pol));
		n += (size_t)snprintf(s + n, cap - n, "cut %" PRIu64 " %s\n", ds->cut.seed, pol);
	}
	for (char *line = list, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		n += (size_t)snprintf(s + n, cap - n, "bad %.*s\n", (int)(nl - line), line);
	}
	free(list);
	n += (size_t)snprintf(s + n, cap - n, "crc32c %08x\n", sfs_crc32c(0, s, n));
	*out = s;
	*len = n;
	return 0;
}

/* "FNAME: line N: REASON" */
static int line_err(char *err, size_t errlen, const char *fname, unsigned line, const char *why)
{
	return sfs_err(err, errlen, -EUCLEAN, "%s: line %u: %s", fname, line, why);
}

/* One line (without its newline) into t. */
static int decode_line(const char *l, size_t n, const char *fname, unsigned line, struct sfs_diskstate *t,
		       char *err, size_t errlen)
{
	char buf[128], msg[256];

	if (n == 8 && !memcmp(l, "power on", 8)) {
		t->power_off = false;
		return 0;
	}
	if (n == 9 && !memcmp(l, "power off", 9)) {
		t->power_off = true;
		return 0;
	}
	if (n > 4 && !memcmp(l, "cut ", 4) && n < sizeof(buf)) {
		char *sp, *end;

		memcpy(buf, l + 4, n - 4);
		buf[n - 4] = '\0';
		sp = strchr(buf, ' ');
		if (!sp)
			return line_err(err, errlen, fname, line, "expected 'cut SEED POLICY'");
		*sp = '\0';
		errno = 0;
		t->cut.seed = strtoull(buf, &end, 10);
		if (end == buf || *end || errno || buf[0] == '-')
			return line_err(err, errlen, fname, line, "the cut's seed is not a number");
		if (sfs_wc_parse_policy(sp + 1, &t->cut, msg, sizeof(msg)) < 0)
			return line_err(err, errlen, fname, line, msg);
		t->cut_pending = true;
		return 0;
	}
	if (n > 4 && !memcmp(l, "bad ", 4) && n < sizeof(buf)) {
		/* in place: t is thrown away if a line fails (a copy per line made a full list O(n^2)) */
		buf[0] = '+';
		memcpy(buf + 1, l + 4, n - 4);
		if (sfs_bad_apply_one(&t->bad, buf, n - 3, msg, sizeof(msg)) < 0)
			return line_err(err, errlen, fname, line, msg);
		return 0;
	}
	return line_err(err, errlen, fname, line, "expected 'power', 'cut', 'bad' or 'crc32c'");
}

/* Find the crc32c line and check it: the length of the text it covers, or -EUCLEAN. */
static long check_sum(const char *text, size_t len, const char *fname, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned line = 1, crc;

	for (;; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char c[9];

		if (!nl)
			return line_err(err, errlen, fname, line, p == end ? "no crc32c line: the file is cut short"
									   : "the last line has no newline");
		if (nl - p == 15 && !memcmp(p, "crc32c ", 7)) {
			memcpy(c, p + 7, 8);
			c[8] = '\0';
			if (sscanf(c, "%8x", &crc) != 1 || crc != sfs_crc32c(0, text, (size_t)(p - text)))
				return line_err(err, errlen, fname, line, "checksum mismatch: the file is damaged");
			if (nl + 1 != end)
				return line_err(err, errlen, fname, line + 1, "text after the crc32c line");
			return (long)(p - text);
		}
		p = nl + 1;
	}
}

int sfs_disk_decode(const char *text, size_t len, const char *fname, struct sfs_diskstate *ds, char *err,
		    size_t errlen)
{
	struct sfs_diskstate t;
	const char *p = text, *end;
	long body;
	int rc = 0;

	if (len < sizeof(FIRST_LINE) - 1 || memcmp(text, FIRST_LINE, sizeof(FIRST_LINE) - 1) != 0)
		return line_err(err, errlen, fname, 1, "not a sectorfs disk state (expected 'sectorfs-disk 1')");
	body = check_sum(text, len, fname, err, errlen);
	if (body < 0)
		return (int)body;
	end = text + body;
	sfs_disk_init(&t, ds->bad.lss, ds->bad.pss, ds->bad.nsect);
	p += sizeof(FIRST_LINE) - 1;
	for (unsigned line = 2; rc == 0 && p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		rc = decode_line(p, (size_t)(nl - p), fname, line, &t, err, errlen);
		p = nl + 1;
	}
	if (rc < 0) {
		sfs_disk_free(&t);
		return rc;
	}
	sfs_disk_free(ds);
	*ds = t;
	return 0;
}

/* ---- the file ---- */

int sfs_disk_load(int dirfd, const char *fname, struct sfs_diskstate *ds, char *err, size_t errlen)
{
	int fd = openat(dirfd, fname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc;
	struct stat st;
	ssize_t n;
	char *buf;

	if (fd < 0) {
		rc = errno == ELOOP ? -EPERM : -errno;
		return rc == -ENOENT ? rc : sfs_err(err, errlen, rc, "%s: %s", fname, strerror(-rc));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sfs_err(err, errlen, -EPERM, "%s: not a regular file", fname);
	}
	if (st.st_size > SFS_DISK_MAX_BYTES) {
		close(fd);
		return sfs_err(err, errlen, -EFBIG, "%s: larger than %u bytes", fname, SFS_DISK_MAX_BYTES);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return sfs_err(err, errlen, -ENOMEM, "%s: out of memory", fname);
	}
	n = sfs_pread_upto(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	rc = n < 0 ? sfs_err(err, errlen, (int)n, "%s: %s", fname, strerror((int)-n))
		   : sfs_disk_decode(buf, (size_t)n, fname, ds, err, errlen);
	free(buf);
	return rc;
}

int sfs_disk_save(int dirfd, const char *fname, const struct sfs_diskstate *ds)
{
	char tmp[SFS_TMP_NAME_MAX], *text;
	size_t len;
	int fd, rc;

	if (sfs_disk_is_default(ds))
		return sfs_remove_durably(dirfd, fname);
	rc = sfs_disk_encode(ds, &text, &len);
	if (rc < 0)
		return rc;
	fd = sfs_tmp_create(dirfd, tmp, sizeof(tmp), 0600);
	if (fd < 0) {
		free(text);
		return fd;
	}
	rc = sfs_pwrite_all(fd, text, len, 0);
	free(text);
	if (rc == 0)
		rc = sfs_step("disk-save", 1);
	if (rc == 0)
		rc = sfs_tmp_install(fd, dirfd, tmp, dirfd, fname);
	else
		unlinkat(dirfd, tmp, 0);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}
