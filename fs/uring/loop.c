/* SPDX-License-Identifier: MIT */
/*
 * loop.c - FUSE over io_uring served by event loops.
 *
 * The workers of worker.c give each ring entry a thread that blocks
 * in the handler's pread or pwrite: every request wakes a thread, and the
 * thread sleeps again in the backing I/O.  Here one thread owns every
 * entry of its CPU queues (two: "Loops" below) on one ring, and the backing
 * I/O of the fast path (../fast.c: reads, overwrites and flushes that core
 * plans as one transfer) goes on that same ring:
 *
 *   kernel --request--> entry's command completes
 *     loop: plan (fast.c) --ISSUE--> IORING_OP_READ/WRITE of the backing file
 *                         --DONE---> reply in the entry, COMMIT_AND_FETCH
 *                         --SLOW---> a helper (../helpers.c) runs libfuse on it,
 *                                    then gives the entry back (eventfd)
 *     backing I/O completes --> sfs_fast_end --> reply, COMMIT_AND_FETCH
 *
 * Commits, backing I/O and the helpers' entries given back all go in with
 * the loop's next io_uring_enter, which also waits for what comes next:
 * a loop sleeps only when nothing is left to do, and one wake-up takes in
 * every completion there is.  With IORING_SETUP_DEFER_TASKRUN the kernel
 * copies requests into the entries only in that enter, on this thread.
 *
 * Loops: one per two CPU queues, the entries of queue q on loop q mod L
 * (L loops; each command still names its own queue).  On two CPUs one loop for
 * both queues against one each, 4 jobs x QD8 of 4 KiB (fio libaio, 3 s, 4
 * repeats interleaved): reads 6.8 against 8.2 us of daemon CPU and 0.07
 * against 0.13 switches per I/O, writes 8.5 against 11.9 us and 0.25
 * against 0.63, IOPS within the spread (49k / 51k, 37k / 38k); QD1 and
 * fdatasync alike.  A loop serving more requests takes more of them in each
 * wake-up, and two loops on two CPUs shared with the application sleep
 * and wake for every few.
 *
 * Alone: a write or a flush that finds its loop with nothing else to do
 * (no backing I/O in flight, no entry with a helper, no other such
 * request in the same wake-up) is done right there with pwrite or
 * fdatasync, as a worker would do it.  Through io_uring an O_DIRECT write
 * completes through the filesystem's completion workqueue (a kworker wakes,
 * then the loop), a flush in an io-wq worker; blocking, the loop is woken
 * by the device itself.  A request that comes meanwhile waits for it, as
 * it would wait behind a busy worker.
 *
 * An entry is in one of four places: in the kernel (its command waits for
 * a request, or its commit is queued for the next enter), in the loop's
 * backing I/O, with a helper, or done by a helper and queued for the
 * loop.  A helper replies through the transport's writev hook exactly as a
 * worker does (sfs_uring_reply fills the entry's buffers); only the loop
 * submits on its ring (IORING_SETUP_SINGLE_ISSUER).
 *
 * Idle: sfs_uring_trim messages each loop's ring; the loop then drops the
 * payload pages of every entry whose command has been in the kernel since
 * before its last enter (no request can have been copied in since: that
 * happens only in the loop's own enter, "Idle" in worker.c), and of
 * the others once they are back there.
 *
 * Stop: the stop eventfd (sfs_uring_stop) ends every loop after it has
 * submitted the commits it has; at an unmount the kernel ends the
 * commands (-ENOTCONN) and the loops end.  Helpers still serving a
 * request finish it; sfs_uring_loops_stop joins them before the entries
 * are unmapped.
 *
 * For measurements only: SFS_XP_LOOPS=N in the environment runs N loops
 * (1 to the queues), SFS_XP_LOOPPIN=1 pins each loop to the CPU of its
 * first queue.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fast.h"
#include "helpers.h"
#include "internal.h"

/* user_data below 16 are the loop's own (UD_STOP, UD_TRIM); above, an entry with a tag */
#define UD_KICK 4                      /* the read of the eventfd helpers write */
#define TAG_CMD 0
#define TAG_IO 1
#define TAG_MASK 7ull
#define QUEUES_PER_LOOP 2              /* CPU queues a loop serves ("Loops" above) */

enum lstate { L_KERNEL, L_IO, L_HELPER };

/* A ring entry as its queue's loop sees it. */
struct lent {
	struct sfs_uring_ent *e;
	struct sfs_uring_q *q;
	enum lstate st;
	uint64_t gen;                  /* q->gen when its command was queued for the kernel */
	char *at;                      /* the request as libfuse takes it, n bytes */
	size_t n;
	struct sfs_fast_req fr;
	struct sfs_job job;            /* to a helper, and back */
};

