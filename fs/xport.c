/* SPDX-License-Identifier: MIT */
/*
 * xport.c - the transport: requests from the kernel to libfuse, replies back.
 *
 * libfuse's own loops read each request into a malloc'd buffer, so the
 * data of a write starts 80 bytes into it (a fuse_in_header and a
 * fuse_write_in come first) and O_DIRECT cannot take it from there: the
 * image would copy every written byte into a bounce buffer.  This loop
 * reads /dev/fuse itself, into buffers laid out so that the headers of a
 * write end exactly at a page boundary and its data begins on one:
 *
 *   page 0                          page 1 ... page 256
 *   [ unused ....... | in | write_in ][ data of the write (up to 1 MiB) ]
 *                    ^ read(2) here   ^ page-aligned: O_DIRECT as it is
 *
 * and hands the request to libfuse with the public
 * fuse_session_process_buf(), so the write handler gets a pointer to
 * page-aligned data and the backing pwrite uses it in place.  A read's
 * request is only the two headers, so the same buffer's pages after them
 * take its reply: io.c's read_buf reads into them
 * (sfs_xport_reply_mem), the reply is written from there, and no
 * request allocates memory for its data.
 *
 * Workers are threads that each read a request, process it and write the
 * reply, as libfuse's multi-threaded loop does: the first starts with the
 * loop, another whenever every worker is busy, up to max_threads; a
 * worker that finds max_idle others waiting after its request exits (its
 * buffer, stack and glibc's per-thread cache of small chunks go with it).
 * Signals are blocked in them but SIGTRIM, so the main thread, waiting in
 * sem_wait, takes them, and libfuse's handlers end the session.  SIGTRIM
 * (sfs_xport_trim_buffers) only interrupts a waiting read(2): the worker
 * then drops its buffer's pages itself, between two requests.  Workers can be
 * cancelled only while they wait in read(2): at the end each finishes the
 * request it has, replies and is cancelled and joined.
 *
 * Replies: the session's writev goes through xport_writev (custom I/O).
 * A thread that processes a request knows it (cur: unique id, opcode), and
 * with libfuse's high-level API every handler replies on the thread that
 * runs it, so a reply whose unique id is cur's is the answer to cur; the
 * opens among them get FOPEN_PARALLEL_DIRECT_WRITES (pdw.c).  Replies to
 * anything else (interrupts, notifications) pass through as they are.
 *
 * A device profile's wait (core/model/model.c) asks libfuse whether the
 * request of its thread was interrupted (fuse_interrupted: the kernel
 * sends FUSE_INTERRUPT when the caller gets a signal, SIGKILL included);
 * once libfuse has taken an interrupt in, every wait is woken to ask
 * again, so the one whose caller is gone completes at once.  Interrupts
 * come through /dev/fuse on both transports.  When the loop ends (a
 * signal, the unmount) every wait is stopped before the workers are
 * joined: a request the model holds fails with EIO at once, so a signal
 * ends the daemon within a second whatever the profile.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devloop.h"
#include "helpers.h"
#include "model/model.h"
#include "pdw.h"
#include "uring/uring.h"
#include "uring/proto.h"
#include "xport.h"
#include "util/thread.h"

/* What a thread processes now: set around fuse_session_process_buf. */
struct request {
	uint64_t unique;               /* 0: none */
	uint32_t opcode;
	struct sfs_uring_ent *ent;     /* the ring entry it came in, NULL: /dev/fuse */
	char *rbuf;                    /* over /dev/fuse: the page-aligned room after its headers */
	size_t *touched;               /* ... and the largest use of its buffer, to raise */
	struct fuse_bufvec *lent;      /* over /dev/fuse: a read_buf vector holding rbuf */
};

static __thread struct request cur;

struct worker {
	struct worker *next;
	pthread_t thr;
	char *buf;                     /* mmap'd: a page, the largest payload, a page */
	size_t len;
	size_t touched;                /* the largest request since the pages were dropped */
	bool waiting;                  /* in read(2) or about to be (X.lock) */
	atomic_bool trim;              /* drop the buffer's pages before the next read */
};

#define SIGTRIM (SIGRTMIN + 3)
#define TRIM_MIN (64u << 10)          /* a buffer that held less is left as it is */

