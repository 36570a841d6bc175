/* SPDX-License-Identifier: MIT */
/*
 * checkstore.c - sectorfs-img check STORE: every image of a store, and
 * what else a crash or a user left in it.
 *
 *   1. the lock file (a FIFO, a directory or a symbolic link there keeps
 *      the daemon out: sfs_store_lock_file_check, the daemon's own rule; a
 *      problem, which --repair removes), and what the next start of the
 *      store puts right (sfs_recover_plan, the plan the start applies):
 *      temporary files, interrupted renames, unlinks, creates and grows.
 *      Each is "pending: ... completed at the next start", no problem;
 *      one the start cannot do (blocked) is a problem, which --repair
 *      clears where it can (sfs_recover_clear) or names the command to
 *      run.  --repair also applies the pending ones (it opens the store).
 *      While a daemon serves the store it has done this at its start, and
 *      what is in the state directory may be its work in progress: the
 *      step is skipped, with a note, the one that says the store is
 *      served (not repeated for each image).  --repair of a served store
 *      is refused before anything is checked, and says so.
 *   2. every name with a sidecar, a map or a backing file beside another
 *      of them: checked as 'check STORE/NAME' does (the same code), as
 *      the next start will leave it (its pending item applied on paper:
 *      a grow's sidecar as rewritten, a rename's files where they are
 *      now), so a backing file and map left without a sidecar, or a map
 *      alone, is a problem of that name.
 *   3. the other files: notes only, they are the user's and left alone.
 * The exit status is the OR of the fsck codes of every part.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "store/recover.h"

struct pending {
	const char *store;
	unsigned n, errors;
};

/* What the store's recovery (run by --repair) did, and what it could not do. */
static void print_repaired(void *ctx, int level, const char *msg)
{
	struct pending *p = ctx;

	if (level == SFS_LOG_ERR)
		p->errors++;
	else
		p->n++;
	printf("%s: %s: %s\n", p->store, level == SFS_LOG_ERR ? "not repaired" : "repaired", msg);
}

/* The plan of the next start's recovery, item by item. */
struct plans {
	struct sfs_recover_item *v;
	size_t n, cap;
};

static void keep_plan(void *ctx, const struct sfs_recover_item *p)
{
	struct plans *l = ctx;

	if (l->n == l->cap) {
		void *q = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 8) * sizeof(*l->v));

		if (!q)
			return;
		l->v = q;
	}
	l->v[l->n++] = *p;
}

/* The item that concerns image name, or NULL. */
static const struct sfs_recover_item *plan_of(const struct plans *l, const char *name)
{
	const struct sfs_recover_item *found = NULL;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].is_record && (strcmp(l->v[i].name, name) == 0 || strcmp(l->v[i].to, name) == 0))
			found = &l->v[i];
	return found;
}

/* Open the store (taking its lock), which recovers it, and clear what that could not do,
 * printing each; the code. */
static int recover(const char *store)
{
	struct sfs_store_opts o = { .lazy = true, .holder = IMG_PROG " check --repair" };
	struct pending done = { store, 0, 0 };
	struct sfs_store *s;
	char err[1024];
	int sfd, rc = FSCK_CLEAN;

	sfs_sidecar_defaults(&o.defaults);
	o.log.fn = print_repaired;
	o.log.ctx = &done;
	if (sfs_store_open(store, &o, &s, err, sizeof(err)) < 0) {
		tool_error("%s", err);
		return FSCK_LEFT;
	}
	sfd = openat(sfs_store_fd(s), SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || sfs_recover_clear(sfs_store_fd(s), sfd, &o.log) < 0)
		rc |= FSCK_LEFT;
	if (sfd >= 0)
		close(sfd);
	if (done.n)
		rc |= FSCK_REPAIRED;
	return sfs_store_close(s) < 0 ? FSCK_OPER : rc;
}