struct sfs_uring_q {
	unsigned qid;
	struct io_uring ring;
	bool ring_ok;
	pthread_t thr;
	bool thr_ok;
	struct lent *ents;
	unsigned n;
	uint64_t gen;                  /* enters so far */
	struct sfs_back back;          /* what the helpers are done with */
	atomic_uint trims;             /* entries asked to drop their pages, not yet done */
	bool pin;
	unsigned busy;                 /* entries in backing I/O or with a helper */
	struct lent *inline_le;        /* a write or flush that may block the loop ("Alone" above) */
};

/* le moves to st; q->busy follows. */
static void set_state(struct lent *le, enum lstate st)
{
	if ((le->st != L_KERNEL) != (st != L_KERNEL))
		le->q->busy += st != L_KERNEL ? 1 : (unsigned)-1;
	le->st = st;
}

/* A free SQE, submitting what is queued when the ring is full; NULL only when even that fails. */
static struct io_uring_sqe *sqe_of(struct sfs_uring_q *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe && io_uring_submit(&q->ring) >= 0)
		sqe = io_uring_get_sqe(&q->ring);
	if (sqe)
		memset(sqe, 0, 128);         /* an SQE128: no stale command bytes */
	return sqe;
}

/* Queue le's command cmd for the next enter. */
static void queue_cmd(struct lent *le, uint32_t cmd)
{
	struct sfs_uring_ent *e = le->e;
	struct sfs_uring_q *q = le->q;

	e->last_cmd = cmd;
	set_state(le, L_KERNEL);
	le->gen = q->gen;
	if (sfs_uring_prep_cmd(&q->ring, cmd, e->qid, cmd == SFS_URING_CMD_COMMIT_AND_FETCH ? e->commit_id : 0,
			       cmd == SFS_URING_CMD_REGISTER ? e->iov : NULL, (uint64_t)(uintptr_t)le | TAG_CMD) < 0 &&
	    (io_uring_submit(&q->ring) < 0 ||
	     sfs_uring_prep_cmd(&q->ring, cmd, e->qid, cmd == SFS_URING_CMD_COMMIT_AND_FETCH ? e->commit_id : 0,
				cmd == SFS_URING_CMD_REGISTER ? e->iov : NULL, (uint64_t)(uintptr_t)le | TAG_CMD) < 0))
		sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: no room on the ring for a command", q->qid);
}

/* The fast path's answer res (bytes, or -errno) in le's entry, as libfuse would have put it. */
static void reply_fast(struct lent *le, ssize_t res)
{
	struct sfs_uring_ent *e = le->e;
	struct fuse_out_header *oh = (void *)e->hdr->in_out;
	uint32_t len = 0;

	if (le->fr.opcode == FUSE_FSYNC) {
		len = 0;
	} else if (res >= 0 && le->fr.opcode == FUSE_WRITE) {
		struct fuse_write_out wo = { .size = (uint32_t)res };

		memcpy(e->payload, &wo, sizeof(wo));
		len = sizeof(wo);
	} else if (res >= 0) {
		len = (uint32_t)res;         /* the read's data is in the payload already */
	}
	oh->len = (uint32_t)sizeof(*oh) + len;
	oh->error = res < 0 ? (int32_t)res : 0;
	oh->unique = e->commit_id;
	e->hdr->ring_ent_in_out.payload_sz = len;
	e->replied = true;
	sfs_uring_touch(e, len);
}

/* On a helper: the request of le through libfuse, as a worker serves it. */
static void helper_serve(struct sfs_job *j)
{
	struct lent *le = (struct lent *)(void *)((char *)j - offsetof(struct lent, job));
	struct sfs_uring_ent *e = le->e;

	atomic_store_explicit(&e->unique, ((const struct fuse_in_header *)(void *)le->at)->unique,
			      memory_order_release);
	sfs_xport_serve(le->at, le->n, e);
	atomic_store_explicit(&e->unique, 0, memory_order_release);
	sfs_uring_ent_answered(e);
	sfs_back_give(&le->q->back, &le->job);
}

/* le's request the blocking way, on a helper (on the loop itself when none can be had). */
static void to_helper(struct lent *le)
{
	set_state(le, L_HELPER);
	le->job.fn = helper_serve;
	if (sfs_helpers_submit(&le->job) == 0)
		return;
	helper_serve(&le->job);        /* gives it back: the next kick commits it */
}