static struct {
	struct fuse_session *se;
	int fd;
	const struct sfs_log *log;
	unsigned max_threads, max_background, max_idle;
	enum sfs_uring_mode uring;
	bool loop;                     /* an event loop per queue (sfs_xport_opts) */
	char no_uring[192];            /* why not io_uring, when known before INIT */
	bool uring_said;               /* INIT's reply asked for io_uring */
	atomic_bool uring_on;          /* requests come through the ring */
	size_t page, max_payload;
	size_t ring_payload;           /* the kernel's payload size, from INIT */
	pthread_mutex_t lock;          /* guards the four below */
	struct worker *workers;
	unsigned nworkers, idle;       /* started; waiting in read(2) or about to */
	bool stopping;
	sem_t finish;                  /* posted by a worker that ends the session */
	int error;                     /* the first fatal error, -errno */
} X = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static atomic_uint_fast64_t nrequests;

#define WRITE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))

static ssize_t xport_read(int fd, void *buf, size_t len, void *userdata)
{
	return read(fd, buf, len);
}

/* INIT's reply: ask for io_uring when we want it, and note the payload size the kernel will use. */
static void init_reply(struct iovec *iov, int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_init_out *o;
	size_t pl;

	if (out->error || count < 2 || iov[1].iov_len < offsetof(struct fuse_init_out, unused))
		return;
	o = iov[1].iov_base;
	pl = o->max_write;
	/* the kernel's ring payload: max(8 KiB, max_write, max_pages pages), 32 pages without FUSE_MAX_PAGES */
	if ((size_t)((o->flags & FUSE_MAX_PAGES) ? o->max_pages : 32) * X.page > pl)
		pl = (size_t)((o->flags & FUSE_MAX_PAGES) ? o->max_pages : 32) * X.page;
	X.ring_payload = pl < FUSE_MIN_READ_BUFFER ? FUSE_MIN_READ_BUFFER : pl;
	if (!X.uring_said)
		return;
	o->flags |= SFS_FUSE_INIT_EXT;
	o->flags2 |= (uint32_t)(SFS_FUSE_OVER_IO_URING >> 32);
}

static ssize_t xport_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct sfs_uring_ent *e = NULL;
	ssize_t n;

	if (cur.unique && out->unique == cur.unique) {
		sfs_pdw_patch(cur.opcode, iov, count);
		if (cur.opcode == FUSE_INIT)
			init_reply(iov, count);
		e = cur.ent;
	} else if (out->unique && atomic_load_explicit(&X.uring_on, memory_order_relaxed)) {
		e = sfs_uring_find(out->unique);
	}
	if (e)
		return sfs_uring_reply(e, iov, count);
	n = writev(fd, iov, count);
	if (cur.lent && out->unique == cur.unique) {
		cur.lent->buf[0].mem = NULL;   /* the buffer is the worker's: libfuse frees the vector only */
		cur.lent = NULL;
	}
	return n;
}

const char *sfs_xport_serving(void)
{
	return X.loop ? "loop" : "threads";
}

void *sfs_xport_reply_mem(size_t size)
{
	if (cur.ent)
		return sfs_uring_reply_mem(cur.ent, size);
	if (!cur.rbuf || !cur.unique || cur.opcode != FUSE_READ || size > X.max_payload)
		return NULL;
	if (size > *cur.touched)
		*cur.touched = size;
	return cur.rbuf;               /* after the request's headers, which end at this page */
}

void sfs_xport_lend(struct fuse_bufvec *bv)
{
	if (cur.ent)
		sfs_uring_lend(cur.ent, bv);
	else if (cur.rbuf)
		cur.lent = bv;
}

const char *sfs_xport_name(void)
{
	return atomic_load_explicit(&X.uring_on, memory_order_relaxed) ? "io_uring" : "/dev/fuse";
}

