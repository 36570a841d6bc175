/* SPDX-License-Identifier: MIT */
/*
 * flush.c - the allocation map's flush protocol and its changes of
 * size and flags (map.h; the ordering is drawn in map.c).
 *
 * A flush snapshots the dirty pages under the flush lock, writes them
 * whole with their checksums, and only then lets later bits in: the data
 * is made durable first (sfs_map_flush's fdatasync of the backing file),
 * so a bit on disk never covers data that is not.  A grow is prepared
 * (file extended, arrays made), committed (the header that covers the new
 * pages written last) or aborted, so a failure leaves the map as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map.h"
#include "internal.h"
#include "util/bitmap.h"
#include "util/crc32c.h"
#include "util/fdio.h"
#include "util/log.h"
#include "format.h"
#include "util/tmpfile.h"


/* ---- flush ---- */

int sfs_map_flush_begin(struct sfs_map *m)
{
	uint64_t dwords = m->npages / 64 + 1, ndirty = 0, *taken;

	if (m->rdonly)
		return -EROFS;
	pthread_mutex_lock(&m->flush_lock);
	free(m->snap);
	m->snap = NULL;
	m->nsnap = 0;
	/* Take the dirty set in one sweep: a page dirtied after its word was
	 * taken stays dirty for the next flush. */
	taken = map_calloc(dwords, sizeof(*taken));
	if (!taken) {
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < dwords; i++) {
		taken[i] = __atomic_exchange_n(&m->dirty[i], 0, __ATOMIC_ACQ_REL);
		ndirty += (uint64_t)__builtin_popcountll(taken[i]);
	}
	if (ndirty)
		m->snap = map_calloc(ndirty, sizeof(*m->snap));
	if (ndirty && !m->snap) {
		for (uint64_t i = 0; i < dwords; i++)
			__atomic_fetch_or(&m->dirty[i], taken[i], __ATOMIC_RELEASE);
		free(taken);
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	/* Each chunk's CRC is computed over the bytes encoded here, not over
	 * memory that setters may change meanwhile. */
	for (uint64_t i = 0; i < dwords; i++) {
		for (uint64_t bits = taken[i]; bits; bits &= bits - 1) {
			struct snap_page *sp = &m->snap[m->nsnap++];

			sp->page = i * 64 + (uint64_t)__builtin_ctzll(bits);
			sfs_mapfile_encode_page(m->words, sp->page, sp->data);
		}
	}
	free(taken);
	return 0;
}

bool sfs_map_flushed(struct sfs_map *m)
{
	bool clean;

	if (pthread_mutex_trylock(&m->flush_lock) != 0)
		return false;                 /* a flush is writing pages */
	clean = !sfs_map_dirty(m);
	pthread_mutex_unlock(&m->flush_lock);
	return clean;
}

int sfs_map_flush_end(struct sfs_map *m)
{
	int rc = 0;

	for (size_t i = 0; i < m->nsnap && rc == 0; i++)
		rc = sfs_pwrite_all(m->fd, m->snap[i].data, MAP_PAGE,
				(off_t)(MAP_HDR + m->snap[i].page * MAP_PAGE));
	if (rc == 0 && m->nsnap && fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		/* Nothing is known to be on disk: everything snapshotted is dirty again. */
		for (size_t i = 0; i < m->nsnap; i++)
			map_mark_page_dirty(m, m->snap[i].page);
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
			map_mark_page_dirty(m, m->snap[i].page);
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

	if (m->rdonly)
		return -EROFS;
	if (new_size < g.size)
		return -EINVAL;
	if (new_size > sfs_geom_size_max(g.block_size))
		return -EFBIG;
	g.size = new_size;
	np = sfs_mapfile_pages(SFS_MAPFILE_VERSION, sfs_geom_nblocks(&g));
	pthread_mutex_lock(&m->flush_lock);
	map_drop_pending(m);
	if (np > m->cap_pages) {
		uint64_t most = sfs_mapfile_pages(SFS_MAPFILE_VERSION, SFS_BLOCKS_MAX);

		/* twice the room (see map.c): a long run of small grows keeps few arrays */
		m->pend_cap = np > 2 * m->cap_pages ? np : 2 * m->cap_pages < most ? 2 * m->cap_pages : most;
		rc = map_alloc_arrays(m->pend_cap, &m->pend_words, &m->pend_dirty);
	}
	if (np != m->npages) {
		if (rc == 0)
			rc = sfs_mapfile_write_pages(m->fd, NULL, m->npages, np - m->npages);
		if (rc == 0 && fdatasync(m->fd) < 0)
			rc = -errno;
		if (rc < 0) {
			/* back to the length the header describes (an open would drop
			 * the empty pages of a failed grow anyway) */
			int trc = ftruncate(m->fd, (off_t)(MAP_HDR + m->npages * MAP_PAGE));

			(void)trc;
			map_drop_pending(m);
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
	if (m->pend_words && !(o = map_calloc(1, sizeof(*o)))) {
		pthread_mutex_unlock(&m->flush_lock);
		return -ENOMEM;
	}
	info.geom.size = new_size;
	info.flags = flags;
	nb = sfs_geom_nblocks(&info.geom);
	sfs_mapfile_encode_header(&info, nb, &m->ident, h);
	rc = sfs_pwrite_all(m->fd, h, 512, 0);
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		free(o);
		pthread_mutex_unlock(&m->flush_lock);
		return rc;
	}
	if (m->pend_words) {
		memcpy(m->pend_words, m->words, m->npages * PAGE_WORDS * sizeof(uint64_t));
		memcpy(m->pend_dirty, m->dirty, (m->npages / 64 + 1) * sizeof(uint64_t));
		o->words = m->words;
		o->dirty = m->dirty;
		o->next = m->old;
		m->old = o;
		__atomic_store_n(&m->dirty, m->pend_dirty, __ATOMIC_RELEASE);
		__atomic_store_n(&m->words, m->pend_words, __ATOMIC_RELEASE);
		m->cap_pages = m->pend_cap;
		m->pend_words = m->pend_dirty = NULL;
	}
	m->npages = m->pend_pages;
	m->info = info;
	__atomic_store_n(&m->nblocks, nb, __ATOMIC_RELEASE);
	map_drop_pending(m);
	pthread_mutex_unlock(&m->flush_lock);
	return 0;
}

int sfs_map_grow_abort(struct sfs_map *m)
{
	int rc;

	if (m->rdonly)
		return -EROFS;
	pthread_mutex_lock(&m->flush_lock);
	map_drop_pending(m);
	/* a failed commit may have left the header in doubt: write the current one again */
	rc = map_write_header(m);
	if (ftruncate(m->fd, (off_t)(MAP_HDR + m->npages * MAP_PAGE)) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}

int sfs_map_shrink(struct sfs_map *m, uint64_t new_size)
{
	struct sfs_map_info info = m->info;
	unsigned char h[MAP_HDR];
	uint64_t nb, np;
	int rc;

	if (m->rdonly)
		return -EROFS;
	if (new_size > info.geom.size || new_size % info.geom.lss)
		return -EINVAL;
	info.geom.size = new_size;
	nb = sfs_geom_nblocks(&info.geom);
	if (sfs_map_next_set(m, nb) < sfs_map_nblocks(m))
		return -EBUSY;
	pthread_mutex_lock(&m->flush_lock);
	/* the header is the commit point: the blocks it drops were never written */
	sfs_mapfile_encode_header(&info, nb, &m->ident, h);
	rc = sfs_pwrite_all(m->fd, h, 512, 0);
	if (rc == 0 && fdatasync(m->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		pthread_mutex_unlock(&m->flush_lock);
		return rc;
	}
	m->info = info;
	__atomic_store_n(&m->nblocks, nb, __ATOMIC_RELEASE);
	np = sfs_mapfile_pages(SFS_MAPFILE_VERSION, nb);
	/* pages past the new end are never written again: forget they were dirty */
	for (uint64_t p = np; p < m->npages; p++)
		sfs_bitmap_clear(m->dirty, p);
	m->npages = np;
	/* what the header no longer describes: a later open would drop it anyway */
	if (ftruncate(m->fd, (off_t)(MAP_HDR + np * MAP_PAGE)) < 0 || fdatasync(m->fd) < 0)
		rc = -errno;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}

int sfs_map_set_ident(struct sfs_map *m, const struct sfs_map_ident *ident)
{
	struct sfs_map_ident was;
	int rc;

	if (m->rdonly)
		return -EROFS;
	pthread_mutex_lock(&m->flush_lock);
	was = m->ident;
	m->ident = *ident;
	m->ident.present = true;
	m->ident.self = m->file;
	/* one sector with its CRCs, written in place, as sfs_map_set_prov */
	rc = map_write_header(m);
	if (rc < 0)
		m->ident = was;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}

int sfs_map_set_prov(struct sfs_map *m, enum sfs_prov prov, uint32_t flags)
{
	struct sfs_map_info was;
	int rc;

	if (m->rdonly)
		return -EROFS;
	if (prov != SFS_PROV_THIN && prov != SFS_PROV_ZEROEDTHICK && prov != SFS_PROV_EAGERZEROEDTHICK)
		return -EINVAL;
	pthread_mutex_lock(&m->flush_lock);
	was = m->info;
	m->info.prov = prov;
	m->info.flags = flags;
	/* one sector with its CRC, written in place: a crash leaves the old header or the new */
	rc = map_write_header(m);
	if (rc < 0)
		m->info = was;
	pthread_mutex_unlock(&m->flush_lock);
	return rc;
}
