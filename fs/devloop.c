/* SPDX-License-Identifier: MIT */
/*
 * devloop.c - /dev/fuse served by one event loop.
 *
 * The workers of xport.c each block in read(2) of /dev/fuse, run the
 * handler (its pread or pwrite included) and writev the reply: every
 * request wakes a thread, and the thread sleeps again in the backing I/O.
 * Here one thread reads /dev/fuse through io_uring and does the fast
 * path's backing I/O (fast.c) on the same ring:
 *
 *   /dev/fuse readable --> multishot read into a provided buffer
 *     loop: plan (fast.c) --ISSUE--> IORING_OP_READ/WRITE/FSYNC of the backing file
 *                         --DONE---> reply: IORING_OP_WRITEV to /dev/fuse
 *                         --SLOW---> a helper (helpers.c) runs libfuse on it,
 *                                    which writes the reply itself, and gives
 *                                    the buffer back (eventfd)
 *     backing I/O completes --> sfs_fast_end --> reply
 *     reply written --> the buffer goes back to the ring for the next read
 *
 * Requests are read with one IORING_OP_READ_MULTISHOT (Linux 6.7) on
 * the session's descriptor, made O_NONBLOCK, into a ring of provided
 * buffers laid out as the workers' are (xport.c): the headers of a write
 * end at a page boundary, so its data starts on one and goes to the
 * O_DIRECT backing file as it is; a read's data is read into the pages
 * after its headers and written back from there.  One armed read: a
 * request wakes the loop once (several reads armed on one descriptor
 * would all wake for each request).  A buffer is in one of four places:
 * with the kernel (the provided ring), in the loop (a request in hand, its
 * backing I/O, its reply being written), with a helper, or given back by
 * a helper and queued for the loop.  Replies, backing I/O and re-armed
 * reads go in with the loop's next io_uring_enter.
 *
 * Buffers: the ring of provided buffers holds only a few free ones,
 * topped up from a stack of the others as requests take them, so that a
 * light load keeps using the same few warm buffers: a ring of all of them
 * would cycle through every one, a megabyte each (1 MiB writes at QD1:
 * 332 us of daemon CPU each with 8 buffers in the ring, 250 with 2, 246
 * for the workers).  A burst that finds the ring empty stops the
 * multishot read (-ENOBUFS): the requests wait in the kernel, the ring is
 * given twice as many (up to SPARE_MAX), and the read is armed again;
 * after SPARE_DECAY requests without a shortage it holds half as many
 * again (down to SPARE_MIN).
 *
 * Alone: as in uring_loop.c, a write or a flush that finds the loop with
 * nothing else to do is done right there with pwrite or fdatasync.
 *
 * Idle: the buffers in the provided ring are written only in the loop's
 * own io_uring_enter (a read is issued there, or in the task work of the
 * poll that wakes it, which IORING_SETUP_DEFER_TASKRUN runs there), so
 * the loop drops their pages between two enters when asked
 * (sfs_devloop_trim), as the workers drop theirs between two reads.  A
 * ring without DEFER_TASKRUN runs that task work at the end of any system
 * call of the loop: its buffers are never trimmed.
 *
 * End: a read that fails with ENODEV or ECONNABORTED (unmounted, or the
 * connection torn down) ends the session, as in xport.c's workers; the
 * stop eventfd (sfs_devloop_stop) ends the loop after it has submitted
 * the replies it has.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devloop.h"
#include "fast.h"
#include "helpers.h"
#include "uring.h"

#define OP_READ_MULTISHOT 49           /* IORING_OP_READ_MULTISHOT: Linux 6.7, not in liburing 2.3 */
#define BGID 0
#define SPARE_MIN 2                    /* free buffers in the kernel's ring at once ("Buffers") */
#define SPARE_MAX 32
#define SPARE_DECAY 1024               /* requests without a shortage before it halves */
#define WRITE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))

/* user_data below 16 are the loop's own; above, a buffer with a tag */
#define UD_READ 1
#define UD_STOP 2
#define UD_KICK 3
#define TAG_IO 1
#define TAG_REPLY 2
#define TAG_MASK 7ull

