/* SPDX-License-Identifier: MIT */
/*
 * undolog.c - the codec and the file operations of a volatile write
 * cache's undo log (undolog.h draws the format).
 *
 * Crash rules.  The log matters in two cases only:
 *   - the daemon is killed (kill -9, a crash): every completed write is
 *     kept, and the next start reads the log only to say how many
 *     unflushed writes that kept.  The page cache survives the process, so
 *     an entry written with pwrite is whole in the file unless the write
 *     itself was cut off, which the entry's CRC shows; no fsync is needed;
 *   - a power cut is being applied and is interrupted: the cut fsyncs the
 *     log before it records its decision (fail.c), so every entry it will
 *     roll back from is durable first.
 * A host that loses power while nothing was cut may leave any mix of the
 * log's pages: the header's or an entry's CRC then fails and the next
 * start counts fewer kept writes, which changes a message and nothing else.
 */
#include "undolog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "util/crc32c.h"
#include "util/fdio.h"
#include "util/prng.h"
#include "util/tmpfile.h"

#define MAGIC "SFSUNDO\0"
#define VERSION 1u
#define REC_MAGIC 0x4f444e55u
#define HDR_USED 64
#define COPY_CHUNK (1u << 20)

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint64_t sfs_undo_rec_size(const struct sfs_undo_rec *r)
{
	uint64_t data = r->kind == SFS_UNDO_WRITE ? r->len : 0;

	return SFS_UNDO_HEAD_LEN + (data + 7) / 8 * 8;
}

