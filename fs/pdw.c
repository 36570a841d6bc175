/* SPDX-License-Identifier: MIT */
/*
 * pdw.c - parallel direct writes on libfuse versions that cannot ask for them.
 *
 * The kernel takes a file's inode lock for every direct_io write unless
 * the open reply carries FOPEN_PARALLEL_DIRECT_WRITES (Linux 6.2+), so
 * without it writes to different blocks of one disk run one at a time.
 * libfuse gained a fuse_file_info bit for it in 3.15; with older libfuse
 * sectorfs installs a thin custom I/O layer on the session's /dev/fuse
 * descriptor: the read hook notes the unique id of each OPEN and CREATE
 * request, and the writev hook adds the flag to the successful reply of
 * those requests when it already carries FOPEN_DIRECT_IO (disk images;
 * stats files are left alone).  Everything else passes through untouched.
 * Kernels that do not know the flag ignore it.
 *
 * The read hook also keeps a record of each worker thread (registered at
 * its first read, dropped by a thread-specific destructor when it exits):
 * its request buffer, the largest request it held since it was last
 * trimmed, the requests it read, and whether it is waiting in read().  A
 * buffer is 1 MiB + 4 KiB, libfuse's, allocated once per worker, and every
 * page a large write touched stays resident as long as the worker lives.
 * sfs_pdw_trim_buffers (the idle thread, idle.c, calls it when the mount
 * has been quiet a while) sends SIGTRIM to each waiting worker whose
 * buffer held a large request.  The signal, unblocked in workers only,
 * has an empty handler without SA_RESTART, so the worker's read() returns
 * EINTR before it takes a request (the kernel dequeues a request only
 * when it copies it); the hook then drops the buffer's pages
 * (MADV_DONTNEED on the whole pages inside it: the allocator's own bytes
 * around it are left alone) and reads again.  The buffer holds nothing
 * live while its worker waits: libfuse processes a request completely
 * before it reads the next.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pdw.h"
#include <fuse_lowlevel.h>

#define PENDING_MAX 256

/* OPEN/CREATE requests between their read and their reply.  The session
 * gives the hooks no context of their own, hence one table per process. */
static struct {
	pthread_mutex_t lock;
	uint64_t unique[PENDING_MAX];
	unsigned n;
} pending = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };

static void remember(uint64_t unique)
{
	pthread_mutex_lock(&pending.lock);
	if (pending.n < PENDING_MAX)
		pending.unique[pending.n++] = unique;
	pthread_mutex_unlock(&pending.lock);
}

static int forget(uint64_t unique)
{
	int found = 0;

	pthread_mutex_lock(&pending.lock);
	for (unsigned i = 0; i < pending.n; i++) {
		if (pending.unique[i] == unique) {
			pending.unique[i] = pending.unique[--pending.n];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&pending.lock);
	return found;
}

/* ---- worker records ---- */

#define SIGTRIM (SIGRTMIN + 3)
#define TRIM_MIN (64u << 10)       /* a buffer that held less is left as it is */
#define PAGE 4096u

enum { BUSY, WAITING };

struct worker {
	struct worker *prev, *next;
	pthread_t tid;
	void *buf;
	size_t len;
	size_t touched;               /* the largest request since the last trim (the worker's own) */
	uint64_t nreq;                /* requests read (atomic: the idle thread sums them) */
	int phase;                    /* BUSY or WAITING in read() (atomic) */
	int trim;                     /* asked to trim (atomic) */
};

static struct {
	pthread_mutex_t lock;
	struct worker *head;
	uint64_t gone;                /* requests read by workers that have exited */
	pthread_key_t key;
	pthread_once_t once;
	bool ok;
} workers = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, PTHREAD_ONCE_INIT, false };

static __thread struct worker *self;

static void worker_gone(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&workers.lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		workers.head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	workers.gone += __atomic_load_n(&w->nreq, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&workers.lock);
	free(w);
}

static void on_sigtrim(int sig)
{
	(void)sig;                    /* only there to interrupt a waiting read() */
}

static void workers_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigtrim;   /* no SA_RESTART: the read returns EINTR */
	sigemptyset(&sa.sa_mask);
	workers.ok = pthread_key_create(&workers.key, worker_gone) == 0 && sigaction(SIGTRIM, &sa, NULL) == 0;
}

/* This thread's record, made at its first read; NULL when records cannot be kept. */
static struct worker *worker_self(void *buf, size_t len)
{
	struct worker *w = self;
	sigset_t set;