enum dstate { D_KERNEL, D_LOOP, D_HELPER };

struct dbuf {
	unsigned bid;
	enum dstate st;
	char *mem;                     /* mmap: a page, the largest payload, a page */
	char *at;                      /* the request, n bytes, read at mem + page - WRITE_HDR */
	size_t n;
	size_t touched;                /* bytes used since its pages were dropped */
	uint64_t unique;
	struct sfs_fast_req fr;
	struct fuse_out_header oh;
	struct fuse_write_out wo;
	struct iovec iov[2];
	struct sfs_job job;
	struct dbuf *done_next;
};

static struct {
	struct io_uring ring;
	bool ring_ok;
	int fd;
	size_t page, max_payload, len;  /* len: what a read may fill, from at */
	const struct sfs_log *log;
	struct dbuf *bufs;
	unsigned nbufs;
	struct io_uring_buf_ring *br;
	size_t br_len;
	unsigned br_entries;
	bool br_ok;
	struct dbuf **spare;           /* free buffers not in the ring: a stack, the warmest on top */
	unsigned nspare, in_ring;
	unsigned want;                 /* free buffers to keep in the ring, SPARE_MIN to SPARE_MAX */
	unsigned calm;                 /* requests since the ring last ran out */
	bool armed;                    /* the multishot read is in the kernel */
	unsigned busy;                 /* buffers in backing I/O or with a helper */
	struct dbuf *alone;            /* a write or flush that may block the loop */
	pthread_t thr;
	bool thr_ok;
	int stop_efd, kick_efd;
	uint64_t kick_val;
	atomic_bool kicked;
	pthread_mutex_t lock;          /* guards done, setup_rc and setup_done */
	pthread_cond_t cond;
	struct dbuf *done;
	int setup_rc;
	bool setup_done;
	atomic_size_t trim_min;        /* 0: no trim asked */
	bool ended;                    /* the session ended: no more reads */
} L = { .fd = -1, .stop_efd = -1, .kick_efd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static struct io_uring_sqe *sqe_of(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&L.ring);

	if (!sqe && io_uring_submit(&L.ring) >= 0)
		sqe = io_uring_get_sqe(&L.ring);
	if (sqe)
		memset(sqe, 0, sizeof(*sqe));
	return sqe;
}

/* Arm the multishot read of /dev/fuse. */
static void arm(void)
{
	struct io_uring_sqe *sqe;

	if (L.armed || L.ended || !L.in_ring || !(sqe = sqe_of()))
		return;
	sqe->opcode = OP_READ_MULTISHOT;
	sqe->fd = 0;                   /* /dev/fuse, registered at index 0 */
	sqe->flags = IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = UD_READ;
	L.armed = true;
}

/* Keep L.want buffers in the kernel's ring, the most recently used first: a buffer just freed
 * is warm (its pages are there), one long unused may have been trimmed. */
static void top_up(void)
{
	unsigned added = 0;

	while (L.in_ring + added < L.want && L.nspare) {
		struct dbuf *b = L.spare[--L.nspare];

		b->st = D_KERNEL;
		io_uring_buf_ring_add(L.br, b->mem + L.page - WRITE_HDR, (unsigned)L.len, (unsigned short)b->bid,
				      io_uring_buf_ring_mask(L.br_entries), (int)added);
		added++;
	}
	if (added) {
		io_uring_buf_ring_advance(L.br, (int)added);
		L.in_ring += added;
	}
	arm();
}

/* b is free again. */
static void recycle(struct dbuf *b)
{
	b->st = D_KERNEL;
	L.spare[L.nspare++] = b;
	top_up();
}

