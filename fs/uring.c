/* SPDX-License-Identifier: MIT */
/*
 * uring.c - FUSE over io_uring: ring entries, each with a worker of its own.
 *
 * Since Linux 6.14 (fuse.enable_uring=Y) the kernel can hand requests to
 * the daemon through io_uring instead of read(2) on /dev/fuse: the daemon
 * registers ring entries (a header buffer and a payload buffer each) on
 * per-CPU queues, and each IORING_OP_URING_CMD completes with a request
 * in its entry; committing the reply fetches the next request in the same
 * command (uring_proto.h has the layout).
 *
 * libfuse 3.18 runs one thread per queue that calls every handler itself,
 * so a queue has one backing I/O in flight and a deep queue waits behind
 * it.  Here every entry has a worker thread of its own, with its own small
 * ring: the worker waits for its entry's request, runs the handler (the
 * blocking pread or pwrite included), puts the reply in the entry and
 * commits it with the wait for its next request, one io_uring_enter.  A
 * queue of depth D thus keeps up to D backing I/Os in flight, and a
 * request costs the same two thread switches as on /dev/fuse (the kernel
 * wakes the worker whose entry it fills, the reply wakes the caller),
 * with one system call instead of a read and a writev.  The kernel fills
 * the entry committed last first, so a light load stays on one warm
 * thread.
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
 *   queue 0 (CPU 0): entry 0 <- worker 0 (ring 0)     queue 1 (CPU 1): ...
 *                    entry 1 <- worker 1 (ring 1)
 *                    ...  depth entries
 *
 * Requests reach libfuse as they do from /dev/fuse, through
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
 * Start: REGISTER works only once INIT is answered, so xport.c starts the
 * workers right after INIT's reply and waits until each has registered;
 * the kernel switches to the ring once every queue has an entry.  If a
 * queue is left without one, a REGISTER the kernel refuses (queue id out
 * of range), sent from the ring kept by sfs_uring_probe(), makes it turn
 * io_uring off for the connection and go on with /dev/fuse.
 *
 * End: at an unmount the kernel completes every waiting command with
 * -ENOTCONN and refuses commits; the workers end.  When the daemon ends
 * the session itself (a signal), sfs_uring_stop() writes an eventfd every
 * ring polls: each worker commits the reply in hand and ends; closing the
 * rings then drops their hold on /dev/fuse, so its last close aborts the
 * connection, as it does without io_uring.
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
 * workers unpinned whatever the load, SFS_XP_NODEFER=1 sets their rings up without
 * IORING_SETUP_DEFER_TASKRUN.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uring.h"
#include "uring_proto.h"

#define UD_CMD 1                       /* user_data of an entry's command */
#define UD_STOP 2                      /* ... of the poll on the stop eventfd */
#define UD_TRIM 3                      /* ... of sfs_uring_trim's message */
#define RING_ENTRIES 4                 /* the command, the poll, a message, room to spare */
#define PIN_ALONE 32                   /* requests served alone before a pinned worker unpins */

struct sfs_uring_ent {
	struct io_uring ring;
	bool ring_ok;
	unsigned qid;
	pthread_t thr;
	bool thr_ok;
	char *region;                  /* mmap: the header buffer's page, then the payload */
	size_t region_len;
	struct sfs_uring_req_header *hdr;
	char *payload;
	struct iovec iov[2];
	uint32_t last_cmd;
	uint64_t commit_id;            /* of the request in hand */
	_Atomic uint64_t unique;       /* likewise, for sfs_uring_find; 0: none */
	bool replied;                  /* the reply is in the buffers */
	struct fuse_bufvec *lent;      /* a read_buf vector holding the payload buffer */
	bool defer;                    /* the ring runs task work only in the worker's io_uring_enter */
	_Atomic size_t touched;        /* payload bytes written since its pages were dropped */
	atomic_bool trim;              /* drop the payload's pages when next idle */
	bool pinned;                   /* the worker runs on its queue's CPU only */
	unsigned alone;                /* requests in a row it served alone in its queue */
};

