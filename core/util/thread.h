/* SPDX-License-Identifier: MIT */
/*
 * thread.h - a thread of sectorfs's own: started with every signal
 * blocked, so that signals reach the thread that waits for them (the
 * daemon's main thread, whose libfuse handlers end its loop; a tool's
 * main thread), never a worker, a loop or a helper.
 */
#ifndef SFS_THREAD_H
#define SFS_THREAD_H

#include <pthread.h>

/*
 * Start fn(arg) in a new thread (*thr) with every signal blocked, the
 * calling thread's mask left as it was; attr as for pthread_create
 * (NULL for the defaults).  0, or:
 *  -EAGAIN  no resources for another thread;
 *  -EINVAL  attr is not valid;
 *  -EPERM   attr asks for a scheduling the caller may not set.
 */
int sfs_thread_start(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

#endif