/* le's backing transfer on the ring. */
static void issue(struct lent *le)
{
	struct io_uring_sqe *sqe = sqe_of(le->q);
	ssize_t res;

	if (!sqe) {
		/* cannot happen with the ring sized for every entry; the blocking way then */
		sfs_fast_end(&le->fr, -EAGAIN, &res);
		to_helper(le);
		return;
	}
	sfs_fast_prep(sqe, &le->fr);
	sqe->user_data = (uint64_t)(uintptr_t)le | TAG_IO;
	set_state(le, L_IO);
}

/* The request the kernel put in le's entry. */
static void on_request(struct lent *le)
{
	struct sfs_uring_ent *e = le->e;
	ssize_t res = 0;

	le->at = sfs_uring_ent_take(e, &le->n);
	if (!le->at) {
		sfs_uring_ent_answered(e);
		queue_cmd(le, SFS_URING_CMD_COMMIT_AND_FETCH);
		return;
	}
	switch (sfs_fast_begin(le->at, le->n, e->payload, sfs_uring.max_payload, &le->fr, &res)) {
	case SFS_FAST_DONE:
		sfs_xport_note_request();
		reply_fast(le, res);
		queue_cmd(le, SFS_URING_CMD_COMMIT_AND_FETCH);
		return;
	case SFS_FAST_ISSUE:
		sfs_xport_note_request();
		if (le->fr.io.op == SFS_FAST_READ || le->q->busy) {
			issue(le);
		} else if (le->q->inline_le) {
			/* two in one go: neither is alone */
			issue(le->q->inline_le);
			le->q->inline_le = NULL;
			issue(le);
		} else {
			le->q->inline_le = le;
		}
		return;
	case SFS_FAST_SLOW:
		break;
	}
	to_helper(le);                 /* sfs_xport_serve counts it */
}

/* le's backing transfer ended with res. */
static void on_io(struct lent *le, ssize_t res)
{
	ssize_t out = 0;

	if (sfs_fast_end(&le->fr, res, &out) == SFS_FAST_DONE) {
		reply_fast(le, out);
		queue_cmd(le, SFS_URING_CMD_COMMIT_AND_FETCH);
		return;
	}
	to_helper(le);                 /* a short or failed transfer: redone the blocking way */
}

/* Read the eventfd again for the next kick. */
static void arm_kick(struct sfs_uring_q *q)
{
	struct io_uring_sqe *sqe = sqe_of(q);

	if (!sqe)
		return;
	io_uring_prep_read(sqe, q->back.efd, &q->back.val, sizeof(q->back.val), 0);
	sqe->user_data = UD_KICK;
}

/* Entries helpers gave back: commit each. */
static void on_kick(struct sfs_uring_q *q)
{
	arm_kick(q);
	for (struct sfs_job *j = sfs_back_take(&q->back), *next; j; j = next) {
		next = j->next;
		queue_cmd((struct lent *)(void *)((char *)j - offsetof(struct lent, job)),
			  SFS_URING_CMD_COMMIT_AND_FETCH);
	}
}

/* Drop the payload pages of the entries asked to whose command has waited in the kernel since
 * before the last enter ("Idle" at the top). */
static void trim(struct sfs_uring_q *q)
{
	for (unsigned i = 0; i < q->n && atomic_load(&q->trims); i++) {
		struct lent *le = &q->ents[i];
		struct sfs_uring_ent *e = le->e;

		if (!atomic_load(&e->trim) || le->st != L_KERNEL || le->gen == q->gen)
			continue;
		if (madvise(e->payload, sfs_uring.max_payload, MADV_DONTNEED) == 0)
			atomic_store_explicit(&e->touched, 0, memory_order_relaxed);
		atomic_store(&e->trim, false);
		atomic_fetch_sub(&q->trims, 1);
	}
}

/* A completion: false when the loop must end (the kernel ended a command: unmount, abort). */
static bool on_cqe(struct sfs_uring_q *q, uint64_t ud, int res, bool *stop)
{
	struct lent *le = (struct lent *)(uintptr_t)(ud & ~TAG_MASK);

	if (ud == UD_STOP) {
		*stop = true;
		return true;
	}
	if (ud == UD_TRIM)
		return true;               /* q->trims says what */
	if (ud == UD_KICK) {
		on_kick(q);
		return true;
	}
	if ((ud & TAG_MASK) == TAG_IO) {
		on_io(le, res);
		return true;
	}
	if (res == 0) {
		on_request(le);
		return true;
	}
	if (res == -EINTR || res == -EAGAIN) {
		queue_cmd(le, le->e->last_cmd);
		return true;
	}
	/* -ENOTCONN, -ECONNABORTED: unmounted or aborted, as ENODEV on /dev/fuse */
	if (res != -ENOTCONN && res != -ECONNABORTED && res != -ECANCELED)
		sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: command failed: %s", q->qid, strerror(-res));
	return false;
}

