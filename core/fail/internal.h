/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what fail.c (the hooks, the cut, open and close) and
 * attr.c (the attributes, the counters) share: the failure state of a
 * disk, and the two changes of power both make.
 */
#ifndef SFS_FAIL_IMPL_H
#define SFS_FAIL_IMPL_H

#include <pthread.h>

#include "diskstate.h"
#include "fail.h"
#include "contract/names.h"

struct sfs_fail {
	char name[SFS_NAME_MAX + 1];
	char dname[SFS_FILE_NAME_LEN], uname[SFS_FILE_NAME_LEN];   /* NAME.disk, NAME.undo */
	int state_fd;
	struct sfs_fail_config cfg;
	struct sfs_wc_backing b;
	struct sfs_log log;
	struct sfs_wc *wc;            /* NULL: no volatile cache */
	pthread_rwlock_t pw;
	pthread_mutex_t mu;
	int off;                      /* atomic: the power is off or going off */
	size_t nbad;                  /* atomic: ranges in ds.bad */
	int64_t trig_writes;          /* atomic: writes left before a cut, 0: no trigger */
	int64_t trig_flushes;         /* atomic: flushes left before a cut */
	char trig[SFS_FAIL_VALUE_MAX]; /* the trigger as set (mu) */
	struct sfs_diskstate ds;      /* mu */
	struct sfs_wc_cut cut;        /* the next cut's policy and seed (mu) */
	struct sfs_fail_counters cnt; /* mu */
	struct sfs_fail_cutinfo last; /* mu */
	bool gone;                    /* detached: no file is written (pw and mu) */
};

/* Make NAME.disk say ds (sfs_disk_save), unless the state is detached.  Called with mu held.
 * 0 or -errno. */
int sfs_fail_save(struct sfs_fail *f, const struct sfs_diskstate *ds);

/* Cut the power now (seed: this cut's, or NULL for the one set), trigger naming what cut it.
 * Called with nothing held.  0, or the -errno with which the cut could not be recorded (the
 * power stays on) or finished (the power is off and the cut waits for power-on or the next
 * start), err saying which. */
int sfs_fail_cut_now(struct sfs_fail *f, const uint64_t *seed, const char *trigger, char *err, size_t errlen);

/* Power on: a cut not yet finished is finished first.  0 or -errno with err. */
int sfs_fail_power_on(struct sfs_fail *f, char *err, size_t errlen);

#endif
