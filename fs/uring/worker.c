/* SPDX-License-Identifier: MIT */
/*
 * worker.c - FUSE over io_uring: the worker of a ring entry, its
 * loop, serving a request and its reply, pinning by load and the trimming
 * of its payload buffer.  The rings and the workers are set up, started
 * and stopped in setup.c.
 *
 * Each entry has a worker thread of its own, with its own small ring: the
 * worker waits for its entry's request, runs the handler (the blocking
 * pread or pwrite included), puts the reply in the entry and commits it
 * with the wait for its next request, one io_uring_enter.  A request
 * costs the same two thread switches as on /dev/fuse (the kernel wakes
 * the worker whose entry it fills, the reply wakes the caller), with one
 * system call instead of a read and a writev.  The kernel fills the entry
 * committed last first, so a light load stays on one warm thread.
 *
 * Serving: requests reach libfuse as they do from /dev/fuse, through
 * sfs_xport_serve() (xport.c): the kernel puts the fuse_in_header and the
 * per-opcode header in the entry's header buffer and the rest in its
 * payload buffer, page-aligned; the worker copies the two headers (at most
 * 168 bytes) to just before the payload, in the spare page before it,
 * so libfuse sees one contiguous request and a write's data stays where
 * the kernel put it, page-aligned for O_DIRECT:
 *
 *   region:  [ header buffer (288 B) ...   | in | op ][ payload ......... ]
 *            ^ iov[0]                      ^ to libfuse ^ iov[1], page-aligned
 *
 * The reply comes back through xport.c's writev hook to sfs_uring_reply()
 * (the out header into the header buffer, the arguments into the payload
 * buffer), and a read's data is read straight into the payload buffer
 * (sfs_uring_reply_mem), so no data byte is copied either way.
 *
 * Pinning: a worker is pinned to the CPU of its queue (where the caller
 * that queued the request has just gone to sleep) only while its queue is
 * busy, and runs on any CPU while it serves its queue's requests alone.
 * Measured on 2 CPUs (4 KiB reads that touch no disk): pinned, QD1 took
 * 30-42 us a request against 12 us unpinned, the worker waiting for the
 * caller's CPU; at 4 jobs x QD8, pinned kept 122-132k IOPS against 86-112k
 * unpinned.  A worker pins when it takes a request while another of its
 * queue's is being served, and unpins after PIN_ALONE requests in a row
 * served alone.
 *
 * Idle: once the mount is quiet (idle.c), sfs_uring_trim() wakes each
 * worker whose payload buffer held 64 KiB or more with a message on its
 * ring (IORING_OP_MSG_RING from the fall-back ring), and the worker drops
 * the buffer's pages itself (MADV_DONTNEED: they read as zeros and are
 * faulted in again when written).  The kernel writes a request into an
 * entry only in the worker's own io_uring_enter: in the COMMIT_AND_FETCH
 * that fetches it, or in the task work that fills an idle entry, which a
 * ring with IORING_SETUP_DEFER_TASKRUN runs only when its worker waits in
 * io_uring_enter; either way the completion is in the ring when the call
 * returns.  So a worker back from io_uring_enter, with no request among
 * the completions it took and no commit left to submit, holds a buffer
 * nothing writes into: the kernel's next copy comes in its next wait.  A
 * worker with a reply still to commit commits it first (and runs the
 * ring's task work, without waiting: io_uring_submit_and_get_events) and
 * looks again.  A ring without DEFER_TASKRUN runs task work
 * whenever its thread returns to user space, so its entry is never
 * trimmed.  This rests on the kernel copying from the worker's own task
 * (fs/fuse/dev_uring.c up to 6.18 does): tests/mount/trim.sh checks it.
 *
 * For measurements only: SFS_XP_NOPIN=1 in the environment leaves the
 * workers unpinned whatever the load (read in setup.c at the start).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define PIN_ALONE 32                   /* requests served alone before a pinned worker unpins */

/* Pinning by load ("Pinning" above): e's worker serves a request while n of its queue's
 * requests are being served, this one included. */
