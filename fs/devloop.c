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
 * Buffers: a few free ones in the kernel's ring at a time, the warmest
 * first (devbuf.c); a burst that empties the ring ends the multishot read
 * (-ENOBUFS), and it is armed again once the ring has more.
 *
 * Alone: as in uring/loop.c, a write or a flush that finds the loop with
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
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devbuf.h"
#include "devloop.h"
#include "uring/uring.h"
#include "util/thread.h"

#define OP_READ_MULTISHOT 49           /* IORING_OP_READ_MULTISHOT: Linux 6.7, not in liburing 2.3 */
#define BGID 0

/* user_data below 16 are the loop's own; above, a buffer with a tag */
#define UD_READ 1
#define UD_STOP 2
#define UD_KICK 3
#define TAG_IO 1
#define TAG_REPLY 2
#define TAG_MASK 7ull

typedef struct sfs_devbuf dbuf_t;

static struct {
	struct io_uring ring;
	bool ring_ok;
	int fd;
	size_t page, max_payload;
	const struct sfs_log *log;
	struct sfs_devbufs bufs;
	bool armed;                    /* the multishot read is in the kernel */
	unsigned busy;                 /* buffers in backing I/O or with a helper */
	unsigned on_ring;              /* buffers whose backing transfer is on the ring */
	dbuf_t *alone;            /* a write or flush that may block the loop */
	pthread_t thr;
	bool thr_ok;
	int stop_efd;
	struct sfs_back back;          /* what the helpers are done with */
	pthread_mutex_t lock;          /* guards setup_rc, setup_done and thr_ok */
	pthread_cond_t cond;
	int setup_rc;
	bool setup_done;
	atomic_size_t trim_min;        /* 0: no trim asked */
	bool ended;                    /* the session ended: no more reads */
} L = { .fd = -1, .stop_efd = -1, .back = { .efd = -1 }, .lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER };

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

	if (L.armed || L.ended || !sfs_devbufs_in_ring(&L.bufs) || !(sqe = sqe_of()))
		return;
	sqe->opcode = OP_READ_MULTISHOT;
	sqe->fd = 0;                   /* /dev/fuse, registered at index 0 */
	sqe->flags = IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->user_data = UD_READ;
	L.armed = true;
}

/* b is free again: back to the kernel's ring (or the stack of spares), the read armed. */
static void recycle(dbuf_t *b)
{
	sfs_devbufs_put(&L.bufs, b);
	arm();
}

/* The fast path's answer res for b's request, written to /dev/fuse. */
static void reply(dbuf_t *b, ssize_t res)
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

/* On a helper: b's request through libfuse, which writes the reply. */
static void helper_serve(struct sfs_job *j)
{
	dbuf_t *b = (dbuf_t *)(void *)((char *)j - offsetof(dbuf_t, job));

	atomic_store(&b->in_libfuse, true);
	sfs_xport_serve_dev(b->at, b->n, b->mem + L.page, &b->touched);
	atomic_store(&b->in_libfuse, false);
	sfs_back_give(&L.back, &b->job);
}

static void to_helper(dbuf_t *b)
{
	if (b->st != SFS_DB_HELPER)
		L.busy++;
	b->st = SFS_DB_HELPER;
	b->job.fn = helper_serve;
	if (sfs_helpers_submit(&b->job) < 0)
		helper_serve(&b->job);     /* on the loop itself: gives it back, the next kick recycles it */
}

/* b's backing transfer on the ring. */
static void issue(dbuf_t *b)
{
	struct io_uring_sqe *sqe = sqe_of();
	ssize_t res;

	if (!sqe) {
		sfs_fast_end(&b->fr, -EAGAIN, &res);
		to_helper(b);
		return;
	}
	sfs_fast_prep(sqe, &b->fr);
	sqe->user_data = (uint64_t)(uintptr_t)b | TAG_IO;
	L.busy++;
	L.on_ring++;
}

/* b's backing transfer ended with res (it was counted in busy). */
static void on_io(dbuf_t *b, ssize_t res)
{
	ssize_t out = 0;

	L.busy--;
	if (sfs_fast_end(&b->fr, res, &out) == SFS_FAST_DONE)
		reply(b, out);
	else
		to_helper(b);              /* a short or failed transfer: redone the blocking way */
}