int sfs_xport_install(struct fuse_session *se, const struct sfs_xport_opts *o)
{
	static const struct fuse_custom_io io = { .read = xport_read, .writev = xport_writev };
	int fd = fuse_session_fd(se);
	long page = sysconf(_SC_PAGESIZE);

	if (fd < 0)
		return -EBADF;
	if (fuse_session_custom_io(se, &io, fd) < 0)
		return -EINVAL;
	X.se = se;
	X.fd = fd;
	X.log = o->log;
	X.max_threads = o->max_threads ? o->max_threads : 1;
	X.max_background = o->max_background;
	X.max_idle = o->max_idle ? o->max_idle : 1;
	X.uring = o->uring;
	X.loop = o->loop;
	X.page = page > 0 ? (size_t)page : 4096;
	sfs_model_set_interrupted(fuse_interrupted);
	/* libfuse 3.14 lets the kernel send at most 256 pages of data in one request */
	X.max_payload = 256 * X.page;
	if (X.uring != SFS_URING_OFF) {
		char why[160];
		int p = sfs_uring_param();

		if (p == 1 && sfs_uring_probe(fd, why, sizeof(why)) < 0)
			p = -EOPNOTSUPP;
		else if (p == 0)
			snprintf(why, sizeof(why), "FUSE over io_uring is off in this kernel: %s is N", SFS_URING_PARAM);
		else if (p == -ENOENT)
			snprintf(why, sizeof(why), "this kernel has no FUSE over io_uring (no %s)", SFS_URING_PARAM);
		else if (p < 0)
			snprintf(why, sizeof(why), "%s: %s", SFS_URING_PARAM, strerror(-p));
		if (p != 1 && X.uring == SFS_URING_ON) {
			sfs_logf(X.log, SFS_LOG_ERR, "-o io_uring=on: %s%s", why,
				 p == 0 ? " (as root: echo Y > " SFS_URING_PARAM ")" : "");
			return -EOPNOTSUPP;
		}
		if (p != 1)
			snprintf(X.no_uring, sizeof(X.no_uring), "%s", why);
	}
	return 0;
}

/* End the session because of err (-errno, or 0 for the unmount) and wake the loop. */
static void end_session(int err)
{
	pthread_mutex_lock(&X.lock);
	if (err && !X.error)
		X.error = err;
	pthread_mutex_unlock(&X.lock);
	fuse_session_exit(X.se);
	sem_post(&X.finish);
}

void sfs_xport_end(int err)
{
	end_session(err);
}

/* Entries (and worker threads) per queue: the worker threads shared out, at least one each. */
static unsigned ring_depth(unsigned nq)
{
	unsigned d = X.max_threads / (nq ? nq : 1);

	return d ? d : 1;
}

/* The transport, decided when INIT comes: what the start-up line says, and whether INIT's reply asks
 * for io_uring (the kernel offers it in INIT's flags when its module parameter is Y). */
static void init_request(const char *at, size_t n)
{
	const struct fuse_init_in *in = (const void *)(at + sizeof(struct fuse_in_header));
	uint64_t flags = 0;
	unsigned nq, depth;

	if (n >= sizeof(struct fuse_in_header) + offsetof(struct fuse_init_in, unused)) {
		flags = in->flags;
		if (flags & SFS_FUSE_INIT_EXT)
			flags |= (uint64_t)in->flags2 << 32;
	}
	if (X.uring != SFS_URING_OFF && !X.no_uring[0] && !(flags & SFS_FUSE_OVER_IO_URING))
		snprintf(X.no_uring, sizeof(X.no_uring), "the kernel did not offer FUSE over io_uring in INIT");
	if (X.uring == SFS_URING_OFF || X.no_uring[0]) {
		if (X.uring == SFS_URING_ON) {
			sfs_logf(X.log, SFS_LOG_ERR, "-o io_uring=on: %s", X.no_uring);
			end_session(-EOPNOTSUPP);
		}
		if (X.loop)
			sfs_logf(X.log, SFS_LOG_INFO, "/dev/fuse%s%s%s, up to %u helper thread%s beside an event loop, "
				 "max_background %u", X.no_uring[0] ? " (" : "", X.no_uring, X.no_uring[0] ? ")" : "",
				 X.max_threads, X.max_threads == 1 ? "" : "s", X.max_background);
		else
			sfs_logf(X.log, SFS_LOG_INFO, "/dev/fuse%s%s%s, up to %u worker thread%s, max_background %u",
				 X.no_uring[0] ? " (" : "", X.no_uring, X.no_uring[0] ? ")" : "", X.max_threads,
				 X.max_threads == 1 ? "" : "s", X.max_background);
		return;
	}
	X.uring_said = true;
	nq = sfs_uring_nr_queues();
	depth = ring_depth(nq);
	if (X.loop)
		sfs_logf(X.log, SFS_LOG_INFO, "FUSE over io_uring, %u queue%s x %u entr%s, %u event loop%s, up to "
			 "%u helper thread%s, max_background %u", nq, nq == 1 ? "" : "s", depth, depth == 1 ? "y" : "ies",
			 sfs_uring_nr_loops(nq), sfs_uring_nr_loops(nq) == 1 ? "" : "s", X.max_threads,
			 X.max_threads == 1 ? "" : "s", X.max_background);
	else
		sfs_logf(X.log, SFS_LOG_INFO, "FUSE over io_uring, %u queue%s x %u worker thread%s, max_background %u",
			 nq, nq == 1 ? "" : "s", depth, depth == 1 ? "" : "s", X.max_background);
}

