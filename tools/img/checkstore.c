/* SPDX-License-Identifier: MIT */
/*
 * checkstore.c - sectorfs-img check STORE: every image of a store, and
 * what else a crash or a user left in it.
 *
 *   1. what the next start of the store would put right (recover.c, run
 *      without changing anything): temporary files, interrupted renames,
 *      unlinks and grows.  Each is a problem; --repair opens the store
 *      (taking its lock), which does that recovery, and says what it did.
 *      While a daemon serves the store it has done this at its start, and
 *      what is in the state directory may be its work in progress: the
 *      step is skipped, with a note, the one that says the store is
 *      served (not repeated for each image).  --repair of a served store
 *      is refused before anything is checked, and says so.
 *   2. every name with a sidecar, a map or a backing file beside another
 *      of them: checked as 'check STORE/NAME' does (the same code), so a
 *      backing file and map left without a sidecar, or a map alone, is a
 *      problem of that name.
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
#include "recover.h"

struct pending {
	const char *store;
	unsigned n;
	const char *prefix;
};

static void print_pending(void *ctx, int level, const char *msg)
{
	struct pending *p = ctx;

	(void)level;
	p->n++;
	printf("%s: %s%s\n", p->store, p->prefix, msg);
}

/* Open the store (taking its lock), which recovers it, printing what it does; the code. */
static int recover(const char *store)
{
	struct sfs_store_opts o = { .lazy = true, .holder = IMG_PROG " check --repair" };
	struct pending done = { store, 0, "repaired: " };
	struct sfs_store *s;
	char err[1024];

	sfs_sidecar_defaults(&o.defaults);
	o.log.fn = print_pending;
	o.log.ctx = &done;
	if (sfs_store_open(store, &o, &s, err, sizeof(err)) < 0) {
		tool_error("%s", err);
		return FSCK_LEFT;
	}
	return sfs_store_close(s) < 0 ? FSCK_OPER : FSCK_REPAIRED;
}

/* Part 1: pending recovery.  Returns the part's exit code. */
static int check_recovery(const char *store, int dfd, bool repair)
{
	struct pending p = { store, 0, "" };
	struct sfs_log log = { print_pending, &p };
	char holder[512];
	int sfd;

	if (img_served(store, holder, sizeof(holder))) {
		printf("%s: note: served by sectorfs (%s), which put right what a crash left when it started; "
		       "its images are checked as of its last flush\n", store, holder[0] ? holder : "holder unknown");
		return FSCK_CLEAN;
	}
	sfd = openat(dfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return errno == ENOENT ? FSCK_CLEAN : FSCK_OPER;
	sfs_recover(dfd, sfd, &log, false);
	close(sfd);
	if (p.n == 0)
		return FSCK_CLEAN;
	return repair ? recover(store) : FSCK_LEFT;
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

/* Names that are images or what is left of one: sidecars, and maps; files beside neither are
 * the user's (noted). */
static int collect(const char *store, int dfd, struct name_list *l)
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
			   !(sfd >= 0 && exists(sfd, de->d_name, SFS_MAP_SUFFIX))) {
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
	qsort(l->v, l->n, sizeof(*l->v), cmp_names);
	return 0;
}

/* Check each name of l as 'check STORE/NAME' does; the OR of their codes, *clean those clean. */
static int check_images(const char *store, const struct name_list *l, bool repair, unsigned *clean)
{
	char path[PATH_MAX];
	struct img_ref ref;
	int rc = FSCK_CLEAN, r;

	fflush(stdout);
	for (size_t i = 0; i < l->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", store, l->v[i]);
		r = img_ref_parse(path, &ref) < 0 ? FSCK_USAGE : img_check_store_image(&ref, repair);
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
	rc |= check_recovery(store, dfd, repair);
	if (collect(store, dfd, &l) < 0) {
		tool_error("%s: cannot read store: %s", store, strerror(errno));
		close(dfd);
		free(l.v);
		return rc | FSCK_OPER;
	}
	close(dfd);
	rc |= check_images(store, &l, repair, &clean);
	printf("%s: %zu image%s, %u clean%s\n", store, l.n, l.n == 1 ? "" : "s", clean,
	       rc & FSCK_LEFT ? "; problems left" : rc & FSCK_REPAIRED ? "; problems repaired" : "");
	free(l.v);
	return rc;
}
