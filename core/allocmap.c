/*
 * allocmap.c - the allocation map: one bit per block, persisted in
 * STORE/.sectorfs/NAME.map.
 *
 * On-disk format (all integers little-endian):
 *
 *   0          4096                         4096 + P * 4096
 *   +----------+----------------------------+
 *   | header   | bitmap: bit b of byte i    |
 *   | (4 KiB)  | is block 8*i + b; P pages, |
 *   |          | the tail of the last page  |
 *   |          | is zero                    |
 *   +----------+----------------------------+
 *
 *   header:  0 magic "SFSMAP\0\1"    8 u32 version (1)   12 u32 header size (4096)
 *           16 u64 disk size         24 u32 logical      28 u32 physical sector
 *           32 u64 block size        40 u64 nblocks      48 u32 provisioning
 *           52 u32 flags             56 u32 CRC-32C of bytes 0..55
 *
 * The header lives in the first 512-byte sector and changes only at
 * creation (temp file + rename) and on grow/flag changes (one sector
 * write, after everything it describes is durable).  A header with a bad
 * magic, version, CRC or geometry, or a file whose length does not match
 * nblocks, is refused with -EUCLEAN and a message saying which.
 *
 * Contract: a clear bit means the block reads as zeros whatever the
 * backing file holds.  A set bit means the backing file holds the block.
 *
 * Crash-ordering rule: a bit may reach the disk only after the data it
 * points at is durable.  The caller sets a bit only after the block's
 * data and zeroing are written to the backing file, and a flush is
 *
 *     flush_begin: snapshot the dirty bitmap pages   (bits set so far)
 *     fdatasync(backing file)                        (their data durable)
 *     flush_end:   write the snapshot, fdatasync(map)
 *
 * so a bit set while the flush runs waits for the next one.  After a
 * crash a block is either as last flushed or reads as zeros; it never
 * shows bytes that were not written to it.  Clearing (discard) follows
 * the same path; a cleared bit lost in a crash leaves the block reading
 * what it held, which a discard allows.
 *
 * In memory the bitmap is an array of 64-bit words updated with atomics,
 * plus one dirty bit per 4 KiB bitmap page.  Tests need no lock; set and
 * clear are serialised per block by the image's stripe locks; grow runs
 * with those locks held and keeps the old arrays until close so that
 * lock-free readers never see freed memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocmap.h"
#include "crc32c.h"
#include "log.h"
#include "tmpfile.h"

#define MAP_MAGIC "SFSMAP\0\1"
#define MAP_VERSION 1u
#define MAP_HDR 4096u
#define MAP_PAGE 4096u
#define MAP_PAGE_BITS (MAP_PAGE * 8ull)
#define MAP_HDR_CRC_OFF 56u

struct old_arrays {
	struct old_arrays *next;
	uint64_t *words;
	uint64_t *dirty;
};

struct snap_page {
	uint64_t page;
	unsigned char data[MAP_PAGE];
};

struct sfs_map {
	int fd;
	struct sfs_map_info info;
	uint64_t nblocks;
	uint64_t npages;          /* bitmap pages */
	uint64_t *words;          /* npages * MAP_PAGE bytes */
	uint64_t *dirty;          /* one bit per page */
	uint64_t count;           /* allocated blocks, atomic */
	pthread_mutex_t flush_lock;
	struct snap_page *snap;
	size_t nsnap;
	struct old_arrays *old;
	uint64_t *pend_words, *pend_dirty;   /* a prepared grow's arrays (NULL: same pages) */
	uint64_t pend_size, pend_pages;      /* a prepared grow's size and page count */
	bool pending;                        /* a grow is prepared */
};

/* ---- little helpers ---- */

uint32_t sfs_map_crc32c(const void *buf, size_t n)
{
	return sfs_crc32c(0, buf, n);
}

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

static uint64_t pages_for(uint64_t nblocks)
{
	return (nblocks + MAP_PAGE_BITS - 1) / MAP_PAGE_BITS;
}

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Give [off, off+len) of the map file real blocks, so that a flush never
 * needs new space: on a full store it must still be able to persist bits. */