/* The write or flush held back while the loop had nothing else ("Alone" above): done here,
 * blocking, when that is still so, else on the ring. */
static void run_alone(struct sfs_uring_q *q)
{
	struct lent *le = q->inline_le;

	q->inline_le = NULL;
	if (q->busy) {
		issue(le);
		return;
	}
	if (io_uring_sq_ready(&q->ring))
		io_uring_submit(&q->ring);   /* the replies already made go first */
	set_state(le, L_IO);
	on_io(le, sfs_fast_block(&le->fr));
}

/* The loop has ended: the backing transfers still in flight end in core as they complete
 * (each request leaves its image's stats cell before the images are closed), uncommitted: the
 * session is ending. */
static void drain(struct sfs_uring_q *q)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0;
	ssize_t out;

	for (unsigned i = 0; i < q->n; i++)
		n += q->ents[i].st == L_IO;
	while (n > 0 && io_uring_wait_cqe(&q->ring, &cqe) == 0) {
		uint64_t ud = cqe->user_data;
		int res = cqe->res;

		io_uring_cqe_seen(&q->ring, cqe);
		if ((ud & TAG_MASK) == TAG_IO && ud >= 16) {
			struct lent *le = (struct lent *)(uintptr_t)(ud & ~TAG_MASK);

			sfs_fast_end(&le->fr, res, &out);
			set_state(le, L_KERNEL);
			n--;
		}
	}
}

static void q_loop(struct sfs_uring_q *q)
{
	bool stop = false, live = true;

	while (!stop && live) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		int rc = io_uring_submit_and_wait(&q->ring, 1);

		q->gen++;
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: %s", q->qid, strerror(-rc));
			break;
		}
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			seen++;
			if (!on_cqe(q, cqe->user_data, cqe->res, &stop))
				live = false;
		}
		io_uring_cq_advance(&q->ring, seen);
		if (q->inline_le)
			run_alone(q);
		if (atomic_load(&q->trims))
			trim(q);
	}
	if (stop)
		io_uring_submit(&q->ring);   /* the commits in hand */
	drain(q);
}

/* A loop's thread: its ring, its entries registered and reported, then served until the end. */
static void *q_main(void *arg)
{
	struct sfs_uring_q *q = arg;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int rc;

	if (q->pin) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(q->qid, &set);      /* loop i serves queue i first */
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);   /* best effort */
	}
	/* every entry's command or transfer, the stop poll, the kick, a trim message: twice over */
	rc = sfs_uring_ring_init(&q->ring, 2 * q->n + 8, sfs_uring.fd, !getenv("SFS_XP_NODEFER"));
	if (rc == 0) {
		q->ring_ok = true;
		if (!(sqe = sqe_of(q))) {
			rc = -EBUSY;
		} else {
			io_uring_prep_poll_add(sqe, sfs_uring.stop_efd, POLLIN);
			sqe->user_data = UD_STOP;
			arm_kick(q);
			for (unsigned i = 0; i < q->n; i++)
				queue_cmd(&q->ents[i], SFS_URING_CMD_REGISTER);
			rc = io_uring_submit(&q->ring);
		}
	}
	if (rc < 0) {
		sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: cannot set up its ring: %s", q->qid,
			 strerror(-rc));
		for (unsigned i = 0; i < q->n; i++)
			sfs_uring_ent_report(q->ents[i].e, rc);
		return NULL;
	}
	/* a REGISTER the kernel refuses has completed by now; one it took waits for a request */
	while (io_uring_peek_cqe(&q->ring, &cqe) == 0 && (cqe->user_data & TAG_MASK) == TAG_CMD &&
	       cqe->user_data >= 16 && cqe->res < 0) {
		struct lent *le = (struct lent *)(uintptr_t)(cqe->user_data & ~TAG_MASK);

		sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: cannot register an entry: %s", q->qid,
			 strerror(-cqe->res));
		sfs_uring_ent_report(le->e, cqe->res);
		le->e = NULL;
		io_uring_cqe_seen(&q->ring, cqe);
	}
	for (unsigned i = 0; i < q->n; i++)
		if (q->ents[i].e)
			sfs_uring_ent_report(q->ents[i].e, 0);
	q_loop(q);
	return NULL;
}

unsigned sfs_uring_nr_loops(unsigned nq)
{
	const char *v = getenv("SFS_XP_LOOPS");
	unsigned long n = v ? strtoul(v, NULL, 10) : 0;

	if (n >= 1 && n <= nq)
		return (unsigned)n;
	return (nq + QUEUES_PER_LOOP - 1) / QUEUES_PER_LOOP;
}