static void pin_by_load(struct sfs_uring_ent *e, unsigned n)
{
	cpu_set_t set;

	if (!sfs_uring.pin)
		return;
	if (n >= 2) {
		e->alone = 0;
		if (e->pinned)
			return;
		CPU_ZERO(&set);
		CPU_SET(e->qid, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0)   /* best effort */
			e->pinned = true;
	} else if (e->pinned && ++e->alone >= PIN_ALONE) {
		if (pthread_setaffinity_np(pthread_self(), sizeof(sfs_uring.all), &sfs_uring.all) == 0)
			e->pinned = false;
		e->alone = 0;
	}
}


void sfs_uring_touch(struct sfs_uring_ent *e, size_t n)
{
	if (n > atomic_load_explicit(&e->touched, memory_order_relaxed))
		atomic_store_explicit(&e->touched, n, memory_order_relaxed);
}

char *sfs_uring_ent_take(struct sfs_uring_ent *e, size_t *n)
{
	const struct fuse_in_header *in = (const void *)e->hdr->in_out;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	size_t hl = sizeof(*in), op;
	char *at;

	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	e->replied = false;
	sfs_uring_touch(e, psz);
	if (in->len < hl + psz || in->len - hl - psz > SFS_URING_OP_IN_OUT_SZ || psz > sfs_uring.max_payload)
		return NULL;
	op = in->len - hl - psz;
	at = e->payload - hl - op;
	memcpy(at, in, hl);
	memcpy(at + hl, e->hdr->op_in, op);
	*n = hl + op + psz;
	return at;
}

void sfs_uring_ent_answered(struct sfs_uring_ent *e)
{
	struct fuse_out_header *oh = (void *)e->hdr->in_out;
	uint64_t unique = e->commit_id;

	if (e->replied)
		return;
	/* malformed, or not answered: the kernel still needs an answer to free the entry */
	sfs_logf(sfs_uring.log, SFS_LOG_WARN, "io_uring: request %llu (opcode %u) not answered; replying EIO",
		 (unsigned long long)unique, ((const struct fuse_in_header *)(void *)oh)->opcode);
	memset(oh, 0, sizeof(*oh));
	oh->unique = unique;
	oh->error = -EIO;
	e->hdr->ring_ent_in_out.payload_sz = 0;
	if (e->lent) {
		e->lent->buf[0].mem = NULL;
		e->lent = NULL;
	}
}

/* The request now in e: to libfuse, and the reply (or an error) prepared for commit. */
static void ent_serve(struct sfs_uring_ent *e)
{
	size_t n;
	char *at = sfs_uring_ent_take(e, &n);

	if (at) {
		atomic_store_explicit(&e->unique, ((const struct fuse_in_header *)(void *)at)->unique,
				      memory_order_release);
		pin_by_load(e, atomic_fetch_add(&sfs_uring.busy[e->qid], 1) + 1);
		sfs_xport_serve(at, n, e);
		atomic_fetch_sub(&sfs_uring.busy[e->qid], 1);
		atomic_store_explicit(&e->unique, 0, memory_order_release);
	}
	sfs_uring_ent_answered(e);
	sfs_uring_prep_ent(e, SFS_URING_CMD_COMMIT_AND_FETCH);
}

/* e's command waits in the kernel with no request copied in ("Idle" above): drop the payload's pages. */
static void ent_trim(struct sfs_uring_ent *e)
{
	atomic_store(&e->trim, false);
	if (madvise(e->payload, sfs_uring.max_payload, MADV_DONTNEED) == 0)
		atomic_store_explicit(&e->touched, 0, memory_order_relaxed);
}

void sfs_uring_ent_loop(struct sfs_uring_ent *e)
{
	bool stop = false, gone = false, nowait = false;

	while (!stop && !gone) {
		struct io_uring_cqe *cqe;
		/* nowait: commit the reply in hand, run the ring's task work and look at what came */
		int rc = nowait ? io_uring_submit_and_get_events(&e->ring) : io_uring_submit_and_wait(&e->ring, 1);

		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: %s", e->qid, strerror(-rc));
			break;
		}
		while (io_uring_peek_cqe(&e->ring, &cqe) == 0) {
			uint64_t ud = cqe->user_data;
			int res = cqe->res;

			io_uring_cqe_seen(&e->ring, cqe);
			if (ud == UD_STOP)
				stop = true;
			else if (ud == UD_TRIM)
				;                /* e->trim says it */
			else if (res == 0)
				ent_serve(e);
			else if (res == -EINTR || res == -EAGAIN)
				sfs_uring_prep_ent(e, e->last_cmd);
			else {
				/* -ENOTCONN, -ECONNABORTED: unmounted or aborted, as ENODEV on /dev/fuse */
				if (res != -ENOTCONN && res != -ECONNABORTED && res != -ECANCELED)
					sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: command failed: %s", e->qid,
						 strerror(-res));
				gone = true;
			}
		}
		nowait = false;
		if (!stop && !gone && e->defer && atomic_load(&e->trim)) {
			if (io_uring_sq_ready(&e->ring))
				nowait = true;
			else
				ent_trim(e);
		}
	}
	if (stop)
		io_uring_submit(&e->ring);   /* the commit of the request in hand, if any */
}


