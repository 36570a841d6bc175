/* SPDX-License-Identifier: MIT */
/*
 * session.c - the locked session that every changing command of
 * sectorfs-img uses.
 *
 * A session is the store opened with sfs_store_open(): that takes the
 * store lock, so a daemon cannot start serving the store while a command
 * changes it, and a command cannot run while a daemon serves it.  The
 * core logs through a sink that shows the warnings that concern the image
 * being worked on; why the image could not be opened comes back whole
 * from sfs_store_lookup().  The store is opened lazily: only the
 * image asked for is loaded, the others are left as they are.
 *
 * Which warnings concern the image follows from the call that logs them,
 * never from their text.  Every call after the store is open (the lookup,
 * the command's own store call, the close) is on the image alone, the
 * only one loaded: its warnings are shown.  Opening the store runs the
 * recovery of the whole store after a crash; as the lock lets one
 * multi-file operation run at a time, a crash leaves at most one pending,
 * and the recovery's warnings are shown when that one concerns the image
 * (an intent record names it, sfs_recover_pending: its grow, create,
 * inflate, unlink, or a rename from or to it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "util/log.h"
#include "store/recover.h"

/* Does the recovery that opening ref's store runs concern the image: does an intent record in
 * its state directory name it?  Looked at before the lock is taken, once no daemon serves the
 * store: only another sectorfs-img can change the records meanwhile, and it holds the lock. */
static bool recovery_concerns(const struct img_ref *ref)
{
	int fd = open(ref->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sfd = -1;
	char what[600];
	bool yes = false;

	if (fd >= 0)
		sfd = openat(fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd >= 0) {
		yes = sfs_recover_pending(sfd, ref->name, what, sizeof(what)) == 1;
		close(sfd);
	}
	if (fd >= 0)
		close(fd);
	return yes;
}

/* Warnings logged while the session's calls concern the image are shown; errors come back from
 * the call that failed. */
static void session_log(void *ctx, int level, const char *msg)
{
	struct img_session *ss = ctx;

	if (level == SFS_LOG_WARN && ss->about_image)
		tool_error("warning: %s", msg);
}

struct sfs_log img_session_log(struct img_session *ss)
{
	struct sfs_log l = { session_log, ss };

	return l;
}

int img_session_open(struct img_session *ss, const struct img_ref *ref, const char *cmd,
		     unsigned flags)
{
	struct sfs_store_opts o = { .stats = false, .lazy = true };
	char err[1024], holder[128], scname[SFS_NAME_MAX + 8];
	struct stat st;
	int rc;

	memset(ss, 0, sizeof(*ss));
	ss->ref = ref;
	ss->store_fd = ss->state_fd = -1;
	ss->quiet = flags & IMG_S_QUIET;
	if (img_store_exists(ref->store) < 0)
		return -1;
	if (img_refuse_if_served(ref) < 0)
		return -1;
	sfs_sidecar_defaults(&o.defaults);
	o.log = img_session_log(ss);
	snprintf(holder, sizeof(holder), IMG_PROG " %s, pid %ld", cmd, (long)getpid());
	o.holder = holder;
	ss->about_image = !ss->quiet && recovery_concerns(ref);
	rc = sfs_store_open(ref->store, &o, &ss->store, err, sizeof(err));
	ss->about_image = !ss->quiet;     /* from now on, every call is on the image */
	if (rc < 0) {
		tool_error("%s", err);
		return -1;
	}
	ss->store_fd = sfs_store_fd(ss->store);
	ss->state_fd = openat(ss->store_fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ss->state_fd < 0) {
		tool_error("%s/%s: %s", ref->store, SFS_STATE_DIR, strerror(errno));
		img_session_close(ss);
		return -1;
	}
	if (!(flags & IMG_S_GET))
		return 0;
	rc = sfs_store_lookup(ss->store, ref->name, &ss->im, err, sizeof(err));
	if (rc < 0) {
		sfs_sidecar_name(scname, sizeof(scname), ref->name);
		if (fstatat(ss->store_fd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			tool_error("%s: no such image (no sidecar %s in %s)", ref->path, scname, ref->store);
		else
			tool_error("%s: cannot open image: %s (see '" IMG_PROG " check %s')", ref->path,
				   err, ref->path);
		ss->im = NULL;
		img_session_close(ss);
		return -1;
	}
	return 0;
}

int img_session_close(struct img_session *ss)
{
	int rc = 0;

	if (ss->im)
		sfs_store_put(ss->store, ss->im);
	ss->im = NULL;
	if (ss->store)
		rc = sfs_store_close(ss->store);
	ss->store = NULL;
	if (ss->state_fd >= 0)
		close(ss->state_fd);
	ss->state_fd = -1;
	if (rc < 0) {
		tool_error("%s: flushing the store failed: %s", ss->ref->store, strerror(-rc));
		return -1;
	}
	return 0;
}

int img_save_sidecar(struct img_session *ss, const struct sfs_sidecar *sc)
{
	char scname[SFS_NAME_MAX + 8];
	int rc;

	sfs_sidecar_name(scname, sizeof(scname), ss->ref->name);
	rc = sfs_sidecar_save(ss->store_fd, scname, ss->state_fd, sc);
	if (rc < 0) {
		tool_error("%s/%s: cannot write sidecar: %s", ss->ref->store, scname, strerror(-rc));
		return -1;
	}
	return 0;
}

void img_bars_end(struct img_bars *b)
{
	if (b->on)
		tool_progress_bar_end(&b->p);
	b->on = false;
}

static int bars_phase(void *ctx, const char *name)
{
	struct img_bars *b = ctx;

	img_bars_end(b);
	if (name && !tool_interrupted) {
		tool_progress_bar_start(&b->p, name);
		b->on = true;
	}
	return tool_interrupted != 0;
}

struct sfs_store_progress img_bars_progress(struct img_bars *b)
{
	struct sfs_store_progress pr = { bars_phase, tool_progress_bar_cb, b };

	return pr;
}