/* The fast path's answer res for b's request, written to /dev/fuse. */
static void reply(struct dbuf *b, ssize_t res)
{
	struct io_uring_sqe *sqe = sqe_of();
	int n = 1;

	b->oh = (struct fuse_out_header){ .len = sizeof(b->oh), .error = res < 0 ? (int32_t)res : 0,
					  .unique = b->unique };
	b->iov[0] = (struct iovec){ &b->oh, sizeof(b->oh) };
	if (res >= 0 && b->fr.opcode == FUSE_WRITE) {
		b->wo = (struct fuse_write_out){ .size = (uint32_t)res };
		b->iov[1] = (struct iovec){ &b->wo, sizeof(b->wo) };
		n = 2;
	} else if (res > 0 && b->fr.opcode == FUSE_READ) {
		b->iov[1] = (struct iovec){ b->fr.buf, (size_t)res };
		n = 2;
		if ((size_t)res > b->touched)
			b->touched = (size_t)res;
	}
	if (n == 2)
		b->oh.len += (uint32_t)b->iov[1].iov_len;
	if (!sqe) {
		/* cannot happen with the ring sized for every buffer: write it now */
		struct iovec iov[2] = { b->iov[0], b->iov[1] };

		if (writev(L.fd, iov, n) < 0 && errno != ENOENT)
			sfs_logf(L.log, SFS_LOG_ERR, "writing a reply to /dev/fuse: %s", strerror(errno));
		recycle(b);
		return;
	}
	io_uring_prep_writev(sqe, 0, b->iov, (unsigned)n, 0);
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->user_data = (uint64_t)(uintptr_t)b | TAG_REPLY;
}

/* A helper gives b back: queued for the loop, which is woken once for all queued meanwhile. */
static void give_back(struct dbuf *b)
{
	uint64_t one = 1;

	pthread_mutex_lock(&L.lock);
	b->done_next = L.done;
	L.done = b;
	pthread_mutex_unlock(&L.lock);
	if (!atomic_exchange(&L.kicked, true) && write(L.kick_efd, &one, sizeof(one)) != sizeof(one))
		sfs_logf(L.log, SFS_LOG_ERR, "cannot wake the /dev/fuse loop");
}

/* On a helper: b's request through libfuse, which writes the reply. */
static void helper_serve(struct sfs_job *j)
{
	struct dbuf *b = (struct dbuf *)(void *)((char *)j - offsetof(struct dbuf, job));

	sfs_xport_serve_dev(b->at, b->n, b->mem + L.page, &b->touched);
	give_back(b);
}

static void to_helper(struct dbuf *b)
{
	if (b->st != D_HELPER)
		L.busy++;
	b->st = D_HELPER;
	b->job.fn = helper_serve;
	if (sfs_helpers_submit(&b->job) < 0)
		helper_serve(&b->job);     /* on the loop itself: gives it back, the next kick recycles it */
}

/* b's backing transfer on the ring. */
static void issue(struct dbuf *b)
{
	struct io_uring_sqe *sqe = sqe_of();
	ssize_t res;

	if (!sqe) {
		sfs_fast_end(&b->fr, -EAGAIN, &res);
		to_helper(b);
		return;
	}
	if (b->fr.io.op == SFS_FAST_SYNC)
		io_uring_prep_fsync(sqe, b->fr.io.fd, IORING_FSYNC_DATASYNC);
	else if (b->fr.io.op == SFS_FAST_WRITE)
		io_uring_prep_write(sqe, b->fr.io.fd, b->fr.buf, (unsigned)b->fr.io.len, b->fr.io.off);
	else
		io_uring_prep_read(sqe, b->fr.io.fd, b->fr.buf, (unsigned)b->fr.io.len, b->fr.io.off);
	sqe->user_data = (uint64_t)(uintptr_t)b | TAG_IO;
	L.busy++;
}

/* b's backing transfer ended with res (it was counted in busy). */
static void on_io(struct dbuf *b, ssize_t res)
{
	ssize_t out = 0;

	L.busy--;
	if (sfs_fast_end(&b->fr, res, &out) == SFS_FAST_DONE)
		reply(b, out);
	else
		to_helper(b);              /* a short or failed transfer: redone the blocking way */
}