static int reserve(int fd, off_t off, off_t len)
{
	static const unsigned char zeros[MAP_PAGE];

	if (len <= 0 || fallocate(fd, 0, off, len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	for (off_t done = 0; done < len; done += MAP_PAGE) {
		int rc = pwrite_all(fd, zeros, MAP_PAGE, off + done);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static void encode_header(const struct sfs_map_info *info, uint64_t nblocks, unsigned char *h)
{
	memset(h, 0, MAP_HDR);
	memcpy(h, MAP_MAGIC, 8);
	put32(h + 8, MAP_VERSION);
	put32(h + 12, MAP_HDR);
	put64(h + 16, info->geom.size);
	put32(h + 24, info->geom.lss);
	put32(h + 28, info->geom.pss);
	put64(h + 32, info->geom.block_size);
	put64(h + 40, nblocks);
	put32(h + 48, (uint32_t)info->prov);
	put32(h + 52, info->flags);
	put32(h + MAP_HDR_CRC_OFF, sfs_map_crc32c(h, MAP_HDR_CRC_OFF));
}

static int write_header(struct sfs_map *m)
{
	unsigned char h[MAP_HDR];
	int rc;

	encode_header(&m->info, m->nblocks, h);
	rc = pwrite_all(m->fd, h, 512, 0);
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	return rc;
}

static int alloc_arrays(uint64_t npages, uint64_t **words, uint64_t **dirty)
{
	size_t wbytes = npages ? npages * MAP_PAGE : 8;
	size_t dwords = npages / 64 + 1;

	*words = calloc(1, wbytes);
	*dirty = calloc(dwords, sizeof(uint64_t));
	if (!*words || !*dirty) {
		free(*words);
		free(*dirty);
		return -ENOMEM;
	}
	return 0;
}

static struct sfs_map *map_new(int fd, const struct sfs_map_info *info)
{
	struct sfs_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fd = fd;
	m->info = *info;
	m->nblocks = sfs_geom_nblocks(&info->geom);
	m->npages = pages_for(m->nblocks);
	if (alloc_arrays(m->npages, &m->words, &m->dirty) < 0) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->flush_lock, NULL);
	return m;
}

static void drop_pending(struct sfs_map *m)
{
	free(m->pend_words);
	free(m->pend_dirty);
	m->pend_words = m->pend_dirty = NULL;
	m->pend_size = m->pend_pages = 0;
	m->pending = false;
}

static void mark_dirty(struct sfs_map *m, uint64_t blk)
{
	uint64_t page = blk / MAP_PAGE_BITS;
	uint64_t *d = __atomic_load_n(&m->dirty, __ATOMIC_ACQUIRE);

	__atomic_fetch_or(&d[page / 64], 1ull << (page % 64), __ATOMIC_RELEASE);
}

/* ---- create / open / close ---- */

int sfs_map_create_tmp(int dirfd, const struct sfs_map_info *info, char *tmp, size_t tmplen,
		       struct sfs_map **out)
{
	unsigned char h[MAP_HDR];
	uint64_t nblocks = sfs_geom_nblocks(&info->geom);
	off_t len = (off_t)(MAP_HDR + pages_for(nblocks) * MAP_PAGE);
	struct sfs_map *m;
	int fd, rc = 0;

	fd = sfs_tmp_create(dirfd, tmp, tmplen, 0600);
	if (fd < 0)
		return fd;
	encode_header(info, nblocks, h);
	rc = pwrite_all(fd, h, MAP_HDR, 0);
	if (rc == 0 && ftruncate(fd, len) < 0)
		rc = -errno;
	if (rc == 0)
		rc = reserve(fd, MAP_HDR, len - (off_t)MAP_HDR);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	m = rc == 0 ? map_new(fd, info) : NULL;
	if (rc == 0 && !m)
		rc = -ENOMEM;
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		close(fd);
		return rc;
	}
	*out = m;
	return 0;
}

int sfs_map_create(int dirfd, const char *fname, const struct sfs_map_info *info,
		   struct sfs_map **out)
{
	char tmp[SFS_TMP_NAME_MAX];
	struct sfs_map *m;
	int rc = sfs_map_create_tmp(dirfd, info, tmp, sizeof(tmp), &m);

	if (rc < 0)
		return rc;
	rc = sfs_tmp_install(m->fd, dirfd, tmp, dirfd, fname);
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		sfs_map_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

static int check_header(const unsigned char *h, const char *fname, struct sfs_map_info *info,
			uint64_t *nblocks, char *err, size_t errlen)
{
	struct sfs_sidecar sc;
	char why[256];

	if (memcmp(h, MAP_MAGIC, 8) != 0)
		return sfs_err(err, errlen, -EUCLEAN, "%s: not a sectorfs allocation map (bad magic)", fname);
	if (get32(h + 8) != MAP_VERSION)
		return sfs_err(err, errlen, -EUCLEAN, "%s: unsupported map version %u", fname, get32(h + 8));
	if (get32(h + MAP_HDR_CRC_OFF) != sfs_map_crc32c(h, MAP_HDR_CRC_OFF))
		return sfs_err(err, errlen, -EUCLEAN, "%s: map header checksum mismatch (corrupted)", fname);
	if (get32(h + 12) != MAP_HDR)
		return sfs_err(err, errlen, -EUCLEAN, "%s: bad map header size %u", fname, get32(h + 12));
	info->geom.size = get64(h + 16);
	info->geom.lss = get32(h + 24);
	info->geom.pss = get32(h + 28);
	info->geom.block_size = get64(h + 32);
	info->prov = (enum sfs_prov)get32(h + 48);
	info->flags = get32(h + 52);
	*nblocks = get64(h + 40);
	if (get32(h + 48) > SFS_PROV_EAGERZEROEDTHICK)
		return sfs_err(err, errlen, -EUCLEAN, "%s: bad provisioning %u in map header", fname, get32(h + 48));
	sfs_sidecar_defaults(&sc);
	sc.size = info->geom.size;
	sc.lss = info->geom.lss;
	sc.pss = info->geom.pss;
	sc.block_size = info->geom.block_size;
	sc.prov = info->prov;
	if (sfs_sidecar_validate(&sc, fname, why, sizeof(why)) < 0)
		return sfs_err(err, errlen, -EUCLEAN, "bad geometry in map header: %s", why);
	if (*nblocks != sfs_geom_nblocks(&info->geom))
		return sfs_err(err, errlen, -EUCLEAN, "%s: map header block count %llu does not match its size",
			       fname, (unsigned long long)*nblocks);
	return 0;
}

/* A grow extends the file before it rewrites the header: whole zero pages
 * past what the header needs are an interrupted grow, and are dropped. */
static bool trim_interrupted_grow(int fd, uint64_t want, uint64_t size)
{
	unsigned char page[MAP_PAGE];

	if ((size - want) % MAP_PAGE)
		return false;
	for (uint64_t off = want; off < size; off += MAP_PAGE) {
		if (pread(fd, page, MAP_PAGE, (off_t)off) != (ssize_t)MAP_PAGE)
			return false;
		for (unsigned i = 0; i < MAP_PAGE; i++)
			if (page[i])
				return false;
	}
	return ftruncate(fd, (off_t)want) == 0;
}

int sfs_map_open(int dirfd, const char *fname, struct sfs_map **out, char *err, size_t errlen)
{
	unsigned char h[MAP_HDR];
	struct sfs_map_info info;
	struct sfs_map *m;
	struct stat st;
	uint64_t nblocks = 0, want, cnt = 0;
	ssize_t n;
	int fd, rc;

	fd = openat(dirfd, fname, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sfs_err(err, errlen, -errno, "%s: cannot open allocation map: %s", fname, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map is not a regular file", fname);
	}
	if (st.st_size < (off_t)MAP_HDR) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map truncated (%lld bytes, header needs %u)",
			       fname, (long long)st.st_size, MAP_HDR);
	}
	n = pread(fd, h, MAP_HDR, 0);
	if (n != (ssize_t)MAP_HDR) {
		rc = n < 0 ? -errno : -EUCLEAN;
		close(fd);
		return sfs_err(err, errlen, rc, "%s: cannot read map header", fname);
	}
	rc = check_header(h, fname, &info, &nblocks, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	want = MAP_HDR + pages_for(nblocks) * MAP_PAGE;
	if ((uint64_t)st.st_size > want && trim_interrupted_grow(fd, want, (uint64_t)st.st_size))
		st.st_size = (off_t)want;
	if ((uint64_t)st.st_size != want) {
		close(fd);
		return sfs_err(err, errlen, -EUCLEAN, "%s: allocation map is %lld bytes, its header needs %llu (%s)",
			       fname, (long long)st.st_size, (unsigned long long)want,
			       (uint64_t)st.st_size < want ? "truncated" : "trailing data");
	}
	m = map_new(fd, &info);
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	reserve(fd, MAP_HDR, (off_t)(m->npages * MAP_PAGE));   /* best effort: older maps had holes */
	if (m->npages) {
		n = pread(fd, m->words, m->npages * MAP_PAGE, MAP_HDR);
		if (n != (ssize_t)(m->npages * MAP_PAGE)) {
			rc = n < 0 ? -errno : -EUCLEAN;
			sfs_map_close(m);
			return sfs_err(err, errlen, rc, "%s: cannot read bitmap", fname);
		}
	}
	/* Bits past the last block mean nothing; drop them. */
	if (nblocks % 64)
		m->words[nblocks / 64] &= (1ull << (nblocks % 64)) - 1;
	for (uint64_t w = nblocks / 64 + (nblocks % 64 != 0); w < m->npages * (MAP_PAGE / 8); w++)
		m->words[w] = 0;
	for (uint64_t w = 0; w < (nblocks + 63) / 64; w++)
		cnt += (uint64_t)__builtin_popcountll(m->words[w]);
	m->count = cnt;
	*out = m;
	return 0;
}

void sfs_map_close(struct sfs_map *m)
{
	if (!m)
		return;
	while (m->old) {
		struct old_arrays *o = m->old;

		m->old = o->next;
		free(o->words);
		free(o->dirty);
		free(o);
	}
	drop_pending(m);
	free(m->snap);
	free(m->words);
	free(m->dirty);
	pthread_mutex_destroy(&m->flush_lock);
	close(m->fd);
	free(m);
}

/* ---- bits ---- */

int sfs_map_fd(const struct sfs_map *m)
{
	return m->fd;
}

const struct sfs_map_info *sfs_map_info(const struct sfs_map *m)
{
	return &m->info;
}

uint64_t sfs_map_nblocks(const struct sfs_map *m)
{
	return __atomic_load_n(&m->nblocks, __ATOMIC_ACQUIRE);
}

bool sfs_map_test(const struct sfs_map *m, uint64_t blk)
{
	const uint64_t *w = __atomic_load_n(&m->words, __ATOMIC_ACQUIRE);

	return (__atomic_load_n(&w[blk / 64], __ATOMIC_ACQUIRE) >> (blk % 64)) & 1;
}

void sfs_map_set(struct sfs_map *m, uint64_t blk)
{
	uint64_t bit = 1ull << (blk % 64);
	uint64_t old = __atomic_fetch_or(&m->words[blk / 64], bit, __ATOMIC_RELEASE);

	if (!(old & bit)) {
		__atomic_fetch_add(&m->count, 1, __ATOMIC_RELAXED);
		mark_dirty(m, blk);
	}
}

void sfs_map_clear(struct sfs_map *m, uint64_t blk)
{
	uint64_t bit = 1ull << (blk % 64);
	uint64_t old = __atomic_fetch_and(&m->words[blk / 64], ~bit, __ATOMIC_RELEASE);

	if (old & bit) {
		__atomic_fetch_sub(&m->count, 1, __ATOMIC_RELAXED);
		mark_dirty(m, blk);
	}
}

void sfs_map_set_range(struct sfs_map *m, uint64_t first, uint64_t end)
{
	for (uint64_t b = first; b < end; b++) {
		if (b % 64 == 0 && b + 64 <= end) {
			uint64_t old = __atomic_exchange_n(&m->words[b / 64], ~0ull, __ATOMIC_RELEASE);

			if (old != ~0ull) {
				__atomic_fetch_add(&m->count, 64 - (uint64_t)__builtin_popcountll(old),
						   __ATOMIC_RELAXED);
				mark_dirty(m, b);
			}
			b += 63;
			continue;
		}
		sfs_map_set(m, b);
	}
}

uint64_t sfs_map_count(const struct sfs_map *m)
{
	return __atomic_load_n(&m->count, __ATOMIC_RELAXED);
}

static uint64_t next_with(const struct sfs_map *m, uint64_t from, bool set)
{
	uint64_t nb = sfs_map_nblocks(m);
	const uint64_t *w = __atomic_load_n(&m->words, __ATOMIC_ACQUIRE);

	while (from < nb) {
		uint64_t word = __atomic_load_n(&w[from / 64], __ATOMIC_ACQUIRE);

		if (!set)
			word = ~word;
		word &= ~0ull << (from % 64);
		if (word) {
			uint64_t b = (from & ~63ull) + (uint64_t)__builtin_ctzll(word);

			return b < nb ? b : nb;
		}
		from = (from & ~63ull) + 64;
	}
	return nb;
}

uint64_t sfs_map_next_set(const struct sfs_map *m, uint64_t from)
{
	return next_with(m, from, true);
}

uint64_t sfs_map_next_clear(const struct sfs_map *m, uint64_t from)
{
	return next_with(m, from, false);
}

/* ---- flush ---- */

int sfs_map_flush_begin(struct sfs_map *m)
{
	uint64_t dwords = m->npages / 64 + 1, ndirty = 0, *taken;

	pthread_mutex_lock(&m->flush_lock);
	free(m->snap);
	m->snap = NULL;
	m->nsnap = 0;
	/* Take the dirty set in one sweep: a page dirtied after its word was
	 * taken stays dirty for the next flush. */
	taken = malloc(dwords * sizeof(*taken));
	if (!taken) {
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < dwords; i++) {
		taken[i] = __atomic_exchange_n(&m->dirty[i], 0, __ATOMIC_ACQ_REL);
		ndirty += (uint64_t)__builtin_popcountll(taken[i]);
	}
	if (ndirty)
		m->snap = malloc(ndirty * sizeof(*m->snap));
	if (ndirty && !m->snap) {
		for (uint64_t i = 0; i < dwords; i++)
			__atomic_fetch_or(&m->dirty[i], taken[i], __ATOMIC_RELEASE);
		free(taken);
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < dwords; i++) {
		for (uint64_t bits = taken[i]; bits; bits &= bits - 1) {
			uint64_t page = i * 64 + (uint64_t)__builtin_ctzll(bits);
			struct snap_page *sp = &m->snap[m->nsnap++];
			const uint64_t *src = m->words + page * (MAP_PAGE / 8);

			sp->page = page;
			for (unsigned k = 0; k < MAP_PAGE / 8; k++) {
				uint64_t v = __atomic_load_n(&src[k], __ATOMIC_ACQUIRE);

				for (int j = 0; j < 8; j++)
					sp->data[k * 8 + j] = (unsigned char)(v >> (8 * j));
			}
		}
	}
	free(taken);
	return 0;
}

int sfs_map_flush_end(struct sfs_map *m)
{
	int rc = 0;

	for (size_t i = 0; i < m->nsnap && rc == 0; i++)
		rc = pwrite_all(m->fd, m->snap[i].data, MAP_PAGE,
				(off_t)(MAP_HDR + m->snap[i].page * MAP_PAGE));
	if (rc == 0 && m->nsnap && fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		/* Nothing is known to be on disk: everything snapshotted is dirty again. */
		for (size_t i = 0; i < m->nsnap; i++)
			mark_dirty(m, m->snap[i].page * MAP_PAGE_BITS);
	}
	free(m->snap);
	m->snap = NULL;
	m->nsnap = 0;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}

int sfs_map_flush(struct sfs_map *m, int data_fd)
{
	int rc = sfs_map_flush_begin(m);

	if (rc < 0)
		return rc;
	if (data_fd >= 0 && fdatasync(data_fd) < 0) {
		rc = -errno;
		for (size_t i = 0; i < m->nsnap; i++)
			mark_dirty(m, m->snap[i].page * MAP_PAGE_BITS);
		m->nsnap = 0;
		sfs_map_flush_end(m);
		return rc;
	}
	return sfs_map_flush_end(m);
}

/* ---- grow / flags ---- */

int sfs_map_grow_prepare(struct sfs_map *m, uint64_t new_size)
{
	struct sfs_geom g = m->info.geom;
	uint64_t np;
	int rc = 0;

	if (new_size < g.size)
		return -EINVAL;
	g.size = new_size;
	np = pages_for(sfs_geom_nblocks(&g));
	pthread_mutex_lock(&m->flush_lock);
	drop_pending(m);
	if (np != m->npages) {
		rc = alloc_arrays(np, &m->pend_words, &m->pend_dirty);
		if (rc == 0 && ftruncate(m->fd, (off_t)(MAP_HDR + np * MAP_PAGE)) < 0)
			rc = -errno;
		if (rc == 0)
			rc = reserve(m->fd, (off_t)(MAP_HDR + m->npages * MAP_PAGE),
				     (off_t)((np - m->npages) * MAP_PAGE));
		if (rc == 0 && fdatasync(m->fd) < 0)
			rc = -errno;
		if (rc < 0) {
			/* back to the length the header describes (an open would drop
			 * the zero pages of a failed grow anyway) */
			int trc = ftruncate(m->fd, (off_t)(MAP_HDR + m->npages * MAP_PAGE));

			(void)trc;
			drop_pending(m);
			pthread_mutex_unlock(&m->flush_lock);
			return rc;
		}
	}
	m->pend_size = new_size;
	m->pend_pages = np;
	m->pending = true;
	pthread_mutex_unlock(&m->flush_lock);
	return 0;
}

int sfs_map_grow_commit(struct sfs_map *m, uint64_t new_size, uint32_t flags)
{
	struct sfs_map_info info = m->info;
	unsigned char h[MAP_HDR];
	struct old_arrays *o = NULL;
	uint64_t nb;
	int rc;

	pthread_mutex_lock(&m->flush_lock);
	if (!m->pending || m->pend_size != new_size) {
		pthread_mutex_unlock(&m->flush_lock);
		return -EINVAL;
	}
	if (m->pend_words && !(o = calloc(1, sizeof(*o)))) {
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	info.geom.size = new_size;
	info.flags = flags;
	nb = sfs_geom_nblocks(&info.geom);
	encode_header(&info, nb, h);
	rc = pwrite_all(m->fd, h, 512, 0);
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		free(o);
		pthread_mutex_unlock(&m->flush_lock);
		return rc;
	}
	if (m->pend_words) {
		memcpy(m->pend_words, m->words, m->npages * MAP_PAGE);
		memcpy(m->pend_dirty, m->dirty, (m->npages / 64 + 1) * sizeof(uint64_t));
		o->words = m->words;
		o->dirty = m->dirty;
		o->next = m->old;
		m->old = o;
		__atomic_store_n(&m->dirty, m->pend_dirty, __ATOMIC_RELEASE);
		__atomic_store_n(&m->words, m->pend_words, __ATOMIC_RELEASE);
		m->npages = m->pend_pages;
		m->pend_words = m->pend_dirty = NULL;
	}
	m->info = info;
	__atomic_store_n(&m->nblocks, nb, __ATOMIC_RELEASE);
	drop_pending(m);
	pthread_mutex_unlock(&m->flush_lock);
	return 0;
}

int sfs_map_grow_abort(struct sfs_map *m)
{
	int rc;

	pthread_mutex_lock(&m->flush_lock);
	drop_pending(m);
	/* a failed commit may have left the header in doubt: write the current one again */
	rc = write_header(m);
	if (ftruncate(m->fd, (off_t)(MAP_HDR + m->npages * MAP_PAGE)) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}

int sfs_map_grow(struct sfs_map *m, uint64_t new_size)
{
	int rc = sfs_map_grow_prepare(m, new_size);

	if (rc == 0)
		rc = sfs_map_grow_commit(m, new_size, m->info.flags);
	if (rc < 0)
		sfs_map_grow_abort(m);
	return rc;
}

int sfs_map_set_flags(struct sfs_map *m, uint32_t flags)
{
	int rc;

	pthread_mutex_lock(&m->flush_lock);
	m->info.flags = flags;
	rc = write_header(m);
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}
