/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the two halves of FUSE over io_uring share: a ring
 * entry with its worker, the transport's one state (one mount a process),
 * and the helpers each half calls of the other.  setup.c sets the
 * rings up, registers the entries, starts and stops the workers;
 * worker.c is the worker's loop: serving, replies, pinning and
 * trimming.  Private to fs/: the transport's interface is uring.h.
 */
#ifndef SFS_URING_IMPL_H
#define SFS_URING_IMPL_H

#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "uring.h"
#include "proto.h"

#define UD_CMD 1                       /* user_data of an entry's command */
#define UD_STOP 2                      /* ... of the poll on the stop eventfd */
#define UD_TRIM 3                      /* ... of sfs_uring_trim's message */

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

struct sfs_uring_state {
	struct sfs_uring_ent *ents;
	unsigned nq, depth, n;
	bool loop;                     /* one event loop per queue (loop.c), not a worker per entry */
	struct sfs_uring_q *qs;        /* with loop: the nq loops */
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
};

struct sfs_uring_q;                    /* a queue's event loop (loop.c) */

/* The transport's state, defined in setup.c: set up by sfs_uring_probe and
 * sfs_uring_start, read by the workers, torn down by sfs_uring_stop. */
extern struct sfs_uring_state sfs_uring;

/* setup.c: prepare FUSE command cmd on ring, for queue qid, committing commit_id,
 * registering iov (NULL: none), its completion tagged ud; the caller submits it.  0, or -EBUSY
 * when the ring has no free SQE. */
int sfs_uring_prep_cmd(struct io_uring *ring, uint32_t cmd, unsigned qid, uint64_t commit_id, struct iovec *iov,
		       uint64_t ud);

/* setup.c: a ring of at least entries 128-byte SQEs with fd registered at index 0, for one
 * thread (single: SINGLE_ISSUER and DEFER_TASKRUN where the kernel has them).  0 or -errno. */
int sfs_uring_ring_init(struct io_uring *ring, unsigned entries, int fd, bool single);

/* setup.c: e is registered (rc 0) or failed (-errno): counted for sfs_uring_start. */
void sfs_uring_ent_report(struct sfs_uring_ent *e, int rc);

/* worker.c: n bytes of e's payload buffer are written (by the kernel or by the reply). */
void sfs_uring_touch(struct sfs_uring_ent *e, size_t n);

/* worker.c: the request the kernel put in e, as libfuse takes it: its headers copied to
 * just before the payload (commit_id noted, nothing replied yet); its start and *n bytes, or
 * NULL when it is malformed. */
char *sfs_uring_ent_take(struct sfs_uring_ent *e, size_t *n);

/* worker.c: a request of e that got no reply gets -EIO (logged), so that it can be committed. */
void sfs_uring_ent_answered(struct sfs_uring_ent *e);

/* loop.c: with cfg->loop, the loop threads (sfs_uring_nr_loops), each registering its
 * queues' entries (each reported) and serving them.  setup.c calls it from
 * sfs_uring_start. */
void sfs_uring_loops_start(const struct sfs_uring_cfg *cfg);

/* loop.c: after the stop eventfd fired, join the loops and the helpers, free the loops. */
void sfs_uring_loops_stop(void);

/* loop.c: sfs_uring_trim of the loops: each queue told once. */
unsigned sfs_uring_loops_trim(size_t min);

/* setup.c: prepare e's command cmd (REGISTER or COMMIT_AND_FETCH, committing
 * e->commit_id) on e's ring; the caller submits it.  0, or -EBUSY when the ring has no free SQE. */
int sfs_uring_prep_ent(struct sfs_uring_ent *e, uint32_t cmd);

/* worker.c: e's worker, once its entry is registered: serve the requests the kernel
 * puts in it until the stop eventfd fires or the kernel ends its command (unmount, abort). */
void sfs_uring_ent_loop(struct sfs_uring_ent *e);

#endif