static struct {
	struct sfs_uring_ent *ents;
	unsigned nq, depth, n;
	size_t page, max_payload;
	int fd;                        /* /dev/fuse */
	const struct sfs_log *log;
	bool pin;
	cpu_set_t all;                 /* the CPUs the daemon may run on: an unpinned worker's */
	atomic_uint *busy;             /* per queue: requests its workers are serving */
	int stop_efd;
	struct io_uring ctl;           /* the probe's ring: the fall-back REGISTER */
	bool ctl_ok;
	pthread_mutex_t lock;          /* guards reported and per_q */
	pthread_cond_t cond;
	unsigned reported;
	unsigned *per_q;               /* entries registered per queue */
	atomic_bool ready;
	pthread_mutex_t trim_lock;     /* guards trim_ok and the fall-back ring once started */
	bool trim_ok;                  /* the workers' rings are there to be messaged */
	bool trim_said;                /* a message that failed was logged */
} R = { .fd = -1, .stop_efd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	.trim_lock = PTHREAD_MUTEX_INITIALIZER };

/* Prepare a FUSE command on ring: cmd, for queue qid, committing commit_id, registering iov. */
static int prep(struct io_uring *ring, uint32_t cmd, unsigned qid, uint64_t commit_id, struct iovec *iov)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct sfs_uring_cmd_req *req;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);             /* an SQE128: 64 bytes, then the command area */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;                     /* /dev/fuse, registered at index 0 */
	sqe->cmd_op = cmd;
	sqe->user_data = UD_CMD;
	if (iov) {
		sqe->addr = (uint64_t)(uintptr_t)iov;
		sqe->len = 2;
	}
	req = (struct sfs_uring_cmd_req *)(void *)sqe->cmd;
	req->qid = (uint16_t)qid;
	req->commit_id = commit_id;
	return 0;
}

/* Prepare e's command cmd (REGISTER or COMMIT_AND_FETCH) on its ring. */
static int prep_ent(struct sfs_uring_ent *e, uint32_t cmd)
{
	e->last_cmd = cmd;
	return prep(&e->ring, cmd, e->qid, cmd == SFS_URING_CMD_COMMIT_AND_FETCH ? e->commit_id : 0,
		    cmd == SFS_URING_CMD_REGISTER ? e->iov : NULL);
}

/* A ring of 128-byte SQEs with fd registered at index 0; 0 or -errno. */
static int ring_init(struct io_uring *ring, int fd, bool single)
{
	struct io_uring_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	if (single)                      /* only its worker submits, and waits for its completions */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	rc = io_uring_queue_init_params(RING_ENTRIES, ring, &p);
	if (rc < 0 && single)
		return ring_init(ring, fd, false);
	if (rc < 0)
		return rc;
	rc = io_uring_register_files(ring, &fd, 1);
	if (rc < 0) {
		io_uring_queue_exit(ring);
		return rc;
	}
	return 0;
}

int sfs_uring_probe(int fd, char *why, size_t whylen)
{
	struct io_uring_probe *probe;
	int rc;

	if (R.ctl_ok)
		return 0;
	rc = ring_init(&R.ctl, fd, false);
	if (rc < 0)
		return sfs_err(why, whylen, rc, "cannot set up an io_uring of 128-byte entries for /dev/fuse: %s",
			       strerror(-rc));
	probe = io_uring_get_probe_ring(&R.ctl);
	if (!probe || !io_uring_opcode_supported(probe, IORING_OP_URING_CMD)) {
		if (probe)
			io_uring_free_probe(probe);
		io_uring_queue_exit(&R.ctl);
		return sfs_err(why, whylen, -EOPNOTSUPP, "this kernel's io_uring has no IORING_OP_URING_CMD");
	}
	io_uring_free_probe(probe);
	R.ctl_ok = true;
	R.fd = fd;
	return 0;
}

/* Make the kernel give up io_uring for this connection: a REGISTER it refuses. */
static void fall_back(void)
{
	struct io_uring_cqe *cqe;

	if (!R.ctl_ok || prep(&R.ctl, SFS_URING_CMD_REGISTER, 0xffff, 0, NULL) < 0)
		return;
	if (io_uring_submit_and_wait(&R.ctl, 1) >= 0 && io_uring_peek_cqe(&R.ctl, &cqe) == 0)
		io_uring_cqe_seen(&R.ctl, cqe);
}

