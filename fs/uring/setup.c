/* SPDX-License-Identifier: MIT */
/*
 * setup.c - FUSE over io_uring set up: the probe, the rings, each
 * entry registered with its worker started, the fall-back to /dev/fuse,
 * and the stop.  What a worker does with its entry is worker.c's.
 *
 * Since Linux 6.14 (fuse.enable_uring=Y) the kernel can hand requests to
 * the daemon through io_uring instead of read(2) on /dev/fuse: the daemon
 * registers ring entries (a header buffer and a payload buffer each) on
 * per-CPU queues, and each IORING_OP_URING_CMD completes with a request
 * in its entry; committing the reply fetches the next request in the same
 * command (proto.h has the layout).
 *
 * libfuse 3.18 runs one thread per queue that calls every handler itself,
 * so a queue has one backing I/O in flight and a deep queue waits behind
 * it.  Here every entry has a worker thread of its own, with its own small
 * ring (worker.c): a queue of depth D thus keeps up to D backing
 * I/Os in flight.
 *
 *   queue 0 (CPU 0): entry 0 <- worker 0 (ring 0)     queue 1 (CPU 1): ...
 *                    entry 1 <- worker 1 (ring 1)
 *                    ...  depth entries
 *
 * An entry is one mapping: a page for the header buffer, then the payload
 * buffer (the kernel's largest request, page-aligned); each worker sets up
 * its own ring of 128-byte SQEs with /dev/fuse registered at index 0 and
 * IORING_SETUP_DEFER_TASKRUN where the kernel has it, polls the stop
 * eventfd on it, and registers its entry.
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
 * For measurements only: SFS_XP_NODEFER=1 in the environment sets the
 * workers' rings up without IORING_SETUP_DEFER_TASKRUN (SFS_XP_NOPIN is
 * worker.c's).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define RING_ENTRIES 4                 /* the command, the poll, a message, room to spare */

struct sfs_uring_state sfs_uring = { .fd = -1, .stop_efd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER, .trim_lock = PTHREAD_MUTEX_INITIALIZER };

int sfs_uring_prep_cmd(struct io_uring *ring, uint32_t cmd, unsigned qid, uint64_t commit_id, struct iovec *iov,
		       uint64_t ud)
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
	sqe->user_data = ud;
	if (iov) {
		sqe->addr = (uint64_t)(uintptr_t)iov;
		sqe->len = 2;
	}
	req = (struct sfs_uring_cmd_req *)(void *)sqe->cmd;
	req->qid = (uint16_t)qid;
	req->commit_id = commit_id;
	return 0;
}

int sfs_uring_prep_ent(struct sfs_uring_ent *e, uint32_t cmd)
{
	e->last_cmd = cmd;
	return sfs_uring_prep_cmd(&e->ring, cmd, e->qid, cmd == SFS_URING_CMD_COMMIT_AND_FETCH ? e->commit_id : 0,
				  cmd == SFS_URING_CMD_REGISTER ? e->iov : NULL, UD_CMD);
}

int sfs_uring_ring_init(struct io_uring *ring, unsigned entries, int fd, bool single)
{
	struct io_uring_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	if (single)                      /* only its thread submits, and waits for its completions */
		p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	rc = io_uring_queue_init_params(entries, ring, &p);
	if (rc < 0 && single)
		return sfs_uring_ring_init(ring, entries, fd, false);
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

	if (sfs_uring.ctl_ok)
		return 0;
	rc = sfs_uring_ring_init(&sfs_uring.ctl, RING_ENTRIES, fd, false);
	if (rc < 0)
		return sfs_err(why, whylen, rc, "cannot set up an io_uring of 128-byte entries for /dev/fuse: %s",
			       strerror(-rc));
	probe = io_uring_get_probe_ring(&sfs_uring.ctl);
	if (!probe || !io_uring_opcode_supported(probe, IORING_OP_URING_CMD)) {
		if (probe)
			io_uring_free_probe(probe);
		io_uring_queue_exit(&sfs_uring.ctl);
		return sfs_err(why, whylen, -EOPNOTSUPP, "this kernel's io_uring has no IORING_OP_URING_CMD");
	}
	io_uring_free_probe(probe);
	sfs_uring.ctl_ok = true;
	sfs_uring.fd = fd;
	return 0;
}