void sfs_uring_loops_start(const struct sfs_uring_cfg *cfg)
{
	unsigned nq = sfs_uring.nq, nl = sfs_uring_nr_loops(nq);
	bool pin = getenv("SFS_XP_LOOPPIN") != NULL;

	sfs_uring.qs = calloc(nq, sizeof(*sfs_uring.qs));
	if (sfs_uring.qs)
		for (unsigned qi = 0; qi < nq; qi++) {
			sfs_uring.qs[qi].ents = calloc(sfs_uring.n, sizeof(struct lent));
			sfs_uring.qs[qi].back.efd = -1;
		}
	/* the transport's (xport.c) when it serves /dev/fuse with a loop too */
	sfs_helpers_start(cfg->helpers ? cfg->helpers : sfs_uring.n, cfg->helpers_idle, cfg->log);
	for (unsigned qi = 0; qi < nq; qi++) {
		struct sfs_uring_q *q = sfs_uring.qs ? &sfs_uring.qs[qi] : NULL;
		bool ok = q && q->ents && sfs_back_init(&q->back) == 0;

		if (q) {
			q->qid = qi;
			q->pin = pin;
		}
		for (unsigned i = 0; i < sfs_uring.n; i++) {
			if (sfs_uring.ents[i].qid % nl != qi)
				continue;
			if (!sfs_uring.ents[i].region || !ok) {
				if (sfs_uring.ents[i].region)
					sfs_uring_ent_report(&sfs_uring.ents[i], -ENOMEM);
				continue;
			}
			q->ents[q->n] = (struct lent){ .e = &sfs_uring.ents[i], .q = q };
			q->n++;
		}
		if (!ok || !q->n)
			continue;
		if (pthread_create(&q->thr, NULL, q_main, q) == 0) {
			q->thr_ok = true;
			continue;
		}
		for (unsigned i = 0; i < q->n; i++)
			sfs_uring_ent_report(q->ents[i].e, -EAGAIN);
	}
}

void sfs_uring_loops_stop(void)
{
	if (!sfs_uring.qs) {
		sfs_helpers_stop();
		return;
	}
	for (unsigned qi = 0; qi < sfs_uring.nq; qi++)
		if (sfs_uring.qs[qi].thr_ok)
			pthread_join(sfs_uring.qs[qi].thr, NULL);
	sfs_helpers_stop();
	for (unsigned qi = 0; qi < sfs_uring.nq; qi++) {
		struct sfs_uring_q *q = &sfs_uring.qs[qi];

		if (q->ring_ok)
			io_uring_queue_exit(&q->ring);
		sfs_back_destroy(&q->back);
		free(q->ents);
	}
	free(sfs_uring.qs);
	sfs_uring.qs = NULL;
}

unsigned sfs_uring_loops_trim(size_t min)
{
	unsigned n = 0;

	for (unsigned qi = 0; sfs_uring.qs && qi < sfs_uring.nq; qi++) {
		struct sfs_uring_q *q = &sfs_uring.qs[qi];
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		unsigned asked = 0;
		int rc;

		if (!q->ring_ok || !(q->ring.flags & IORING_SETUP_DEFER_TASKRUN))
			continue;
		for (unsigned i = 0; i < q->n; i++) {
			struct sfs_uring_ent *e = q->ents[i].e;

			if (!e || atomic_load(&e->trim) ||
			    atomic_load_explicit(&e->touched, memory_order_relaxed) < min)
				continue;
			atomic_store(&e->trim, true);
			asked++;
		}
		if (!asked || !(sqe = io_uring_get_sqe(&sfs_uring.ctl)))
			continue;
		atomic_fetch_add(&q->trims, asked);
		io_uring_prep_msg_ring(sqe, q->ring.ring_fd, 0, UD_TRIM, 0);
		rc = io_uring_submit_and_wait(&sfs_uring.ctl, 1);
		if (rc >= 0 && io_uring_peek_cqe(&sfs_uring.ctl, &cqe) == 0) {
			rc = cqe->res;
			io_uring_cqe_seen(&sfs_uring.ctl, cqe);
		}
		if (rc < 0 && !sfs_uring.trim_said) {
			/* the loop trims after its next completion instead */
			sfs_logf(sfs_uring.log, SFS_LOG_WARN, "io_uring: cannot wake a queue's loop to give memory "
				 "back: %s", strerror(-rc));
			sfs_uring.trim_said = true;
		}
		n += asked;
	}
	return n;
}