/* A request of res bytes in buffer bid. */
static void on_request(unsigned bid, int res)
{
	struct dbuf *b;
	ssize_t out = 0;

	if (bid >= L.nbufs) {
		sfs_logf(L.log, SFS_LOG_ERR, "/dev/fuse: a read into an unknown buffer %u", bid);
		return;
	}
	b = &L.bufs[bid];
	b->st = D_LOOP;
	L.in_ring--;
	if (++L.calm >= SPARE_DECAY && L.want > SPARE_MIN) {
		L.want /= 2;
		L.calm = 0;
	}
	top_up();
	b->at = b->mem + L.page - WRITE_HDR;
	b->n = (size_t)res;
	if (b->n > b->touched)
		b->touched = b->n;
	if (b->n < sizeof(struct fuse_in_header)) {
		recycle(b);
		return;
	}
	b->unique = ((const struct fuse_in_header *)(void *)b->at)->unique;
	switch (sfs_fast_begin(b->at, b->n, b->mem + L.page, L.max_payload, &b->fr, &out)) {
	case SFS_FAST_DONE:
		sfs_xport_note_request();
		reply(b, out);
		return;
	case SFS_FAST_ISSUE:
		sfs_xport_note_request();
		if (b->fr.io.op == SFS_FAST_READ || L.busy) {
			issue(b);
		} else if (L.alone) {
			issue(L.alone);        /* two in one go: neither is alone */
			L.alone = NULL;
			issue(b);
		} else {
			L.alone = b;
		}
		return;
	case SFS_FAST_SLOW:
		break;
	}
	to_helper(b);                  /* sfs_xport_serve counts it */
}

/* The write or flush held back while the loop had nothing else: done here, blocking, when
 * that is still so, else on the ring. */
static void run_alone(void)
{
	struct dbuf *b = L.alone;
	ssize_t res;

	L.alone = NULL;
	if (L.busy) {
		issue(b);
		return;
	}
	if (io_uring_sq_ready(&L.ring))
		io_uring_submit(&L.ring);    /* the replies already made go first */
	L.busy++;
	if (b->fr.io.op == SFS_FAST_SYNC)
		res = fdatasync(b->fr.io.fd) < 0 ? -errno : 0;
	else if ((res = pwrite(b->fr.io.fd, b->fr.buf, b->fr.io.len, (off_t)b->fr.io.off)) < 0)
		res = -errno;
	on_io(b, res);
}

/* Buffers helpers gave back: to the kernel again. */
static void on_kick(void)
{
	struct io_uring_sqe *sqe = sqe_of();
	struct dbuf *b;

	if (sqe) {
		io_uring_prep_read(sqe, L.kick_efd, &L.kick_val, sizeof(L.kick_val), 0);
		sqe->user_data = UD_KICK;
	}
	atomic_store(&L.kicked, false);    /* before taking the list: a later give_back kicks again */
	pthread_mutex_lock(&L.lock);
	b = L.done;
	L.done = NULL;
	pthread_mutex_unlock(&L.lock);
	for (struct dbuf *next; b; b = next) {
		next = b->done_next;
		L.busy--;
		recycle(b);
	}
}

/* Drop the pages of the buffers in the kernel's ring that held min bytes or more ("Idle"). */
static void trim(size_t min)
{
	for (unsigned i = 0; i < L.nbufs; i++) {
		struct dbuf *b = &L.bufs[i];

		if (b->st != D_KERNEL || b->touched < min)
			continue;
		if (madvise(b->mem, L.page + L.max_payload + L.page, MADV_DONTNEED) == 0)
			b->touched = 0;
	}
}

/* The read of /dev/fuse completed with res (flags: the CQE's). */
static void on_read(int res, unsigned flags)
{
	if (!(flags & IORING_CQE_F_MORE))
		L.armed = false;
	if (res >= 0 && (flags & IORING_CQE_F_BUFFER)) {
		on_request(flags >> IORING_CQE_BUFFER_SHIFT, res);
	} else if (res == -ENODEV || res == -ECONNABORTED) {
		/* unmounted, or the connection torn down (xport.c's workers say why) */
		L.ended = true;
		sfs_xport_end(0);
	} else if (res < 0 && res != -ENOBUFS && res != -EAGAIN && res != -EINTR && res != -ENOENT) {
		sfs_logf(L.log, SFS_LOG_ERR, "reading /dev/fuse: %s", strerror(-res));
		L.ended = true;
		sfs_xport_end(res);
	}
	/* -ENOBUFS: the ring ran out in a burst: keep more in it ("Buffers") */
	if (res == -ENOBUFS) {
		L.calm = 0;
		if (L.want < SPARE_MAX) {
			L.want *= 2;
			top_up();
		}
	}
	arm();
}