/* Pinning by load (uring.c, "Pinning"): e's worker serves a request while n of its queue's
 * requests are being served, this one included. */
static void pin_by_load(struct sfs_uring_ent *e, unsigned n)
{
	cpu_set_t set;

	if (!R.pin)
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
		if (pthread_setaffinity_np(pthread_self(), sizeof(R.all), &R.all) == 0)
			e->pinned = false;
		e->alone = 0;
	}
}

/* Set e up: its ring, the stop poll, the entry registered.  0 or -errno. */
static int ent_setup(struct sfs_uring_ent *e)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int rc;

	rc = ring_init(&e->ring, R.fd, !getenv("SFS_XP_NODEFER"));
	if (rc < 0)
		return rc;
	e->ring_ok = true;
	e->defer = e->ring.flags & IORING_SETUP_DEFER_TASKRUN;
	sqe = io_uring_get_sqe(&e->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, R.stop_efd, POLLIN);
	sqe->user_data = UD_STOP;
	rc = prep_ent(e, SFS_URING_CMD_REGISTER);
	if (rc < 0)
		return rc;
	rc = io_uring_submit(&e->ring);
	if (rc < 0)
		return rc;
	/* a REGISTER the kernel refuses has completed by now; one it took waits for a request */
	if (io_uring_peek_cqe(&e->ring, &cqe) == 0 && cqe->user_data == UD_CMD && cqe->res < 0) {
		rc = cqe->res;
		io_uring_cqe_seen(&e->ring, cqe);
		return rc;
	}
	return 0;
}

/* n bytes of e's payload buffer are written (by the kernel or by the reply). */
static void touch(struct sfs_uring_ent *e, size_t n)
{
	if (n > atomic_load_explicit(&e->touched, memory_order_relaxed))
		atomic_store_explicit(&e->touched, n, memory_order_relaxed);
}

/* The request now in e: to libfuse, and the reply (or an error) prepared for commit. */
static void ent_serve(struct sfs_uring_ent *e)
{
	const struct fuse_in_header *in = (const void *)e->hdr->in_out;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	size_t hl = sizeof(*in);

	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	e->replied = false;
	touch(e, psz);
	if (in->len >= hl + psz && in->len - hl - psz <= SFS_URING_OP_IN_OUT_SZ && psz <= R.max_payload) {
		size_t op = in->len - hl - psz;
		char *at = e->payload - hl - op;

		memcpy(at, in, hl);
		memcpy(at + hl, e->hdr->op_in, op);
		atomic_store_explicit(&e->unique, in->unique, memory_order_release);
		pin_by_load(e, atomic_fetch_add(&R.busy[e->qid], 1) + 1);
		sfs_xport_serve(at, hl + op + psz, e);
		atomic_fetch_sub(&R.busy[e->qid], 1);
		atomic_store_explicit(&e->unique, 0, memory_order_release);
	}
	if (!e->replied) {
		/* malformed, or not answered: the kernel still needs an answer to free the entry */
		struct fuse_out_header *oh = (void *)e->hdr->in_out;
		uint64_t unique = e->commit_id;

		sfs_logf(R.log, SFS_LOG_WARN, "io_uring: request %llu (opcode %u) not answered; replying EIO",
			 (unsigned long long)unique, in->opcode);
		memset(oh, 0, sizeof(*oh));
		oh->unique = unique;
		oh->error = -EIO;
		e->hdr->ring_ent_in_out.payload_sz = 0;
		if (e->lent) {
			e->lent->buf[0].mem = NULL;
			e->lent = NULL;
		}
	}
	prep_ent(e, SFS_URING_CMD_COMMIT_AND_FETCH);
}

/* e's command waits in the kernel with no request copied in (uring.c, "Idle"): drop the payload's pages. */
static void ent_trim(struct sfs_uring_ent *e)
{
	atomic_store(&e->trim, false);
	if (madvise(e->payload, R.max_payload, MADV_DONTNEED) == 0)
		atomic_store_explicit(&e->touched, 0, memory_order_relaxed);
}