/* Is the request with unique id u with libfuse now, on a helper of this loop or of the ring's? */
static bool with_libfuse(uint64_t u)
{
	for (unsigned i = 0; i < L.bufs.n; i++)
		if (L.bufs.bufs[i].st == SFS_DB_HELPER && L.bufs.bufs[i].unique == u &&
		    atomic_load(&L.bufs.bufs[i].in_libfuse))
			return true;
	return sfs_uring_find(u) != NULL;
}

/* A request of res bytes in buffer bid. */
static void on_request(unsigned bid, int res)
{
	dbuf_t *b = sfs_devbufs_taken(&L.bufs, bid, (size_t)res);
	uint64_t target;
	ssize_t out = 0;

	if (!b) {
		sfs_logf(L.log, SFS_LOG_ERR, "/dev/fuse: a read into an unknown buffer %u", bid);
		return;
	}
	arm();
	if (b->n < sizeof(struct fuse_in_header)) {
		recycle(b);
		return;
	}
	b->unique = ((const struct fuse_in_header *)(void *)b->at)->unique;
	if (sfs_fast_interrupt(b->at, b->n, &target) && !with_libfuse(target)) {
		recycle(b);                /* sfs_fast_interrupt says why */
		return;
	}
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
	dbuf_t *b = L.alone;

	L.alone = NULL;
	if (L.busy) {
		issue(b);
		return;
	}
	if (io_uring_sq_ready(&L.ring))
		io_uring_submit(&L.ring);    /* the replies already made go first */
	L.busy++;
	on_io(b, sfs_fast_block(&b->fr));
}

/* Buffers helpers gave back: to the kernel again. */
static void on_kick(void)
{
	struct io_uring_sqe *sqe = sqe_of();

	if (sqe) {
		io_uring_prep_read(sqe, L.back.efd, &L.back.val, sizeof(L.back.val), 0);
		sqe->user_data = UD_KICK;
	}
	for (struct sfs_job *j = sfs_back_take(&L.back), *next; j; j = next) {
		next = j->next;
		L.busy--;
		recycle((dbuf_t *)(void *)((char *)j - offsetof(dbuf_t, job)));
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
	if (res == -ENOBUFS)
		sfs_devbufs_short(&L.bufs);     /* the ring ran out in a burst: more in it */
	arm();
}

/* A completion; *stop set for the stop eventfd. */
static void on_cqe(uint64_t ud, int res, unsigned flags, bool *stop)
{
	dbuf_t *b = (dbuf_t *)(uintptr_t)(ud & ~TAG_MASK);

	if (ud == UD_READ)
		on_read(res, flags);
	else if (ud == UD_STOP)
		*stop = true;
	else if (ud == UD_KICK)
		on_kick();
	else if ((ud & TAG_MASK) == TAG_IO) {
		L.on_ring--;
		on_io(b, res);
	}
	else if ((ud & TAG_MASK) == TAG_REPLY) {
		/* ENOENT: the request was interrupted and answered already, or aborted */
		if (res < 0 && res != -ENOENT && res != -ENODEV && res != -ECONNABORTED)
			sfs_logf(L.log, SFS_LOG_ERR, "writing a reply to /dev/fuse: %s", strerror(-res));
		recycle(b);
	}
}

/* The loop has ended: the backing transfers still on the ring end in core as they complete
 * (each request leaves its image's stats cell before the images are closed), unanswered: the
 * session is ending. */
static void drain(void)
{
	struct io_uring_cqe *cqe;
	ssize_t out;

	while (L.on_ring > 0 && io_uring_wait_cqe(&L.ring, &cqe) == 0) {
		uint64_t ud = cqe->user_data;
		int res = cqe->res;

		io_uring_cqe_seen(&L.ring, cqe);
		if ((ud & TAG_MASK) == TAG_IO && ud != UD_READ && ud != UD_STOP && ud != UD_KICK) {
			L.on_ring--;
			L.busy--;
			sfs_fast_end(&((dbuf_t *)(uintptr_t)(ud & ~TAG_MASK))->fr, res, &out);
		}
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
			sfs_devbufs_trim(&L.bufs, min);
	}
	io_uring_submit(&L.ring);          /* the replies in hand */
	drain();
	return NULL;
}

/* The ring, its provided buffers, the read armed, the stop and kick watched.  0 or -errno. */
static int setup(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };
	unsigned entries = 2 * L.bufs.n + 8;   /* per buffer a transfer and a reply, and the loop's own */
	struct io_uring_sqe *sqe;
	int rc;

	if (io_uring_queue_init_params(entries, &L.ring, &p) < 0) {
		memset(&p, 0, sizeof(p));
		if ((rc = io_uring_queue_init_params(entries, &L.ring, &p)) < 0)
			return rc;
	}
	L.ring_ok = true;
	if ((rc = io_uring_register_files(&L.ring, &L.fd, 1)) < 0 ||
	    (rc = sfs_devbufs_register(&L.bufs, &L.ring, BGID)) < 0)
		return rc;
	arm();
	if (!(sqe = sqe_of()))
		return -EBUSY;
	io_uring_prep_poll_add(sqe, L.stop_efd, POLLIN);
	sqe->user_data = UD_STOP;
	on_kick();                     /* arms the kick's read */
	L.busy = L.on_ring = 0;
	rc = io_uring_submit(&L.ring);
	return rc < 0 ? rc : 0;
}