/* Make the kernel give up io_uring for this connection: a REGISTER it refuses. */
static void fall_back(void)
{
	struct io_uring_cqe *cqe;

	if (!sfs_uring.ctl_ok || sfs_uring_prep_cmd(&sfs_uring.ctl, SFS_URING_CMD_REGISTER, 0xffff, 0, NULL, UD_CMD) < 0)
		return;
	if (io_uring_submit_and_wait(&sfs_uring.ctl, 1) >= 0 && io_uring_peek_cqe(&sfs_uring.ctl, &cqe) == 0)
		io_uring_cqe_seen(&sfs_uring.ctl, cqe);
}

/* Set e up: its ring, the stop poll, the entry registered.  0 or -errno. */
static int ent_setup(struct sfs_uring_ent *e)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int rc;

	rc = sfs_uring_ring_init(&e->ring, RING_ENTRIES, sfs_uring.fd, !getenv("SFS_XP_NODEFER"));
	if (rc < 0)
		return rc;
	e->ring_ok = true;
	e->defer = e->ring.flags & IORING_SETUP_DEFER_TASKRUN;
	sqe = io_uring_get_sqe(&e->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, sfs_uring.stop_efd, POLLIN);
	sqe->user_data = UD_STOP;
	rc = sfs_uring_prep_ent(e, SFS_URING_CMD_REGISTER);
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

void sfs_uring_ent_report(struct sfs_uring_ent *e, int rc)
{
	pthread_mutex_lock(&sfs_uring.lock);
	sfs_uring.reported++;
	if (rc == 0)
		sfs_uring.per_q[e->qid]++;
	pthread_cond_broadcast(&sfs_uring.cond);
	pthread_mutex_unlock(&sfs_uring.lock);
}

/* A worker's thread: its entry set up and registered, reported, then served until the end. */
static void *ent_main(void *arg)
{
	struct sfs_uring_ent *e = arg;
	int rc = ent_setup(e);

	if (rc < 0)
		sfs_logf(sfs_uring.log, SFS_LOG_ERR, "io_uring: queue %u: cannot register an entry: %s", e->qid,
			 strerror(-rc));
	sfs_uring_ent_report(e, rc);
	if (rc == 0)
		sfs_uring_ent_loop(e);
	return NULL;
}

