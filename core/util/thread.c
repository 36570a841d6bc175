/* SPDX-License-Identifier: MIT */
/*
 * thread.c - threads started with every signal blocked (thread.h).
 */
#include <assert.h>
#include <signal.h>

#include "thread.h"

int sfs_thread_start(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	assert(thr && fn);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(thr, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