int sfs_devloop_start(const struct sfs_devloop_cfg *cfg)
{
	int rc = 0, fl;

	L.fd = cfg->fd;
	L.page = cfg->page;
	L.max_payload = cfg->max_payload;
	L.log = cfg->log;
	L.ended = L.armed = false;
	L.stop_efd = eventfd(0, EFD_CLOEXEC);
	if (L.stop_efd < 0 || (rc = sfs_back_init(&L.back)) < 0 ||
	    (rc = sfs_devbufs_make(&L.bufs, cfg->nbufs ? cfg->nbufs : 1, L.page, L.max_payload)) < 0) {
		rc = rc < 0 ? rc : -errno;
		goto fail;
	}
	/* the loop never blocks in a read: an empty queue is -EAGAIN, and io_uring waits for it */
	if ((fl = fcntl(L.fd, F_GETFL)) < 0 || fcntl(L.fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	L.setup_done = false;
	rc = sfs_thread_start(&L.thr, NULL, loop_main, NULL);    /* signals are the main thread's */
	if (rc < 0)
		goto fail;
	pthread_mutex_lock(&L.lock);
	while (!L.setup_done)
		pthread_cond_wait(&L.cond, &L.lock);
	rc = L.setup_rc;
	L.thr_ok = rc == 0;
	pthread_mutex_unlock(&L.lock);
	if (rc == 0)
		return 0;
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
	bool running;

	pthread_mutex_lock(&L.lock);       /* from here on sfs_devloop_trim leaves it alone */
	running = L.thr_ok;
	L.thr_ok = false;
	pthread_mutex_unlock(&L.lock);
	if (running) {
		if (write(L.stop_efd, &one, sizeof(one)) != sizeof(one))
			sfs_logf(L.log, SFS_LOG_WARN, "cannot wake the /dev/fuse loop: %s", strerror(errno));
		pthread_join(L.thr, NULL);
	}
	if (L.ring_ok)
		io_uring_queue_exit(&L.ring);
	L.ring_ok = false;
}

void sfs_devloop_free(void)
{
	sfs_devbufs_free(&L.bufs);
	if (L.stop_efd >= 0)
		close(L.stop_efd);
	sfs_back_destroy(&L.back);
	L.stop_efd = -1;
}

unsigned sfs_devloop_trim(size_t min)
{
	unsigned n = 0;

	/* without DEFER_TASKRUN a read can fill a buffer at the end of any of the loop's system
	 * calls, before the loop has seen its completion: no trimming then */
	pthread_mutex_lock(&L.lock);
	if (L.thr_ok && min && (L.ring.flags & IORING_SETUP_DEFER_TASKRUN)) {
		atomic_store(&L.trim_min, min);
		sfs_back_poke(&L.back);    /* the loop trims after the completions it finds */
		n = 1;
	}
	pthread_mutex_unlock(&L.lock);
	return n;
}