/* A completion; *stop set for the stop eventfd. */
static void on_cqe(uint64_t ud, int res, unsigned flags, bool *stop)
{
	struct dbuf *b = (struct dbuf *)(uintptr_t)(ud & ~TAG_MASK);

	if (ud == UD_READ)
		on_read(res, flags);
	else if (ud == UD_STOP)
		*stop = true;
	else if (ud == UD_KICK)
		on_kick();
	else if ((ud & TAG_MASK) == TAG_IO)
		on_io(b, res);
	else if ((ud & TAG_MASK) == TAG_REPLY) {
		/* ENOENT: the request was interrupted and answered already, or aborted */
		if (res < 0 && res != -ENOENT && res != -ENODEV && res != -ECONNABORTED)
			sfs_logf(L.log, SFS_LOG_ERR, "writing a reply to /dev/fuse: %s", strerror(-res));
		recycle(b);
	}
}

static int setup(void);

/* The loop's thread: its ring set up (SINGLE_ISSUER: on this thread), reported, then served. */
static void *loop_main(void *arg)
{
	bool stop = false;
	int rc = setup();

	(void)arg;
	pthread_mutex_lock(&L.lock);
	L.setup_rc = rc;
	L.setup_done = true;
	pthread_cond_broadcast(&L.cond);
	pthread_mutex_unlock(&L.lock);
	if (rc < 0)
		return NULL;
	while (!stop && !L.ended) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		size_t min;

		rc = io_uring_submit_and_wait(&L.ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			sfs_logf(L.log, SFS_LOG_ERR, "/dev/fuse loop: %s", strerror(-rc));
			sfs_xport_end(rc);
			break;
		}
		io_uring_for_each_cqe(&L.ring, head, cqe) {
			seen++;
			on_cqe(cqe->user_data, cqe->res, cqe->flags, &stop);
		}
		io_uring_cq_advance(&L.ring, seen);
		if (L.alone)
			run_alone();
		if ((min = atomic_exchange(&L.trim_min, 0)))
			trim(min);
	}
	io_uring_submit(&L.ring);          /* the replies in hand */
	return NULL;
}

/* The ring, its provided buffers, the read armed, the stop and kick watched.  0 or -errno. */
static int setup(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };
	struct io_uring_buf_reg reg = { 0 };
	struct io_uring_sqe *sqe;
	int rc;

	if (io_uring_queue_init_params(2 * L.nbufs + 8, &L.ring, &p) < 0) {
		memset(&p, 0, sizeof(p));
		if ((rc = io_uring_queue_init_params(2 * L.nbufs + 8, &L.ring, &p)) < 0)
			return rc;
	}
	L.ring_ok = true;
	if ((rc = io_uring_register_files(&L.ring, &L.fd, 1)) < 0)
		return rc;
	for (L.br_entries = 1; L.br_entries < SPARE_MAX; L.br_entries *= 2)
		;
	L.br_len = (L.br_entries * sizeof(struct io_uring_buf) + L.page - 1) / L.page * L.page;
	L.br = mmap(NULL, L.br_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (L.br == MAP_FAILED) {
		L.br = NULL;
		return -ENOMEM;
	}
	reg.ring_addr = (uint64_t)(uintptr_t)L.br;
	reg.ring_entries = L.br_entries;
	reg.bgid = BGID;
	if ((rc = io_uring_register_buf_ring(&L.ring, &reg, 0)) < 0)
		return rc;
	L.br_ok = true;
	io_uring_buf_ring_init(L.br);
	L.in_ring = L.nspare = L.calm = 0;
	L.want = SPARE_MIN;
	for (unsigned i = L.nbufs; i-- > 0;)
		L.spare[L.nspare++] = &L.bufs[i];
	top_up();
	if (!(sqe = sqe_of()))
		return -EBUSY;
	io_uring_prep_poll_add(sqe, L.stop_efd, POLLIN);
	sqe->user_data = UD_STOP;
	L.kicked = true;
	on_kick();                     /* arms the kick's read */
	L.busy = 0;
	rc = io_uring_submit(&L.ring);
	return rc < 0 ? rc : 0;
}