	if (w || !workers.ok)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->tid = pthread_self();
	w->buf = buf;
	w->len = len;
	if (pthread_setspecific(workers.key, w) != 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&workers.lock);
	w->next = workers.head;
	if (w->next)
		w->next->prev = w;
	workers.head = w;
	pthread_mutex_unlock(&workers.lock);
	/* libfuse starts its workers with every signal blocked: let this one through */
	sigemptyset(&set);
	sigaddset(&set, SIGTRIM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	self = w;
	return w;
}

/* Drop the pages of w's buffer (its read was interrupted: nothing in it is live). */
static void trim_buffer(struct worker *w)
{
	uintptr_t start = ((uintptr_t)w->buf + PAGE - 1) / PAGE * PAGE;
	uintptr_t end = ((uintptr_t)w->buf + w->len) / PAGE * PAGE;

	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
	__atomic_store_n(&w->touched, 0, __ATOMIC_RELAXED);
}

uint64_t sfs_pdw_requests(void)
{
	uint64_t n;

	pthread_mutex_lock(&workers.lock);
	n = workers.gone;
	for (struct worker *w = workers.head; w; w = w->next)
		n += __atomic_load_n(&w->nreq, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&workers.lock);
	return n;
}

unsigned sfs_pdw_trim_buffers(void)
{
	unsigned n = 0;

	pthread_mutex_lock(&workers.lock);      /* a worker exiting waits here: its tid stays valid */
	for (struct worker *w = workers.head; w; w = w->next) {
		if (__atomic_load_n(&w->phase, __ATOMIC_ACQUIRE) != WAITING ||
		    __atomic_load_n(&w->touched, __ATOMIC_RELAXED) < TRIM_MIN)
			continue;
		__atomic_store_n(&w->trim, 1, __ATOMIC_RELEASE);
		if (pthread_kill(w->tid, SIGTRIM) == 0)
			n++;
	}
	pthread_mutex_unlock(&workers.lock);
	return n;
}

/* ---- the hooks ---- */

static ssize_t pdw_read(int fd, void *buf, size_t len, void *userdata)
{
	struct worker *w = worker_self(buf, len);
	ssize_t n;

	if (w && (w->buf != buf || w->len != len)) {
		w->buf = buf;                /* not libfuse's way, but a new buffer is simply noted */
		w->len = len;
	}
	for (;;) {
		if (w)
			__atomic_store_n(&w->phase, WAITING, __ATOMIC_RELEASE);
		n = read(fd, buf, len);
		if (!w)
			break;
		__atomic_store_n(&w->phase, BUSY, __ATOMIC_RELEASE);
		if (n >= 0 || errno != EINTR)
			break;
		if (__atomic_exchange_n(&w->trim, 0, __ATOMIC_ACQ_REL))
			trim_buffer(w);
	}
	if (w && n > 0) {
		if ((size_t)n > w->touched)
			__atomic_store_n(&w->touched, (size_t)n, __ATOMIC_RELAXED);
		__atomic_store_n(&w->nreq, w->nreq + 1, __ATOMIC_RELAXED);
	}

	if (n >= (ssize_t)sizeof(struct fuse_in_header)) {
		const struct fuse_in_header *in = buf;

		if (in->opcode == FUSE_OPEN || in->opcode == FUSE_CREATE)
			remember(in->unique);
	}
	return n;
}

static ssize_t pdw_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *out = iov[0].iov_base;

	if (iov[0].iov_len >= sizeof(*out) && __atomic_load_n(&pending.n, __ATOMIC_RELAXED) &&
	    forget(out->unique) && out->error == 0 && count >= 2 &&
	    iov[1].iov_len >= sizeof(struct fuse_open_out)) {
		/* OPEN replies are a fuse_open_out; CREATE replies end with one. */
		struct fuse_open_out *o = (struct fuse_open_out *)
			((char *)iov[1].iov_base + iov[1].iov_len - sizeof(*o));

		if (o->open_flags & FOPEN_DIRECT_IO)
			o->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
	}
	return writev(fd, iov, count);
}

int sfs_pdw_install(struct fuse_session *se)
{
	static const struct fuse_custom_io io = { .read = pdw_read, .writev = pdw_writev };
	int fd = fuse_session_fd(se);

	if (fd < 0)
		return -EBADF;
	pthread_once(&workers.once, workers_init);
	return fuse_session_custom_io(se, &io, fd) < 0 ? -EINVAL : 0;
}