/* After INIT's reply asked for io_uring: the ring workers; on failure the kernel stays on /dev/fuse. */
static void start_ring(void)
{
	struct sfs_uring_cfg c = { 0 };
	unsigned nq = sfs_uring_nr_queues();

	c.depth = ring_depth(nq);
	c.max_payload = X.ring_payload ? X.ring_payload : X.max_payload;
	c.pin = true;
	c.loop = X.loop;
	c.helpers = X.max_threads;
	c.helpers_idle = X.max_idle;
	c.log = X.log;
	if (sfs_uring_start(&c) == 0) {
		atomic_store(&X.uring_on, true);
		return;
	}
	if (X.uring == SFS_URING_ON) {
		sfs_logf(X.log, SFS_LOG_ERR, "-o io_uring=on: the ring could not be set up");
		end_session(-EIO);
	}
}

void sfs_xport_serve(char *at, size_t n, struct sfs_uring_ent *e)
{
	const struct fuse_in_header *in = (const void *)at;
	struct fuse_buf fb = { .size = n, .mem = at };
	bool init;

	if (n < sizeof(*in))
		return;
	atomic_fetch_add_explicit(&nrequests, 1, memory_order_relaxed);
	init = in->opcode == FUSE_INIT && !e;
	if (init)
		init_request(at, n);
	cur.unique = in->unique;
	cur.opcode = in->opcode;
	cur.ent = e;
	fuse_session_process_buf(X.se, &fb);
	cur.unique = 0;
	cur.ent = NULL;
	cur.lent = NULL;
	cur.rbuf = NULL;
	if (in->opcode == FUSE_INTERRUPT)
		sfs_model_wake();          /* libfuse marked the request: its wait asks again */
	if (init && X.uring_said && !fuse_session_exited(X.se))
		start_ring();
}

void sfs_xport_serve_dev(char *at, size_t n, char *rbuf, size_t *touched)
{
	cur.rbuf = rbuf;
	cur.touched = touched;
	sfs_xport_serve(at, n, NULL);
}

static int start_worker(void);


static void on_sigtrim(int sig)
{
	(void)sig;                     /* only there to interrupt a waiting read(2) */
}

/* Leave the list of workers and end the thread; caller holds X.lock, which this releases. */
static void worker_exit(struct worker *w)
{
	struct worker **p;

	for (p = &X.workers; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			break;
		}
	}
	X.nworkers--;
	X.idle--;
	pthread_mutex_unlock(&X.lock);
	munmap(w->buf, w->len);
	pthread_detach(pthread_self());
	free(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char *at = w->buf + X.page - WRITE_HDR;  /* a write's data lands on the next page */
	size_t len = w->len - X.page + WRITE_HDR;
	sigset_t trim;

	sigemptyset(&trim);
	sigaddset(&trim, SIGTRIM);
	pthread_sigmask(SIG_UNBLOCK, &trim, NULL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		ssize_t n;

		if (atomic_exchange(&w->trim, false)) {
			madvise(w->buf, w->len, MADV_DONTNEED);
			w->touched = 0;
		}
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = read(X.fd, at, len);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n < 0) {
			int e = errno;

			/* ENOENT: the request was interrupted before we read it; EINTR: SIGTRIM */
			if (e == EINTR || e == EAGAIN || e == ENOENT)
				continue;
			/* ENODEV: unmounted, or the connection was aborted.  ECONNABORTED: the
			 * same end, met by a read that had already taken a request from the queue
			 * when the kernel tore the connection down (the last close after a lazy
			 * unmount); it never means more here, as INIT does not ask for
			 * FUSE_ABORT_ERROR.  Over io_uring the ring's commands say the same. */
			bool gone = e == ENODEV || e == ECONNABORTED;

			end_session(gone ? 0 : -e);
			if (!gone)
				sfs_logf(X.log, SFS_LOG_ERR, "reading /dev/fuse: %s", strerror(e));
			break;
		}
		if (fuse_session_exited(X.se))
			break;
		if ((size_t)n > w->touched)
			w->touched = (size_t)n;
		pthread_mutex_lock(&X.lock);
		w->waiting = false;
		X.idle--;
		if (X.idle == 0 && X.nworkers < X.max_threads && !X.stopping)
			start_worker();
		pthread_mutex_unlock(&X.lock);

		sfs_xport_serve_dev(at, (size_t)n, w->buf + X.page, &w->touched);

		pthread_mutex_lock(&X.lock);
		X.idle++;
		if (X.idle > X.max_idle && !X.stopping) {
			worker_exit(w);
			return NULL;
		}
		w->waiting = true;
		pthread_mutex_unlock(&X.lock);
	}
	return NULL;
}