/* Is any of image name's files (sidecar, backing file, map) there? */
static bool any_file(int dfd, int sfd, const char *name)
{
	char f[SFS_FILE_NAME_LEN];
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	       fstatat(dfd, sfs_sidecar_name(f, sizeof(f), name), &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	       fstatat(sfd, sfs_map_name(f, sizeof(f), name), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The lock file: one that the daemon cannot lock with is a problem (the one rule,
 * sfs_store_lock_file_check); --repair removes it when it holds nothing (not a directory with files
 * in it).  The part's exit code. */
static int check_lock(const char *store, int sfd, bool repair)
{
	char why[512];

	if (sfs_store_lock_file_check(store, sfd, why, sizeof(why)) == 0)
		return FSCK_CLEAN;
	printf("%s\n", why);
	if (!repair)
		return FSCK_LEFT;
	if (unlinkat(sfd, SFS_LOCK_FILE, 0) < 0 && unlinkat(sfd, SFS_LOCK_FILE, AT_REMOVEDIR) < 0) {
		printf("%s: not repaired: cannot remove %s/%s: %s (move it out of the store: mv %s/%s/%s "
		       "SOMEWHERE)\n", store, SFS_STATE_DIR, SFS_LOCK_FILE, strerror(errno), store, SFS_STATE_DIR,
		       SFS_LOCK_FILE);
		return FSCK_LEFT;
	}
	printf("%s: repaired: removed %s/%s\n", store, SFS_STATE_DIR, SFS_LOCK_FILE);
	return FSCK_REPAIRED;
}

/* Part 1: the lock file and what the next start's recovery does, into pl (the pending items,
 * shown with the images they concern).  Returns the part's exit code. */
static int check_recovery(const char *store, int dfd, bool repair, struct plans *pl)
{
	char holder[512];
	int sfd, rc = FSCK_CLEAN;

	if (img_served(store, holder, sizeof(holder))) {
		printf("%s: note: served by sectorfs (%s), which put right what a crash left when it started; "
		       "its images are checked as of its last flush\n", store, holder[0] ? holder : "holder unknown");
		return FSCK_CLEAN;
	}
	sfd = openat(dfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 && errno == ENOENT)
		return FSCK_CLEAN;
	if (sfd < 0) {
		int err = errno;
		struct stat st;
		bool other = fstatat(dfd, SFS_STATE_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);

		/* the daemon refuses such a store: a problem of the store's, left for the user (it may
		 * be a file of theirs) */
		if (other)
			printf("%s/%s: the state directory is not a directory (%s): sectorfs does not serve the "
			       "store until it is moved away (mv %s/%s SOMEWHERE)\n", store, SFS_STATE_DIR,
			       S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			       S_ISREG(st.st_mode) ? "a regular file" : "a special file", store, SFS_STATE_DIR);
		else
			printf("%s/%s: cannot open the state directory: %s\n", store, SFS_STATE_DIR, strerror(err));
		return other ? FSCK_LEFT : FSCK_OPER;
	}
	rc |= check_lock(store, sfd, repair);
	if (sfs_recover_plan(dfd, sfd, keep_plan, pl) < 0) {
		close(sfd);
		return rc | FSCK_OPER;
	}
	if (repair && pl->n && !(rc & FSCK_LEFT)) {
		rc |= recover(store);
		pl->n = 0;
		sfs_recover_plan(dfd, sfd, keep_plan, pl);
	}
	/* each item is shown with the image it concerns (part 2); here those with no image to show
	 * them with: temporary files, and records whose images have no file left */
	for (size_t i = 0; i < pl->n; i++) {
		const struct sfs_recover_item *p = &pl->v[i];
		bool alone = !p->is_record || (!any_file(dfd, sfd, p->name) && !(p->to[0] && any_file(dfd, sfd, p->to)));

		if (p->verdict == SFS_RECOVER_BLOCKED)
			rc |= FSCK_LEFT;
		if (p->verdict == SFS_RECOVER_BLOCKED && alone)
			printf("%s/%s: %s: the next start cannot do it (%s)\n", store, p->file, p->what,
			       p->fix[0] ? p->fix : "see the log");
		else if (!p->is_record)
			printf("%s/%s: pending: %s: removed at the next start\n", store, p->file, p->what);
		else if (alone)
			printf("%s/%s: pending: %s: completed at the next start\n", store, p->name, p->what);
	}
	close(sfd);
	return rc;
}

struct name_list {
	char (*v)[SFS_NAME_MAX + 1];
	size_t n, cap;
};

static int add_name(struct name_list *l, const char *name, size_t len)
{
	if (len > SFS_NAME_MAX)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == len && memcmp(l->v[i], name, len) == 0)
			return 0;
	if (l->n == l->cap) {
		void *p = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 32) * sizeof(*l->v));

		if (!p)
			return -ENOMEM;
		l->v = p;
	}
	memcpy(l->v[l->n], name, len);
	l->v[l->n++][len] = '\0';
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Does dfd/NAME+suffix exist? */
static bool exists(int dfd, const char *name, const char *suffix)
{
	char f[NAME_MAX + 16];
	struct stat st;

	snprintf(f, sizeof(f), "%s%s", name, suffix);
	return fstatat(dfd, f, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Is file (in the store directory) a temporary file the next start removes? */
static bool removed(const struct plans *pl, const char *file)
{
	for (size_t i = 0; i < pl->n; i++)
		if (!pl->v[i].is_record && strcmp(pl->v[i].file, file) == 0)
			return true;
	return false;
}

/* Names that are images or what is left of one: sidecars, maps, and where a pending rename
 * moves one; files beside none are the user's (noted). */
static int collect(const char *store, int dfd, const struct plans *pl, struct name_list *l)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int sfd = openat(dfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		if (sfs_sidecar_image_len(de->d_name)) {
			char name[NAME_MAX + 1];

			n = sfs_sidecar_image_len(de->d_name);
			snprintf(name, sizeof(name), "%.*s", (int)n, de->d_name);
			if (sfs_name_valid(name) == 0 && add_name(l, name, n) < 0)
				break;
		} else if (!exists(dfd, de->d_name, SFS_SIDECAR_SUFFIX) &&
			   !(sfd >= 0 && exists(sfd, de->d_name, SFS_MAP_SUFFIX)) && !removed(pl, de->d_name)) {
			printf("%s/%s: note: not an image (no sidecar, no map); left alone\n", store, de->d_name);
		}
	}
	closedir(d);
	if (sfd >= 0 && (d = fdopendir(sfd))) {
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name), k = sizeof(SFS_MAP_SUFFIX) - 1;

			if (de->d_name[0] != '.' && n > k && strcmp(de->d_name + n - k, SFS_MAP_SUFFIX) == 0 &&
			    add_name(l, de->d_name, n - k) < 0)
				break;
		}
		closedir(d);
	} else if (sfd >= 0) {
		close(sfd);
	}
	for (size_t i = 0; i < pl->n; i++)
		if (pl->v[i].to[0])
			add_name(l, pl->v[i].to, strlen(pl->v[i].to));
	qsort(l->v, l->n, sizeof(*l->v), cmp_names);
	return 0;
}