uint64_t sfs_undo_new_gen(void)
{
	static uint64_t counter;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return sfs_mix64(((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
			 ((uint64_t)getpid() << 40) ^ __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
}

int sfs_undo_open(int dirfd, const char *fname, bool create)
{
	int fd = openat(dirfd, fname, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	struct stat st;

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	/* O_NONBLOCK kept a FIFO from hanging the open; a regular file ignores it */
	return fd;
}

/* ---- the header ---- */

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int sfs_undo_write_hdr(int fd, const struct sfs_undo_hdr *h)
{
	unsigned char b[SFS_UNDO_HDR_LEN];

	memset(b, 0, sizeof(b));
	memcpy(b, MAGIC, 8);
	put32(b + 8, VERSION);
	put32(b + 12, h->g.lss);
	put32(b + 16, h->g.pss);
	put32(b + 20, h->g.awu);
	put32(b + 24, h->g.awb);
	put32(b + 28, h->g.rmw_power_safe ? 1 : 0);
	put64(b + 32, h->gen);
	put64(b + 40, h->live);
	put64(b + 48, h->mark);
	put32(b + 56, sfs_crc32c(0, b, 56));
	return sfs_pwrite_all(fd, b, sizeof(b), 0);
}

int sfs_undo_read_hdr(int fd, struct sfs_undo_hdr *h)
{
	unsigned char b[HDR_USED];
	ssize_t n = sfs_pread_upto(fd, b, sizeof(b), 0);
	struct sfs_undo_hdr t;

	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(b))
		return -ENODATA;
	if (memcmp(b, MAGIC, 8) != 0 || get32(b + 8) != VERSION || get32(b + 56) != sfs_crc32c(0, b, 56))
		return -EUCLEAN;
	t.g.lss = get32(b + 12);
	t.g.pss = get32(b + 16);
	t.g.awu = get32(b + 20);
	t.g.awb = get32(b + 24);
	t.g.rmw_power_safe = get32(b + 28) & 1;
	t.gen = get64(b + 32);
	t.live = get64(b + 40);
	t.mark = get64(b + 48);
	if (!pow2(t.g.lss) || !pow2(t.g.pss) || t.g.pss < t.g.lss || !pow2(t.g.awu) || t.g.awu < t.g.lss ||
	    (t.g.awb && (!pow2(t.g.awb) || t.g.awb < t.g.awu)) || t.live < SFS_UNDO_HDR_LEN)
		return -EUCLEAN;
	*h = t;
	return 0;
}

/* ---- entries ---- */

static void encode_head(unsigned char *b, uint64_t gen, const struct sfs_undo_rec *r)
{
	put32(b, REC_MAGIC);
	put32(b + 4, (uint32_t)r->kind);
	put64(b + 8, r->seq);
	put64(b + 16, r->off);
	put64(b + 24, r->len);
	put64(b + 32, gen);
	put32(b + 44, 0);
}

int sfs_undo_append(int fd, uint64_t gen, const struct sfs_undo_rec *r, const void *data)
{
	unsigned char head[SFS_UNDO_HEAD_LEN];
	static const unsigned char pad[8];
	uint64_t dlen = r->kind == SFS_UNDO_WRITE ? r->len : 0;
	struct iovec iov[3] = {
		{ head, sizeof(head) }, { (void *)data, dlen }, { (void *)pad, (8 - dlen % 8) % 8 },
	};
	uint64_t total = sizeof(head) + dlen + iov[2].iov_len, done;
	uint32_t crc;
	ssize_t n;

	encode_head(head, gen, r);
	crc = sfs_crc32c(0, head, 40);
	crc = sfs_crc32c(crc, data, dlen);
	put32(head + 40, crc);
	n = pwritev(fd, iov, 3, (off_t)r->at);
	if (n < 0 && errno != EINTR)
		return -errno;
	done = n > 0 ? (uint64_t)n : 0;
	if (done == total)
		return 0;
	/* a short or interrupted vector write: the rest piece by piece */
	for (int i = 0, rc; i < 3; i++) {
		uint64_t s = i == 0 ? 0 : i == 1 ? sizeof(head) : sizeof(head) + dlen, l = iov[i].iov_len;

		if (done >= s + l)
			continue;
		rc = sfs_pwrite_all(fd, (const char *)iov[i].iov_base + (done > s ? done - s : 0),
				    l - (done > s ? done - s : 0), (off_t)(r->at + (done > s ? done : s)));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Read the head at `at` into r and check it and its data's CRC. */
static int read_entry(int fd, uint64_t gen, uint64_t at, struct sfs_undo_rec *r, unsigned char *buf)
{
	unsigned char head[SFS_UNDO_HEAD_LEN];
	ssize_t n = sfs_pread_upto(fd, head, sizeof(head), (off_t)at);
	uint64_t dlen, pos;
	uint32_t crc;

	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(head) || get32(head) != REC_MAGIC || get64(head + 32) != gen)
		return 1;
	r->kind = (enum sfs_undo_kind)get32(head + 4);
	r->seq = get64(head + 8);
	r->off = get64(head + 16);
	r->len = get64(head + 24);
	r->at = at;
	if ((r->kind != SFS_UNDO_WRITE && r->kind != SFS_UNDO_KEPT) || r->len == 0 || r->off + r->len < r->off ||
	    r->len > (1ull << 40))
		return 1;
	crc = sfs_crc32c(0, head, 40);
	dlen = r->kind == SFS_UNDO_WRITE ? r->len : 0;
	for (pos = 0; pos < dlen;) {
		size_t k = dlen - pos > COPY_CHUNK ? COPY_CHUNK : (size_t)(dlen - pos);

		n = sfs_pread_upto(fd, buf, k, (off_t)(at + SFS_UNDO_HEAD_LEN + pos));
		if (n < 0)
			return (int)n;
		if ((size_t)n < k)
			return 1;
		crc = sfs_crc32c(crc, buf, k);
		pos += k;
	}
	return crc == get32(head + 40) ? 0 : 1;
}

long sfs_undo_scan(int fd, const struct sfs_undo_hdr *h, int (*cb)(void *ctx, const struct sfs_undo_rec *r),
		   void *ctx, uint64_t *tail)
{
	unsigned char *buf = malloc(COPY_CHUNK);
	uint64_t at = h->live, next = h->mark;
	long count = 0;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct sfs_undo_rec r;

		rc = read_entry(fd, h->gen, at, &r, buf);
		if (rc < 0)
			break;
		if (rc > 0 || r.seq < next || r.off % h->g.lss || r.len % h->g.lss) {
			/* not whole, not this log's next, or not whole sectors: the end */
			rc = 0;
			break;
		}
		rc = cb ? cb(ctx, &r) : 0;
		if (rc != 0)
			break;
		next = r.seq + 1;
		at += sfs_undo_rec_size(&r);
		count++;
	}
	free(buf);
	if (tail)
		*tail = at;
	return rc ? rc : count;
}

int sfs_undo_read(int fd, const struct sfs_undo_rec *r, uint64_t from, void *buf, uint64_t len)
{
	ssize_t n;

	if (r->kind != SFS_UNDO_WRITE || from < r->off || from + len > r->off + r->len)
		return -EINVAL;
	n = sfs_pread_upto(fd, buf, len, (off_t)(r->at + SFS_UNDO_HEAD_LEN + (from - r->off)));
	if (n < 0)
		return (int)n;
	return (uint64_t)n == len ? 0 : -EIO;
}

/* ---- reset and compaction ---- */

int sfs_undo_reset(int fd, struct sfs_undo_hdr *h, uint64_t mark, bool durable)
{
	int rc;

	h->gen = sfs_undo_new_gen();
	h->live = SFS_UNDO_HDR_LEN;
	h->mark = mark;
	/* the header first: if the file is not cut after all, its entries are of another generation */
	rc = sfs_undo_write_hdr(fd, h);
	if (rc == 0 && ftruncate(fd, (off_t)SFS_UNDO_HDR_LEN) < 0)
		rc = -errno;
	if (rc == 0 && durable && fdatasync(fd) < 0)
		rc = -errno;
	return rc;
}

static int copy_range(int from, int to, uint64_t src, uint64_t dst, uint64_t len)
{
	char *buf = malloc(COPY_CHUNK);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t pos = 0; rc == 0 && pos < len;) {
		size_t k = len - pos > COPY_CHUNK ? COPY_CHUNK : (size_t)(len - pos);
		ssize_t n = sfs_pread_upto(from, buf, k, (off_t)(src + pos));

		if (n < 0)
			rc = (int)n;
		else if ((size_t)n < k)
			rc = -EIO;
		else
			rc = sfs_pwrite_all(to, buf, k, (off_t)(dst + pos));
		pos += k;
	}
	free(buf);
	return rc;
}

int sfs_undo_compact(int dirfd, const char *fname, int *fd, struct sfs_undo_hdr *h, uint64_t tail,
		     uint64_t *shift)
{
	char tmp[SFS_TMP_NAME_MAX];
	struct sfs_undo_hdr nh = *h;
	int nfd = sfs_tmp_create(dirfd, tmp, sizeof(tmp), 0600), rc;

	if (nfd < 0)
		return nfd;
	nh.live = SFS_UNDO_HDR_LEN;
	rc = sfs_undo_write_hdr(nfd, &nh);
	if (rc == 0)
		rc = copy_range(*fd, nfd, h->live, SFS_UNDO_HDR_LEN, tail - h->live);
	/* no fsync: only a kill -9 reads this file back, and the page cache outlives the process */
	if (rc == 0 && renameat(dirfd, tmp, dirfd, fname) < 0)
		rc = -errno;
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		close(nfd);
		return rc;
	}
	close(*fd);
	*fd = nfd;
	*shift = h->live - SFS_UNDO_HDR_LEN;
	*h = nh;
	return 0;
}