int sfs_devloop_start(const struct sfs_devloop_cfg *cfg)
{
	sigset_t all, old;
	int rc = 0, fl;

	L.fd = cfg->fd;
	L.page = cfg->page;
	L.max_payload = cfg->max_payload;
	L.len = L.max_payload + L.page + WRITE_HDR;
	L.log = cfg->log;
	L.nbufs = cfg->nbufs ? cfg->nbufs : 1;
	L.ended = L.armed = false;
	L.stop_efd = eventfd(0, EFD_CLOEXEC);
	L.kick_efd = eventfd(0, EFD_CLOEXEC);
	L.bufs = calloc(L.nbufs, sizeof(*L.bufs));
	L.spare = calloc(L.nbufs, sizeof(*L.spare));
	if (L.stop_efd < 0 || L.kick_efd < 0 || !L.bufs || !L.spare) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < L.nbufs; i++) {
		L.bufs[i].bid = i;
		L.bufs[i].mem = mmap(NULL, L.page + L.max_payload + L.page, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (L.bufs[i].mem == MAP_FAILED) {
			L.bufs[i].mem = NULL;
			rc = -ENOMEM;
			goto fail;
		}
	}
	/* the loop never blocks in a read: an empty queue is -EAGAIN, and io_uring waits for it */
	if ((fl = fcntl(L.fd, F_GETFL)) < 0 || fcntl(L.fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	L.setup_done = false;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);    /* signals are the main thread's */
	rc = -pthread_create(&L.thr, NULL, loop_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0)
		goto fail;
	pthread_mutex_lock(&L.lock);
	while (!L.setup_done)
		pthread_cond_wait(&L.cond, &L.lock);
	rc = L.setup_rc;
	pthread_mutex_unlock(&L.lock);
	if (rc == 0) {
		L.thr_ok = true;
		return 0;
	}
	pthread_join(L.thr, NULL);
fail:
	sfs_logf(L.log, SFS_LOG_ERR, "cannot set up the /dev/fuse loop: %s", strerror(-rc));
	sfs_devloop_stop();
	sfs_devloop_free();
	return rc;
}

void sfs_devloop_stop(void)
{
	uint64_t one = 1;

	if (L.thr_ok) {
		if (write(L.stop_efd, &one, sizeof(one)) != sizeof(one))
			sfs_logf(L.log, SFS_LOG_WARN, "cannot wake the /dev/fuse loop: %s", strerror(errno));
		pthread_join(L.thr, NULL);
		L.thr_ok = false;
	}
	if (L.ring_ok)
		io_uring_queue_exit(&L.ring);
	L.ring_ok = L.br_ok = false;
}

void sfs_devloop_free(void)
{
	for (unsigned i = 0; L.bufs && i < L.nbufs; i++)
		if (L.bufs[i].mem)
			munmap(L.bufs[i].mem, L.page + L.max_payload + L.page);
	free(L.bufs);
	L.bufs = NULL;
	free(L.spare);
	L.spare = NULL;
	if (L.br)
		munmap(L.br, L.br_len);
	L.br = NULL;
	if (L.stop_efd >= 0)
		close(L.stop_efd);
	if (L.kick_efd >= 0)
		close(L.kick_efd);
	L.stop_efd = L.kick_efd = -1;
	L.done = NULL;
}

unsigned sfs_devloop_trim(size_t min)
{
	uint64_t one = 1;

	/* without DEFER_TASKRUN a read can fill a buffer at the end of any of the loop's system
	 * calls, before the loop has seen its completion: no trimming then */
	if (!L.thr_ok || !min || !(L.ring.flags & IORING_SETUP_DEFER_TASKRUN))
		return 0;
	atomic_store(&L.trim_min, min);
	/* the kick wakes the loop; it trims after the completions it finds */
	if (!atomic_exchange(&L.kicked, true) && write(L.kick_efd, &one, sizeof(one)) != sizeof(one))
		return 0;
	return 1;
}