int sfs_uring_start(const struct sfs_uring_cfg *cfg)
{
	long page = sysconf(_SC_PAGESIZE);
	sigset_t all, old;
	unsigned missing = 0;
	int rc = 0;

	if (!sfs_uring.ctl_ok || sfs_uring.ents)
		return -EINVAL;
	sfs_uring.page = page > 0 ? (size_t)page : 4096;
	sfs_uring.max_payload = (cfg->max_payload + sfs_uring.page - 1) / sfs_uring.page * sfs_uring.page;
	sfs_uring.log = cfg->log;
	sfs_uring.pin = cfg->pin && !getenv("SFS_XP_NOPIN");
	sfs_uring.nq = sfs_uring_nr_queues();
	sfs_uring.depth = cfg->depth ? cfg->depth : 1;
	sfs_uring.loop = cfg->loop;
	sfs_uring.n = sfs_uring.nq * sfs_uring.depth;
	sfs_uring.ents = calloc(sfs_uring.n, sizeof(*sfs_uring.ents));
	sfs_uring.per_q = calloc(sfs_uring.nq, sizeof(*sfs_uring.per_q));
	sfs_uring.busy = calloc(sfs_uring.nq, sizeof(*sfs_uring.busy));
	if (sched_getaffinity(0, sizeof(sfs_uring.all), &sfs_uring.all) < 0)
		sfs_uring.pin = false;
	sfs_uring.stop_efd = eventfd(0, EFD_CLOEXEC);
	if (!sfs_uring.ents || !sfs_uring.per_q || !sfs_uring.busy || sfs_uring.stop_efd < 0) {
		rc = sfs_uring.stop_efd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);    /* signals are the main thread's */
	for (unsigned i = 0; i < sfs_uring.n; i++) {
		struct sfs_uring_ent *e = &sfs_uring.ents[i];

		e->qid = i % sfs_uring.nq;
		e->region_len = sfs_uring.page + sfs_uring.max_payload;
		e->region = mmap(NULL, e->region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (e->region == MAP_FAILED) {
			e->region = NULL;
			sfs_uring_ent_report(e, -ENOMEM);
			continue;
		}
		e->hdr = (struct sfs_uring_req_header *)(void *)e->region;
		e->payload = e->region + sfs_uring.page;
		e->iov[0] = (struct iovec){ e->hdr, sizeof(*e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, sfs_uring.max_payload };
		if (sfs_uring.loop)
			continue;        /* its queue's loop registers it (loop.c) */
		if (pthread_create(&e->thr, NULL, ent_main, e) != 0)
			sfs_uring_ent_report(e, -EAGAIN);
		else
			e->thr_ok = true;
	}
	if (sfs_uring.loop)
		sfs_uring_loops_start(cfg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_lock(&sfs_uring.lock);
	while (sfs_uring.reported < sfs_uring.n)
		pthread_cond_wait(&sfs_uring.cond, &sfs_uring.lock);
	for (unsigned q = 0; q < sfs_uring.nq; q++)
		missing += sfs_uring.per_q[q] == 0;
	pthread_mutex_unlock(&sfs_uring.lock);
	if (missing) {
		rc = -EIO;
		goto fail;
	}
	atomic_store(&sfs_uring.ready, true);
	pthread_mutex_lock(&sfs_uring.trim_lock);
	sfs_uring.trim_ok = true;
	pthread_mutex_unlock(&sfs_uring.trim_lock);
	return 0;
fail:
	sfs_logf(sfs_uring.log, SFS_LOG_ERR,
		 "io_uring: %u of %u queues without an entry (%s); falling back to /dev/fuse",
		 missing, sfs_uring.nq, strerror(-rc));
	fall_back();
	return rc;
}

unsigned sfs_uring_queues(void)
{
	return atomic_load(&sfs_uring.ready) ? sfs_uring.nq : 0;
}

unsigned sfs_uring_depth(void)
{
	return atomic_load(&sfs_uring.ready) ? sfs_uring.depth : 0;
}

void sfs_uring_stop(void)
{
	pthread_mutex_lock(&sfs_uring.trim_lock);
	sfs_uring.trim_ok = false;
	pthread_mutex_unlock(&sfs_uring.trim_lock);
	if (sfs_uring.ents) {
		uint64_t one = 1;

		if (sfs_uring.stop_efd >= 0 && write(sfs_uring.stop_efd, &one, sizeof(one)) != sizeof(one))
			sfs_logf(sfs_uring.log, SFS_LOG_WARN, "io_uring: cannot wake the ring workers: %s", strerror(errno));
		for (unsigned i = 0; i < sfs_uring.n; i++)
			if (sfs_uring.ents[i].thr_ok)
				pthread_join(sfs_uring.ents[i].thr, NULL);
		if (sfs_uring.loop)
			sfs_uring_loops_stop();
		for (unsigned i = 0; i < sfs_uring.n; i++) {
			if (sfs_uring.ents[i].ring_ok)
				io_uring_queue_exit(&sfs_uring.ents[i].ring);
			if (sfs_uring.ents[i].region)
				munmap(sfs_uring.ents[i].region, sfs_uring.ents[i].region_len);
		}
		free(sfs_uring.ents);
		sfs_uring.ents = NULL;
	}
	free(sfs_uring.per_q);
	sfs_uring.per_q = NULL;
	free(sfs_uring.busy);
	sfs_uring.busy = NULL;
	if (sfs_uring.stop_efd >= 0)
		close(sfs_uring.stop_efd);
	sfs_uring.stop_efd = -1;
	if (sfs_uring.ctl_ok)
		io_uring_queue_exit(&sfs_uring.ctl);
	sfs_uring.ctl_ok = false;
	atomic_store(&sfs_uring.ready, false);
	sfs_uring.reported = 0;
}