void sfs_xport_note_request(void)
{
	atomic_fetch_add_explicit(&nrequests, 1, memory_order_relaxed);
}

uint64_t sfs_xport_requests(void)
{
	return atomic_load_explicit(&nrequests, memory_order_relaxed);
}

void sfs_xport_trim_buffers(void)
{
	/* Under X.lock a worker marked waiting has not yet taken the lock after its read: a
	 * signal sent now is handled before it serves anything, and the pages are dropped by
	 * the worker itself before its next read. */
	pthread_mutex_lock(&X.lock);
	for (struct worker *w = X.workers; w; w = w->next) {
		if (!w->waiting || w->touched < TRIM_MIN)
			continue;
		atomic_store(&w->trim, true);
		pthread_kill(w->thr, SIGTRIM);
	}
	pthread_mutex_unlock(&X.lock);
	if (X.loop)
		sfs_devloop_trim(TRIM_MIN);
	if (atomic_load(&X.uring_on))
		sfs_uring_trim(TRIM_MIN);
}

/* Start one more worker; caller holds X.lock.  0 or -errno (logged). */
static int start_worker(void)
{
	struct worker *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	w->len = X.page + X.max_payload + X.page;
	w->buf = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->buf == MAP_FAILED) {
		rc = -errno;
		free(w);
		sfs_logf(X.log, SFS_LOG_ERR, "cannot start a worker: %s", strerror(-rc));
		return rc;
	}
	rc = sfs_thread_start(&w->thr, NULL, worker_main, w);   /* signals go to the main thread */
	if (rc < 0) {
		munmap(w->buf, w->len);
		free(w);
		sfs_logf(X.log, SFS_LOG_ERR, "cannot start a worker: %s", strerror(-rc));
		return rc;
	}
	w->waiting = true;
	w->next = X.workers;
	X.workers = w;
	X.nworkers++;
	X.idle++;
	return 0;
}

/* Cancel the workers (each where it waits for a request, after the one in hand) and join them. */
static void stop_workers(void)
{
	struct worker *w, *next;

	pthread_mutex_lock(&X.lock);
	X.stopping = true;
	for (w = X.workers; w; w = w->next)
		pthread_cancel(w->thr);
	w = X.workers;
	X.workers = NULL;
	pthread_mutex_unlock(&X.lock);
	for (; w; w = next) {
		next = w->next;
		pthread_join(w->thr, NULL);
		munmap(w->buf, w->len);
		free(w);
	}
	pthread_mutex_lock(&X.lock);
	X.nworkers = X.idle = 0;
	pthread_mutex_unlock(&X.lock);
}

int sfs_xport_loop(struct fuse *f)
{
	int rc;

	if (!X.se || X.se != fuse_get_session(f))
		return -EINVAL;
	if (fuse_start_cleanup_thread(f) != 0)
		return -ENOMEM;
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigtrim;   /* no SA_RESTART: a waiting read(2) returns EINTR */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTRIM, &sa, NULL);
	}
	sem_init(&X.finish, 0, 0);
	X.error = 0;
	X.stopping = false;
	if (X.loop) {
		struct sfs_devloop_cfg dc = { .fd = X.fd, .page = X.page, .max_payload = X.max_payload,
					      .nbufs = X.max_threads, .log = X.log };

		rc = sfs_helpers_start(X.max_threads, X.max_idle, X.log);
		if (rc == 0)
			rc = sfs_devloop_start(&dc);
	} else {
		pthread_mutex_lock(&X.lock);
		rc = start_worker();
		pthread_mutex_unlock(&X.lock);
	}
	if (rc == 0)
		while (!fuse_session_exited(X.se))
			sem_wait(&X.finish);   /* a signal interrupts it too */
	sfs_model_stop();              /* what a profile holds fails now: the workers end at once */
	stop_workers();
	sfs_devloop_stop();
	sfs_uring_stop();
	sfs_helpers_stop();            /* after the loops: none gives a helper work any more */
	sfs_devloop_free();
	atomic_store(&X.uring_on, false);
	fuse_stop_cleanup_thread(f);
	sem_destroy(&X.finish);
	if (rc == 0)
		rc = X.error;
	fuse_session_reset(X.se);
	return rc;
}