/* Check each name of l as 'check STORE/NAME' does, as the next start leaves it (pl); the OR of
 * their codes, *clean those clean. */
static int check_images(const char *store, const struct name_list *l, const struct plans *pl, bool repair,
			unsigned *clean)
{
	char path[PATH_MAX];
	struct img_ref ref;
	int rc = FSCK_CLEAN, r;

	fflush(stdout);
	for (size_t i = 0; i < l->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", store, l->v[i]);
		r = img_ref_parse(path, &ref) < 0 ? FSCK_USAGE
						  : img_check_store_image(&ref, repair, plan_of(pl, l->v[i]));
		fflush(stdout);
		if (r == FSCK_CLEAN)
			(*clean)++;
		rc |= r;
	}
	return rc;
}

int img_check_store(const char *store, bool repair)
{
	struct name_list l = { 0 };
	struct plans pl = { 0 };
	unsigned clean = 0;
	int rc = FSCK_CLEAN, dfd;

	dfd = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		tool_error("%s: cannot open store: %s", store, strerror(errno));
		return FSCK_OPER;
	}
	if (repair && img_refuse_store_if_served(store) < 0) {
		printf("%s: nothing checked or repaired: --repair needs the store unmounted\n", store);
		close(dfd);
		return FSCK_OPER;
	}
	rc |= check_recovery(store, dfd, repair, &pl);
	if (collect(store, dfd, &pl, &l) < 0) {
		tool_error("%s: cannot read store: %s", store, strerror(errno));
		close(dfd);
		free(l.v);
		free(pl.v);
		return rc | FSCK_OPER;
	}
	close(dfd);
	rc |= check_images(store, &l, &pl, repair, &clean);
	printf("%s: %zu image%s, %u clean%s\n", store, l.n, l.n == 1 ? "" : "s", clean,
	       rc & FSCK_LEFT ? "; problems left" : rc & FSCK_REPAIRED ? "; problems repaired" : "");
	free(l.v);
	free(pl.v);
	return rc;
}