ssize_t sfs_uring_reply(struct sfs_uring_ent *e, const struct iovec *iov, int count)
{
	struct fuse_out_header *oh = (void *)e->hdr->in_out;
	size_t len = 0, total = 0;

	for (int i = 0; i < count; i++)
		total += iov[i].iov_len;
	memcpy(oh, iov[0].iov_base, sizeof(*oh));
	for (int i = 1; i < count; i++) {
		size_t l = iov[i].iov_len;

		if (l > sfs_uring.max_payload - len) {
			oh->error = -EIO;
			len = 0;
			break;
		}
		if ((char *)iov[i].iov_base != e->payload + len)
			memmove(e->payload + len, iov[i].iov_base, l);
		len += l;
	}
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	e->replied = true;
	sfs_uring_touch(e, len);
	if (e->lent) {
		e->lent->buf[0].mem = NULL;   /* the buffer is the entry's: libfuse frees the vector only */
		e->lent = NULL;
	}
	return (ssize_t)total;
}

struct sfs_uring_ent *sfs_uring_find(uint64_t unique)
{
	if (!atomic_load(&sfs_uring.ready))
		return NULL;
	for (unsigned i = 0; i < sfs_uring.n; i++)
		if (atomic_load_explicit(&sfs_uring.ents[i].unique, memory_order_acquire) == unique)
			return &sfs_uring.ents[i];
	return NULL;
}

void *sfs_uring_reply_mem(struct sfs_uring_ent *e, size_t size)
{
	if (size > sfs_uring.max_payload)
		return NULL;
	sfs_uring_touch(e, size);
	return e->payload;
}

void sfs_uring_lend(struct sfs_uring_ent *e, struct fuse_bufvec *bv)
{
	e->lent = bv;
}

unsigned sfs_uring_trim(size_t min)
{
	unsigned n = 0;

	pthread_mutex_lock(&sfs_uring.trim_lock);
	if (sfs_uring.trim_ok && sfs_uring.loop) {
		n = sfs_uring_loops_trim(min);
		pthread_mutex_unlock(&sfs_uring.trim_lock);
		return n;
	}
	for (unsigned i = 0; sfs_uring.trim_ok && i < sfs_uring.n; i++) {
		struct sfs_uring_ent *e = &sfs_uring.ents[i];
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		int rc;

		/* one message at a time: a worker busy with a long request finds one when it is back */
		if (!e->ring_ok || !e->defer || atomic_load_explicit(&e->touched, memory_order_relaxed) < min ||
		    atomic_load(&e->trim) || !(sqe = io_uring_get_sqe(&sfs_uring.ctl)))
			continue;
		atomic_store(&e->trim, true);
		io_uring_prep_msg_ring(sqe, e->ring.ring_fd, 0, UD_TRIM, 0);
		rc = io_uring_submit_and_wait(&sfs_uring.ctl, 1);
		if (rc >= 0 && io_uring_peek_cqe(&sfs_uring.ctl, &cqe) == 0) {
			rc = cqe->res;
			io_uring_cqe_seen(&sfs_uring.ctl, cqe);
		}
		if (rc < 0 && !sfs_uring.trim_said) {
			/* the worker trims after its next request instead */
			sfs_logf(sfs_uring.log, SFS_LOG_WARN, "io_uring: cannot wake a ring worker to give memory back: %s",
				 strerror(-rc));
			sfs_uring.trim_said = true;
		}
		n += rc >= 0;
	}
	pthread_mutex_unlock(&sfs_uring.trim_lock);
	return n;
}