static void ent_loop(struct sfs_uring_ent *e)
{
	bool stop = false, gone = false, nowait = false;

	while (!stop && !gone) {
		struct io_uring_cqe *cqe;
		/* nowait: commit the reply in hand, run the ring's task work and look at what came */
		int rc = nowait ? io_uring_submit_and_get_events(&e->ring) : io_uring_submit_and_wait(&e->ring, 1);

		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			sfs_logf(R.log, SFS_LOG_ERR, "io_uring: queue %u: %s", e->qid, strerror(-rc));
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
				prep_ent(e, e->last_cmd);
			else {
				/* -ENOTCONN, -ECONNABORTED: unmounted or aborted, as ENODEV on /dev/fuse */
				if (res != -ENOTCONN && res != -ECONNABORTED && res != -ECANCELED)
					sfs_logf(R.log, SFS_LOG_ERR, "io_uring: queue %u: command failed: %s", e->qid,
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

static void ent_report(struct sfs_uring_ent *e, int rc)
{
	pthread_mutex_lock(&R.lock);
	R.reported++;
	if (rc == 0)
		R.per_q[e->qid]++;
	pthread_cond_broadcast(&R.cond);
	pthread_mutex_unlock(&R.lock);
}

static void *ent_main(void *arg)
{
	struct sfs_uring_ent *e = arg;
	int rc = ent_setup(e);

	if (rc < 0)
		sfs_logf(R.log, SFS_LOG_ERR, "io_uring: queue %u: cannot register an entry: %s", e->qid,
			 strerror(-rc));
	ent_report(e, rc);
	if (rc == 0)
		ent_loop(e);
	return NULL;
}

int sfs_uring_start(const struct sfs_uring_cfg *cfg)
{
	long page = sysconf(_SC_PAGESIZE);
	sigset_t all, old;
	unsigned missing = 0;
	int rc = 0;

	if (!R.ctl_ok || R.ents)
		return -EINVAL;
	R.page = page > 0 ? (size_t)page : 4096;
	R.max_payload = (cfg->max_payload + R.page - 1) / R.page * R.page;
	R.log = cfg->log;
	R.pin = cfg->pin && !getenv("SFS_XP_NOPIN");
	R.nq = sfs_uring_nr_queues();
	R.depth = cfg->depth ? cfg->depth : 1;
	R.n = R.nq * R.depth;
	R.ents = calloc(R.n, sizeof(*R.ents));
	R.per_q = calloc(R.nq, sizeof(*R.per_q));
	R.busy = calloc(R.nq, sizeof(*R.busy));
	if (sched_getaffinity(0, sizeof(R.all), &R.all) < 0)
		R.pin = false;
	R.stop_efd = eventfd(0, EFD_CLOEXEC);
	if (!R.ents || !R.per_q || !R.busy || R.stop_efd < 0) {
		rc = R.stop_efd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);    /* signals are the main thread's */
	for (unsigned i = 0; i < R.n; i++) {
		struct sfs_uring_ent *e = &R.ents[i];

		e->qid = i % R.nq;
		e->region_len = R.page + R.max_payload;
		e->region = mmap(NULL, e->region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (e->region == MAP_FAILED) {
			e->region = NULL;
			ent_report(e, -ENOMEM);
			continue;
		}
		e->hdr = (struct sfs_uring_req_header *)(void *)e->region;
		e->payload = e->region + R.page;
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, R.max_payload };
		if (pthread_create(&e->thr, NULL, ent_main, e) != 0)
			ent_report(e, -EAGAIN);
		else
			e->thr_ok = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&R.lock);
	while (R.reported < R.n)
		pthread_cond_wait(&R.cond, &R.lock);
	for (unsigned q = 0; q < R.nq; q++)
		missing += R.per_q[q] == 0;
	pthread_mutex_unlock(&R.lock);
	if (missing) {
		rc = -EIO;
		goto fail;
	}
	atomic_store(&R.ready, true);
	pthread_mutex_lock(&R.trim_lock);
	R.trim_ok = true;
	pthread_mutex_unlock(&R.trim_lock);
	return 0;
fail:
	sfs_logf(R.log, SFS_LOG_ERR, "io_uring: %u of %u queues without an entry (%s); falling back to /dev/fuse",
		 missing, R.nq, strerror(-rc));
	fall_back();
	return rc;
}

unsigned sfs_uring_queues(void)
{
	return atomic_load(&R.ready) ? R.nq : 0;
}

unsigned sfs_uring_depth(void)
{
	return atomic_load(&R.ready) ? R.depth : 0;
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

		if (l > R.max_payload - len) {
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
	touch(e, len);
	if (e->lent) {
		e->lent->buf[0].mem = NULL;   /* the buffer is the entry's: libfuse frees the vector only */
		e->lent = NULL;
	}
	return (ssize_t)total;
}

struct sfs_uring_ent *sfs_uring_find(uint64_t unique)
{
	if (!atomic_load(&R.ready))
		return NULL;
	for (unsigned i = 0; i < R.n; i++)
		if (atomic_load_explicit(&R.ents[i].unique, memory_order_acquire) == unique)
			return &R.ents[i];
	return NULL;
}

void *sfs_uring_reply_mem(struct sfs_uring_ent *e, size_t size)
{
	if (size > R.max_payload)
		return NULL;
	touch(e, size);
	return e->payload;
}

void sfs_uring_lend(struct sfs_uring_ent *e, struct fuse_bufvec *bv)
{
	e->lent = bv;
}

unsigned sfs_uring_trim(size_t min)
{
	unsigned n = 0;

	pthread_mutex_lock(&R.trim_lock);
	for (unsigned i = 0; R.trim_ok && i < R.n; i++) {
		struct sfs_uring_ent *e = &R.ents[i];
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		int rc;

		/* one message at a time: a worker busy with a long request finds one when it is back */
		if (!e->ring_ok || !e->defer || atomic_load_explicit(&e->touched, memory_order_relaxed) < min ||
		    atomic_load(&e->trim) || !(sqe = io_uring_get_sqe(&R.ctl)))
			continue;
		atomic_store(&e->trim, true);
		io_uring_prep_msg_ring(sqe, e->ring.ring_fd, 0, UD_TRIM, 0);
		rc = io_uring_submit_and_wait(&R.ctl, 1);
		if (rc >= 0 && io_uring_peek_cqe(&R.ctl, &cqe) == 0) {
			rc = cqe->res;
			io_uring_cqe_seen(&R.ctl, cqe);
		}
		if (rc < 0 && !R.trim_said) {
			/* the worker trims after its next request instead */
			sfs_logf(R.log, SFS_LOG_WARN, "io_uring: cannot wake a ring worker to give memory back: %s",
				 strerror(-rc));
			R.trim_said = true;
		}
		n += rc >= 0;
	}
	pthread_mutex_unlock(&R.trim_lock);
	return n;
}

void sfs_uring_stop(void)
{
	pthread_mutex_lock(&R.trim_lock);
	R.trim_ok = false;
	pthread_mutex_unlock(&R.trim_lock);
	if (R.ents) {
		uint64_t one = 1;

		if (R.stop_efd >= 0 && write(R.stop_efd, &one, sizeof(one)) != sizeof(one))
			sfs_logf(R.log, SFS_LOG_WARN, "io_uring: cannot wake the ring workers: %s", strerror(errno));
		for (unsigned i = 0; i < R.n; i++)
			if (R.ents[i].thr_ok)
				pthread_join(R.ents[i].thr, NULL);
		for (unsigned i = 0; i < R.n; i++) {
			if (R.ents[i].ring_ok)
				io_uring_queue_exit(&R.ents[i].ring);
			if (R.ents[i].region)
				munmap(R.ents[i].region, R.ents[i].region_len);
		}
		free(R.ents);
		R.ents = NULL;
	}
	free(R.per_q);
	R.per_q = NULL;
	free(R.busy);
	R.busy = NULL;
	if (R.stop_efd >= 0)
		close(R.stop_efd);
	R.stop_efd = -1;
	if (R.ctl_ok)
		io_uring_queue_exit(&R.ctl);
	R.ctl_ok = false;
	atomic_store(&R.ready, false);
	R.reported = 0;
}
