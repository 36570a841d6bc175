/* SPDX-License-Identifier: MIT */
/*
 * store.c - a directory of disk images and the daemon state beside them.
 *
 *   STORE/
 *     NAME            backing file (raw disk contents)
 *     NAME.json       sidecar: the user's declaration of the image
 *     .sectorfs/
 *       lock          flock()ed by the serving daemon; holds its description
 *       NAME.map      allocation map (allocmap.c)
 *       rename        intent record of a rename in progress: "FROM\0TO\0"
 *       NAME.unlink   intent record of an unlink in progress
 *       NAME.grow     journal of a grow in progress (grow.c)
 *       .tmp.PID.N    temporary files (tmpfile.h), removed at the next open
 *
 * The table of open images is a sorted array under one mutex; it is only
 * touched by lookups and the namespace operations, never by I/O (the FUSE
 * layer keeps image pointers in its file handles).  The namespace
 * operations hold the mutex from start to end, so one multi-file change
 * runs at a time.
 *
 * The sidecar declares an image: a name is an image when NAME.json
 * exists.  Each multi-file operation is ordered so that a crash at any
 * point leaves the name as before the operation or as after it, once the
 * next open of the store (recover.c) has run:
 *   create:  the sidecar first (the commit: a sidecar without a backing
 *            file declares an image, which is made when it is loaded),
 *            then map and backing file; a failure removes them, the
 *            sidecar last;
 *   unlink:  intent record NAME.unlink (with the backing file's inode),
 *            the sidecar (the commit), backing file and map, the record;
 *            recovery finishes it when the sidecar is gone, else drops it;
 *   rename:  intent record, then map, backing, sidecar, then the record
 *            goes; an interrupted rename is finished;
 *   grow:    journal, backing and map files extended, sidecar, map header
 *            (the commit), journal removed: grow.c;
 *   eager zeroing, after a create, a load or a grow of an eagerzeroedthick
 *            image: each block zeroed then its bit set, the bits flushed
 *            (data first) every 256 MiB, the map's "zeroed" flag last;
 *            with zero_background in the image's own thread, outside this
 *            mutex; stopped or interrupted, it resumes at the next load
 *            (image.c);
 *   any rewritten file: a temporary file, fsync, rename (tmpfile.h).
 * No operation overwrites or removes a file that is not a served image's
 * own: a create or rename onto a name held by a file of the user's (or
 * by an image that is refused) fails with EEXIST, and says why in the log.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdcache.h"
#include "fdio.h"
#include "grow.h"
#include "recover.h"
#include "step.h"
#include "store.h"
#include "tmpfile.h"

#define LOCK_FILE "lock"

int (*sfs_step_hook)(const char *op, int n);

/* What identifies one version of a sidecar file: a rewrite changes it. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct entry {
	char name[SFS_NAME_MAX + 1];
	struct sfs_image *im;
	int refs;                  /* the table's own reference counts as one */
	struct sfs_sidecar declared;   /* the sidecar as loaded (or last written by the store) */
	struct file_id scid;       /* and the version of the file it was read from */
};

struct bad_sidecar {
	char name[NAME_MAX + 1];   /* the sidecar's file name */
	struct timespec mtime;
	off_t size;
};

struct sfs_store {
	int dirfd, statefd, lockfd;
	bool locked;               /* this process holds the lock (and may rewrite it) */
	struct sfs_store_opts opts;
	pthread_mutex_t lock;
	struct entry *ents;        /* sorted by name */
	size_t nents, capents;
	struct bad_sidecar *bad;   /* sidecars already reported, to report each change once */
	size_t nbad, capbad;
	struct entry *orphans;     /* unlinked or replaced images still held open */
	size_t norphans, caporphans;
	struct sfs_fdcache *fdc;   /* the images' descriptors (opts.fd_budget), or NULL */
};

int sfs_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SFS_NAME_MAX || name[0] == '.' || strchr(name, '/'))
		return -EINVAL;
	if (sfs_sidecar_image_len(name))   /* NAME.json: a sidecar */
		return -EINVAL;
	return 0;
}

/* ---- table ---- */

static unsigned image_flags(const struct sfs_store *s)
{
	return (s->opts.stats ? SFS_IMAGE_STATS : 0) | (s->opts.buffered ? SFS_IMAGE_BUFFERED : 0) |
	       (s->opts.zero_background ? SFS_IMAGE_ZERO_BG : 0);
}

static struct entry *find(struct sfs_store *s, const char *name, size_t *pos)
{
	size_t lo = 0, hi = s->nents;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->ents[mid].name, name);

		if (c == 0) {
			if (pos)
				*pos = mid;
			return &s->ents[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return NULL;
}

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	void *p;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Put e into the table at its sorted place. */
static int put_in(struct sfs_store *s, const struct entry *e)
{
	size_t pos;

	if (find(s, e->name, &pos))
		return -EEXIST;
	if (grow_array((void **)&s->ents, &s->capents, s->nents + 1, sizeof(*s->ents)) < 0)
		return -ENOMEM;
	memmove(&s->ents[pos + 1], &s->ents[pos], (s->nents - pos) * sizeof(*s->ents));
	s->ents[pos] = *e;
	s->nents++;
	return 0;
}

static int insert(struct sfs_store *s, const char *name, struct sfs_image *im, int refs,
		  const struct sfs_sidecar *declared, const struct file_id *scid)
{
	struct entry e = { .im = im, .refs = refs, .declared = *declared, .scid = *scid };

	snprintf(e.name, sizeof(e.name), "%s", name);
	return put_in(s, &e);
}

static struct file_id file_id_of(const struct stat *st)
{
	struct file_id id = { st->st_dev, st->st_ino, st->st_size, st->st_mtim };

	return id;
}

static bool same_file_id(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Identify the current version of name's sidecar; 0 or -errno. */
static int sidecar_id(struct sfs_store *s, const char *name, struct file_id *id)
{
	char scname[SFS_NAME_MAX + 8];
	struct stat st;

	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*id = file_id_of(&st);
	return 0;
}

/* Describe how sidecar b differs from a ("size 1048576 -> 2097152, ..."); false when equal. */
static bool sidecar_diff(const struct sfs_sidecar *a, const struct sfs_sidecar *b, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
#define DIFF(cond, ...) \
	do { \
		if ((cond) && n < len) \
			n += (size_t)snprintf(buf + n, len - n, "%s", n ? ", " : ""); \
		if ((cond) && n < len) \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
	} while (0)
	DIFF(a->size != b->size, "size %llu -> %llu", (unsigned long long)a->size, (unsigned long long)b->size);
	DIFF(a->lss != b->lss || a->pss != b->pss, "sector %u/%u -> %u/%u", a->lss, a->pss, b->lss, b->pss);
	DIFF(a->prov != b->prov, "provisioning %s -> %s", sfs_prov_name(a->prov), sfs_prov_name(b->prov));
	DIFF(a->block_size != b->block_size, "block_size %llu -> %llu", (unsigned long long)a->block_size,
	     (unsigned long long)b->block_size);
	DIFF(a->zero_offload != b->zero_offload, "zero_offload %s -> %s", a->zero_offload ? "true" : "false",
	     b->zero_offload ? "true" : "false");
#undef DIFF
	return n > 0;
}

/* Take e out of the table and return it. */
static struct entry take_out(struct sfs_store *s, struct entry *e)
{
	size_t pos = (size_t)(e - s->ents);
	struct entry old = *e;

	memmove(&s->ents[pos], &s->ents[pos + 1], (s->nents - pos - 1) * sizeof(*s->ents));
	s->nents--;
	return old;
}

/* Take e out of the table; an image still held open moves to the orphans. */
static void remove_entry(struct sfs_store *s, struct entry *e)
{
	struct entry old = take_out(s, e);

	/* no use zeroing a backing file that is gone; its holders read zeros there anyway */
	if (sfs_image_backing_gone(old.im))
		sfs_image_zero_cancel(old.im);
	if (--old.refs == 0) {
		sfs_image_close(old.im);
		return;
	}
	if (grow_array((void **)&s->orphans, &s->caporphans, s->norphans + 1, sizeof(old)) == 0)
		s->orphans[s->norphans++] = old;
	/* else: leaked until exit rather than freed under its users */
}

/* ---- sidecar loading ---- */

static bool already_reported(struct sfs_store *s, const char *name, const struct stat *st)
{
	for (size_t i = 0; i < s->nbad; i++) {
		struct bad_sidecar *b = &s->bad[i];

		if (strcmp(b->name, name) == 0) {
			bool same = b->size == st->st_size && b->mtime.tv_sec == st->st_mtim.tv_sec &&
				    b->mtime.tv_nsec == st->st_mtim.tv_nsec;

			b->size = st->st_size;
			b->mtime = st->st_mtim;
			return same;
		}
	}
	if (grow_array((void **)&s->bad, &s->capbad, s->nbad + 1, sizeof(*s->bad)) == 0) {
		snprintf(s->bad[s->nbad].name, sizeof(s->bad[s->nbad].name), "%s", name);
		s->bad[s->nbad].size = st->st_size;
		s->bad[s->nbad].mtime = st->st_mtim;
		s->nbad++;
	}
	return false;
}

static void forget_reported(struct sfs_store *s, const char *name)
{
	for (size_t i = 0; i < s->nbad; i++) {
		if (strcmp(s->bad[i].name, name) == 0) {
			s->bad[i] = s->bad[--s->nbad];
			return;
		}
	}
}

static bool out_of_fds(int rc)
{
	return rc == -EMFILE || rc == -ENFILE;
}

/* An image dropped from the namespace while files were open on it (its
 * sidecar went away or changed) comes back when it is declared again: the
 * same instance, never a second one over the same backing file and map,
 * which would keep two maps in memory and lose one's bits.  The new
 * sidecar must say what the instance runs with; if it says anything else
 * the name is refused (-EBUSY, logged once) until the instance is closed,
 * and then loaded from the sidecar as at mount time. */
static int revive_orphan(struct sfs_store *s, const char *name, const struct sfs_sidecar *sc,
			 const struct stat *scst, struct entry **out)
{
	struct stat want;
	char diff[512];
	dev_t dev;
	ino_t ino;

	if (fstatat(s->dirfd, name, &want, AT_SYMLINK_NOFOLLOW) < 0)
		return -ENOENT;
	for (size_t i = 0; i < s->norphans; i++) {
		struct entry e = s->orphans[i];

		/* the file under the name is the one the instance opened (so it is not unlinked) */
		sfs_image_identity(e.im, &dev, &ino);
		if (ino != want.st_ino || dev != want.st_dev)
			continue;
		if (sidecar_diff(&e.declared, sc, diff, sizeof(diff))) {
			char scname[SFS_NAME_MAX + 8];

			sfs_sidecar_name(scname, sizeof(scname), name);
			if (!already_reported(s, scname, scst))
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s.json: declared again while the image is still "
					 "open with other values (%s); not served until its open files are closed",
					 name, diff);
			return -EBUSY;
		}
		snprintf(e.name, sizeof(e.name), "%s", name);
		e.refs++;                    /* the table's reference again */
		e.scid = file_id_of(scst);
		if (sfs_image_set_name(e.im, name) < 0 || put_in(s, &e) < 0)
			return -ENOMEM;
		s->orphans[i] = s->orphans[--s->norphans];
		sfs_logf(&s->opts.log, SFS_LOG_INFO, "%s: declared again; served by the instance still open", name);
		if (out)
			*out = find(s, name, NULL);
		return 0;
	}
	return -ENOENT;
}

/* Load image name from its sidecar into the table (store lock held). -ENOENT when undeclared
 * or not served (the reason logged once). */
static int load_locked(struct sfs_store *s, const char *name, struct entry **out, char *err,
		       size_t errlen)
{
	char scname[SFS_NAME_MAX + 8];
	struct sfs_sidecar sc;
	struct sfs_image *im;
	struct file_id id;
	struct stat st;
	size_t pos;
	int rc;

	if (sfs_name_valid(name) < 0)
		return sfs_err(err, errlen, -ENOENT, "%s: not a valid image name", name);
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sfs_err(err, errlen, -ENOENT, "%s: no such image (no sidecar %s)", name, scname);
	id = file_id_of(&st);
	rc = sfs_sidecar_load(s->dirfd, scname, &sc, err, errlen);
	/* out of descriptors: an idle image gives its own back */
	while (out_of_fds(rc) && s->fdc && sfs_fdcache_evict_one(s->fdc))
		rc = sfs_sidecar_load(s->dirfd, scname, &sc, err, errlen);
	if (rc == 0) {
		rc = revive_orphan(s, name, &sc, &st, out);
		if (rc == 0)
			return 0;
		if (rc == -EBUSY)
			return sfs_err(err, errlen, -ENOENT, "%s: the name is being replaced", name);
		rc = 0;
	}
	if (rc == 0)
		rc = sfs_image_open_in(s->fdc, s->dirfd, s->statefd, name, &sc, image_flags(s), &s->opts.log,
				       &im, err, errlen);
	/* A sidecar that says more than the image has grows it (the user edited it). */
	if (rc == 0 && sc.size > sfs_image_geom(im).size) {
		rc = sfs_grow(s->dirfd, s->statefd, im, sc.size, false, &s->opts.log);
		if (rc < 0) {
			sfs_err(err, errlen, rc, "%s: cannot grow to the sidecar's size %llu: %s", name,
				(unsigned long long)sc.size, strerror(-rc));
			sfs_image_close(im);
		}
	}
	if (rc < 0) {
		if (!already_reported(s, scname, &st))
			sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s (image not served)", err);
		return rc;
	}
	forget_reported(s, scname);
	rc = insert(s, name, im, 1, &sc, &id);
	if (rc < 0) {
		sfs_image_close(im);
		return rc;
	}
	/* eager zeroing not finished: in the background (without zero_background the open did it);
	 * a thread that cannot start is logged, and the blocks are zeroed on first write */
	sfs_image_zero_start(im);
	/* the open's pin: an image nobody uses keeps no descriptor (the zeroing thread has its own) */
	sfs_image_release(im);
	if (out)
		*out = find(s, name, &pos);
	return 0;
}

/* Has e's image been removed from the store directory behind our back
 * (backing file unlinked, or another file put under its name, or its
 * sidecar gone), or its sidecar rewritten to say something else?  Then it
 * is dropped from the namespace; files still open on it keep working on
 * the instance they have.  The backing file is looked at by name and must
 * be the inode first opened (no descriptor needed); *bst is its stat
 * (valid when false is returned and the fstatat worked). */
static bool prune_if_gone_stat(struct sfs_store *s, struct entry *e, struct stat *bst)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], err[512], diff[512];
	struct sfs_sidecar sc;
	struct file_id id;
	struct stat st;
	int brc = sfs_image_backing_stat(e->im, bst);
	bool backing_gone = brc == -ENOENT || brc == -ESTALE;
	int rc = backing_gone ? -ENOENT : sidecar_id(s, e->name, &id);

	sfs_sidecar_name(scname, sizeof(scname), e->name);
	if (rc == 0 && same_file_id(&id, &e->scid))
		return false;
	if (rc == 0) {
		/* The sidecar was written again: read it again. */
		if (sfs_sidecar_load(s->dirfd, scname, &sc, err, sizeof(err)) == 0 &&
		    !sidecar_diff(&e->declared, &sc, diff, sizeof(diff))) {
			e->scid = id;
			return false;
		}
		/* Held open: refused until closed (said once).  Else closed now, and the
		 * next lookup loads the new sidecar as at mount time. */
		if (e->refs > 1 && fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !already_reported(s, scname, &st)) {
			if (sfs_sidecar_load(s->dirfd, scname, &sc, err, sizeof(err)) < 0)
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s (image not served)", err);
			else
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s.json: rewritten while the image is served, "
					 "with other values (%s); not served until its open files are closed",
					 e->name, diff);
		}
		remove_entry(s, e);
		return true;
	}
	/* The map described the removed file; a sidecar alone keeps it for its backing file. */
	sfs_map_name(mapname, sizeof(mapname), e->name);
	if (backing_gone)
		unlinkat(s->statefd, mapname, 0);
	if (backing_gone)
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: backing file removed from the store while served; "
			 "open files keep the removed data until closed", e->name);
	else
		sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: sidecar removed from the store while served; "
			 "no longer served until it is declared again", e->name);
	remove_entry(s, e);
	return true;
}

static bool prune_if_gone(struct sfs_store *s, struct entry *e)
{
	struct stat bst;

	return prune_if_gone_stat(s, e, &bst);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load every sidecar of the store not in the table yet.  The new names are loaded in sorted
 * order, so that each goes in at the end of a table filled from empty (a first scan of
 * thousands of images moves no entry). */
static int scan_locked(struct sfs_store *s)
{
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL, err[512];
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (fd < 0)
		return -errno;
	for (size_t i = s->nents; i-- > 0;)
		prune_if_gone(s, &s->ents[i]);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = sfs_sidecar_image_len(de->d_name);

		if (de->d_name[0] == '.' || !len)
			continue;
		if (len > SFS_NAME_MAX) {
			struct stat st;

			if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !already_reported(s, de->d_name, &st))
				sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: image name too long (more than %d bytes; "
					 "image not served)", de->d_name, SFS_NAME_MAX);
			continue;
		}
		if (grow_array((void **)&names, &cap, n + 1, sizeof(*names)) < 0 ||
		    !(names[n] = strndup(de->d_name, len))) {
			rc = -ENOMEM;
			break;
		}
		if (find(s, names[n], NULL))
			free(names[n]);
		else
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	/* the names are new to the table (checked as they were read) and each other */
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			load_locked(s, names[i], NULL, err, sizeof(err));
		free(names[i]);
	}
	free(names);
	return rc;
}

/* ---- lock and journal ---- */

static int take_lock(struct sfs_store *s, const char *dir, char *err, size_t errlen)
{
	char holder[512];
	ssize_t n;

	s->lockfd = openat(s->statefd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->lockfd < 0)
		return sfs_err(err, errlen, -errno, "%s: cannot open lock file: %s", dir, strerror(errno));
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) < 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

		n = pread(s->lockfd, holder, sizeof(holder) - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		return sfs_err(err, errlen, rc, "%s: store is already served by another sectorfs (%s)",
			       dir, holder[0] ? holder : "holder unknown");
	}
	s->locked = true;
	n = sfs_store_set_holder(s, s->opts.holder);
	if (n < 0)
		return sfs_err(err, errlen, (int)n, "%s: cannot write lock file: %s", dir, strerror((int)-n));
	return 0;
}

int sfs_store_set_holder(struct sfs_store *s, const char *holder)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s\n", holder ? holder : "unknown"), rc;

	if (ftruncate(s->lockfd, 0) < 0)
		return -errno;
	rc = sfs_pwrite_all(s->lockfd, buf, (size_t)n, 0);
	if (rc == 0 && fsync(s->lockfd) < 0)
		rc = -errno;
	return rc;
}

int sfs_store_holder(const char *dir, char *buf, size_t len)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	ssize_t n;

	if (dfd < 0)
		return -errno;
	fd = openat(dfd, SFS_STATE_DIR "/" LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return -ENOENT;
	}
	n = pread(fd, buf, len ? len - 1 : 0, 0);
	close(fd);
	if (len) {
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
	}
	return 0;
}

/* ---- open / close ---- */

int sfs_store_open(const char *dir, const struct sfs_store_opts *o, struct sfs_store **out,
		   char *err, size_t errlen)
{
	struct sfs_store *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return sfs_err(err, errlen, -ENOMEM, "out of memory");
	s->opts = *o;
	s->statefd = s->lockfd = -1;
	pthread_mutex_init(&s->lock, NULL);
	if (o->fd_budget && (rc = sfs_fdcache_new(o->fd_budget, &s->fdc)) < 0) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return sfs_err(err, errlen, rc, "out of memory");
	}
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = sfs_err(err, errlen, -errno, "%s: cannot open store: %s", dir, strerror(errno));
		goto fail;
	}
	if (mkdirat(s->dirfd, SFS_STATE_DIR, 0700) < 0 && errno != EEXIST) {
		rc = sfs_err(err, errlen, -errno, "%s/%s: cannot create: %s", dir, SFS_STATE_DIR, strerror(errno));
		goto fail;
	}
	s->statefd = openat(s->dirfd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->statefd < 0) {
		rc = sfs_err(err, errlen, -errno, "%s/%s: cannot open state directory: %s", dir, SFS_STATE_DIR,
			     strerror(errno));
		goto fail;
	}
	rc = take_lock(s, dir, err, errlen);
	if (rc < 0)
		goto fail;
	rc = sfs_recover(s->dirfd, s->statefd, &s->opts.log, true);
	if (rc < 0) {
		sfs_err(err, errlen, rc, "%s: cannot put the store right after a crash: %s (the log says what "
			"was left)", dir, strerror(-rc));
		goto fail;
	}
	rc = s->opts.lazy ? 0 : scan_locked(s);
	if (rc < 0) {
		sfs_err(err, errlen, rc, "%s: cannot read store: %s", dir, strerror(-rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sfs_store_close(s);
	return rc;
}

int sfs_store_close(struct sfs_store *s)
{
	int rc = 0, r;

	if (!s)
		return 0;
	for (size_t i = 0; i < s->nents; i++) {
		r = sfs_image_close(s->ents[i].im);
		if (r < 0 && rc == 0)
			rc = r;
	}
	for (size_t i = 0; i < s->norphans; i++)
		sfs_image_close(s->orphans[i].im);
	if (s->lockfd >= 0) {
		if (s->locked && ftruncate(s->lockfd, 0) < 0 && rc == 0)
			rc = -errno;
		close(s->lockfd);
	}
	if (s->statefd >= 0)
		close(s->statefd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	pthread_mutex_destroy(&s->lock);
	sfs_fdcache_free(s->fdc);
	free(s->ents);
	free(s->orphans);
	free(s->bad);
	free(s);
	return rc;
}

/* ---- lookups ---- */

/* What the namespace says of an image that cannot be served: it is not there, unless what ran
 * out is the daemon's (descriptors, memory), when the image itself may be fine. */
static int namespace_errno(int rc)
{
	return rc >= 0 || out_of_fds(rc) || rc == -ENOMEM ? rc : -ENOENT;
}

int sfs_store_lookup(struct sfs_store *s, const char *name, struct sfs_image **out, char *err,
		     size_t errlen)
{
	struct entry *e;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	pthread_mutex_lock(&s->lock);
	e = find(s, name, NULL);
	if (e && prune_if_gone(s, e))
		e = NULL;
	if (!e)
		rc = load_locked(s, name, &e, err, errlen);
	if (rc == 0) {
		e->refs++;
		*out = e->im;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_get(struct sfs_store *s, const char *name, struct sfs_image **out)
{
	char err[512];

	return namespace_errno(sfs_store_lookup(s, name, out, err, sizeof(err)));
}

int sfs_store_stat(struct sfs_store *s, const char *name, struct stat *st)
{
	struct entry *e;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s->lock);
	e = find(s, name, NULL);
	/* the name's backing file, already looked at by name for prune_if_gone */
	if (e && prune_if_gone_stat(s, e, st))
		e = NULL;
	if (e) {
		dev_t dev;
		ino_t ino;

		sfs_image_identity(e->im, &dev, &ino);
		if (st->st_dev != dev || st->st_ino != ino)    /* the fstatat failed otherwise */
			rc = sfs_image_backing_stat(e->im, st);
	} else {
		char err[512];

		rc = namespace_errno(load_locked(s, name, &e, err, sizeof(err)));
		if (rc == 0)
			rc = sfs_image_backing_stat(e->im, st);
	}
	if (rc == -ESTALE)
		rc = -ENOENT;
	if (rc == 0)
		sfs_image_stat_fill(e->im, st);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void sfs_store_put(struct sfs_store *s, struct sfs_image *im)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nents; i++) {
		if (s->ents[i].im == im) {
			s->ents[i].refs--;
			pthread_mutex_unlock(&s->lock);
			return;
		}
	}
	for (size_t i = 0; i < s->norphans; i++) {
		if (s->orphans[i].im == im) {
			if (--s->orphans[i].refs == 0) {
				char scname[SFS_NAME_MAX + 8];

				/* what was said about its name while it was open no longer holds */
				sfs_sidecar_name(scname, sizeof(scname), s->orphans[i].name);
				forget_reported(s, scname);
				s->orphans[i] = s->orphans[--s->norphans];
				pthread_mutex_unlock(&s->lock);
				sfs_image_close(im);
				return;
			}
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

int sfs_store_list(struct sfs_store *s, int (*cb)(void *ctx, const char *name), void *ctx)
{
	char (*names)[SFS_NAME_MAX + 1];
	size_t n;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	n = s->nents;
	names = malloc((n ? n : 1) * sizeof(*names));
	if (!names) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(names[i], s->ents[i].name, sizeof(names[i]));
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cb(ctx, names[i]);
	free(names);
	return rc;
}

int sfs_store_list_range(struct sfs_store *s, size_t first, size_t max,
			 int (*cb)(void *ctx, const char *name), void *ctx)
{
	char (*names)[SFS_NAME_MAX + 1];
	size_t n = 0;
	int rc = 0;

	if (max == 0)
		return 0;
	names = malloc(max * sizeof(*names));
	if (!names)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	for (size_t i = first; i < s->nents && n < max; i++)
		memcpy(names[n++], s->ents[i].name, sizeof(names[0]));
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cb(ctx, names[i]);
	free(names);
	return rc < 0 ? rc : (int)n;
}

int sfs_store_rescan(struct sfs_store *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = scan_locked(s);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- changes ---- */

/* Is name held by a file that is not a served image's: 0 when free or served, else -EEXIST
 * with why logged (what for: "create", "rename onto"). */
static int held_by_other(struct sfs_store *s, const char *name, const char *what)
{
	char scname[SFS_NAME_MAX + 8];
	struct stat st;
	bool sc, bk;

	if (find(s, name, NULL))
		return 0;
	sfs_sidecar_name(scname, sizeof(scname), name);
	sc = fstatat(s->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0;
	bk = fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!sc && !bk)
		return 0;
	sfs_logf(&s->opts.log, SFS_LOG_WARN, "%s: cannot %s it: %s in the store is not a served image (%s); "
		 "left alone", name, what, sc ? scname : name,
		 sc ? "its sidecar is refused, see the earlier message" :
		 "a file put there by hand, or an image whose sidecar was removed");
	return -EEXIST;
}

int sfs_store_create(struct sfs_store *s, const char *name, struct sfs_image **out)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], err[512];
	struct sfs_sidecar sc = s->opts.defaults;
	struct sfs_image *im = NULL;
	struct file_id id;
	int rc;

	if (sfs_name_valid(name) < 0)
		return -EINVAL;
	sc.size = 0;
	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	pthread_mutex_lock(&s->lock);
	if (find(s, name, NULL)) {
		pthread_mutex_unlock(&s->lock);
		return -EEXIST;
	}
	rc = held_by_other(s, name, "create");
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	/* 1: the sidecar declares the image (the commit point) */
	rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, &sc);
	if (rc == 0)
		rc = sfs_step("create", 1);
	/* 2: map and backing file */
	if (rc == 0) {
		rc = sfs_image_open_in(s->fdc, s->dirfd, s->statefd, name, &sc, image_flags(s), &s->opts.log,
				       &im, err, sizeof(err));
		if (rc < 0)
			sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s", err);
	}
	if (rc == 0)
		rc = sfs_step("create", 2);
	if (rc == 0)
		rc = sidecar_id(s, name, &id);
	if (rc == 0)
		rc = insert(s, name, im, 2, &sc, &id);   /* the table's reference and the caller's */
	if (rc < 0) {
		/* undo, the sidecar last: a crash in between leaves a declared image */
		if (im) {
			sfs_image_close(im);
			unlinkat(s->dirfd, name, 0);
			unlinkat(s->statefd, mapname, 0);
			fsync(s->statefd);
			fsync(s->dirfd);
		}
		sfs_remove_durably(s->dirfd, scname);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	sfs_image_unpin(im);           /* idle, open: its creator is about to use it */
	*out = im;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int sfs_store_unlink(struct sfs_store *s, const char *name)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8], rec[SFS_NAME_MAX + 16], text[96];
	struct entry *e;
	dev_t dev;
	ino_t ino;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	e = find(s, name, NULL);
	if (e && prune_if_gone(s, e))
		e = NULL;
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	snprintf(rec, sizeof(rec), "%s" SFS_UNLINK_SUFFIX, name);
	/* 1: the intent, naming the backing file by inode (prune_if_gone found it there) */
	sfs_image_identity(e->im, &dev, &ino);
	snprintf(text, sizeof(text), "unlink %llu %llu\n", (unsigned long long)dev, (unsigned long long)ino);
	rc = sfs_intent_put(s->statefd, name, SFS_UNLINK_SUFFIX, text);
	if (rc == 0)
		rc = sfs_step("unlink", 1);
	/* 2: the sidecar goes: the commit point */
	if (rc == 0 && (unlinkat(s->dirfd, scname, 0) < 0 || fsync(s->dirfd) < 0))
		rc = -errno;
	if (rc < 0) {
		sfs_remove_durably(s->statefd, rec);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	rc = sfs_step("unlink", 2);
	/* 3: backing file and map; 4: the intent */
	if (rc == 0 && unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && unlinkat(s->statefd, mapname, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && (fsync(s->dirfd) < 0 || fsync(s->statefd) < 0))
		rc = -errno;
	if (rc == 0)
		rc = sfs_step("unlink", 3);
	if (rc == 0)
		rc = sfs_remove_durably(s->statefd, rec);
	if (rc < 0)
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: unlinked, but its files are not all removed (%s); "
			 "the next start of the store finishes it", name, strerror(-rc));
	remove_entry(s, e);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_rename(struct sfs_store *s, const char *from, const char *to, bool noreplace)
{
	char journal[2 * (SFS_NAME_MAX + 1)];
	struct entry *e, *t, moved;
	size_t jl;
	int rc;

	if (sfs_name_valid(to) < 0)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	e = find(s, from, NULL);
	if (e && prune_if_gone(s, e))
		e = NULL;
	if (!e) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	if (strcmp(from, to) == 0) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	t = find(s, to, NULL);
	if (t && prune_if_gone(s, t))
		t = NULL;
	if (t && noreplace) {
		pthread_mutex_unlock(&s->lock);
		return -EEXIST;
	}
	/* Only a served image is replaced; a file of the user's, or a refused image, never. */
	rc = t ? 0 : held_by_other(s, to, "rename onto");
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	/* 1: the intent; 2: map, backing file, sidecar; 3: the intent goes */
	jl = (size_t)snprintf(journal, sizeof(journal), "%s%c%s", from, '\0', to) + 1;
	rc = sfs_write_file_atomic(s->statefd, s->statefd, SFS_RENAME_JOURNAL, journal, jl, 0600);
	if (rc == 0)
		rc = sfs_step("rename", 1);
	if (rc < 0) {
		sfs_remove_durably(s->statefd, SFS_RENAME_JOURNAL);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	rc = sfs_move_image_files(s->dirfd, s->statefd, from, to);
	if (rc < 0) {
		/* Stopped part way: the intent stays, and the next start finishes the move.
		 * Until then the names are served as they were. */
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "rename of %s to %s failed part way (%s); the next start "
			 "of the store finishes it", from, to, strerror(-rc));
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	/* Moved: the rename is done, whatever removing the intent says (a leftover
	 * intent finds nothing to move). */
	rc = sfs_step("rename", 2);
	if (rc == 0)
		rc = sfs_remove_durably(s->statefd, SFS_RENAME_JOURNAL);
	if (t)
		remove_entry(s, t);
	moved = take_out(s, find(s, from, NULL));
	snprintf(moved.name, sizeof(moved.name), "%s", to);
	sfs_image_set_name(moved.im, to);
	if (put_in(s, &moved) < 0 && rc == 0)
		rc = -ENOMEM;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* Grow im's capacity to at least end (store lock held); with ahead, some room past it too. */
static int grow_locked(struct sfs_store *s, struct entry *e, struct sfs_image *im, uint64_t end, bool ahead)
{
	struct sfs_geom g = sfs_image_geom(im);
	uint64_t cap = sfs_image_capacity(im), want = end, step;
	int rc;

	if (end <= cap)
		return 0;
	if (ahead) {
		/* a quarter more each time, from 1 MiB to 256 MiB: few grows for a long copy */
		step = cap / 4 < (1ull << 20) ? 1ull << 20 : cap / 4 > (256ull << 20) ? 256ull << 20 : cap / 4;
		if (want < cap + step)
			want = cap + step;
		want = (want + g.block_size - 1) / g.block_size * g.block_size;
		if (want > SFS_SIZE_MAX)
			want = end;
	}
	if (!e) {
		/* An unlinked or replaced image has no files in the store any more. */
		return sfs_image_grow(im, want);
	}
	rc = sfs_grow(s->dirfd, s->statefd, im, want, true, &s->opts.log);
	if (rc == -ENOSPC && want > end)            /* no room ahead: just what the write needs */
		rc = sfs_grow(s->dirfd, s->statefd, im, end, true, &s->opts.log);
	/* the sidecar is now the store's: remember what it says */
	if (sfs_image_capacity(im) > cap) {
		e->declared = sfs_image_sidecar(im);
		sidecar_id(s, e->name, &e->scid);
	}
	return rc;
}

/* The table's entry of im, when im is what its name serves (store lock held); else NULL. */
static struct entry *entry_of(struct sfs_store *s, struct sfs_image *im)
{
	struct entry *e = find(s, sfs_image_name(im), NULL);

	return e && e->im == im ? e : NULL;
}

static int sfs_store_make_room_pinned(struct sfs_store *s, struct sfs_image *im, uint64_t end)
{
	int rc;

	if (!sfs_image_growing(im))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = grow_locked(s, entry_of(s, im), im, end, true);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_make_room(struct sfs_store *s, struct sfs_image *im, uint64_t end)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = sfs_store_make_room_pinned(s, im, end);
	sfs_image_unpin(im);
	return rc;
}

ssize_t sfs_store_write_growing(struct sfs_store *s, struct sfs_image *im, const void *buf, size_t len,
				uint64_t off, bool direct)
{
	ssize_t (*write)(struct sfs_image *, const void *, size_t, uint64_t) =
		direct ? sfs_image_write : sfs_image_write_any;
	ssize_t n = write(im, buf, len, off);

	/* past the capacity: room, then once more (a concurrent trim may have taken it back) */
	for (int i = 0; i < 3 && n == -ENOSPC && sfs_image_growing(im) && off + len >= off; i++) {
		int rc = sfs_store_make_room(s, im, off + len);

		if (rc < 0)
			return rc;
		n = write(im, buf, len, off);
	}
	return n;
}

static int sfs_store_settle_pinned(struct sfs_store *s, struct sfs_image *im, bool done)
{
	struct entry *e;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	e = entry_of(s, im);
	if (e && sfs_image_growing(im)) {
		rc = sfs_trim(s->dirfd, s->statefd, im, sfs_image_geom(im).size, &s->opts.log);
		if (rc == -EAGAIN)      /* a write went further meanwhile: the next settle */
			rc = 0;
		e->declared = sfs_image_sidecar(im);
		sidecar_id(s, e->name, &e->scid);
	}
	if (done)
		sfs_image_set_growing(im, false);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_settle(struct sfs_store *s, struct sfs_image *im, bool done)
{
	int rc = sfs_image_pin(im);

	if (rc < 0) {
		if (done)
			sfs_image_set_growing(im, false);
		return rc;
	}
	rc = sfs_store_settle_pinned(s, im, done);
	sfs_image_unpin(im);
	return rc;
}

static int sfs_store_set_format_pinned(struct sfs_store *s, struct sfs_image *im, const char *key, const char *value)
{
	char scname[SFS_NAME_MAX + 8], mapname[SFS_NAME_MAX + 8];
	struct sfs_sidecar sc;
	struct entry *e;
	int rc;

	pthread_mutex_lock(&s->lock);
	e = entry_of(s, im);
	rc = !e ? -ENOENT : !sfs_image_growing(im) || sfs_image_capacity(im) ||
			    sfs_map_count(sfs_image_map(im)) ? -EBUSY : 0;
	if (rc == 0) {
		sc = e->declared;
		sc.size = 0;
		rc = sfs_sidecar_set(&sc, key, value);
		if (rc == -ENOENT)
			rc = -EPERM;
	}
	if (rc < 0) {
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	sfs_sidecar_name(scname, sizeof(scname), e->name);
	sfs_map_name(mapname, sizeof(mapname), e->name);
	/* 1: the old map goes (a backing file without one is imported as the sidecar says);
	 * 2: the sidecar says the new format (the commit); 3: the new map */
	rc = unlinkat(s->statefd, mapname, 0) < 0 && errno != ENOENT ? -errno : sfs_fsync_dir(s->statefd);
	if (rc == 0)
		rc = sfs_sidecar_save(s->dirfd, scname, s->statefd, &sc);
	if (rc == 0)
		rc = sfs_image_reformat(im, s->statefd, &sc);
	if (rc == 0) {
		e->declared = sc;
		sidecar_id(s, e->name, &e->scid);
	} else {
		sfs_logf(&s->opts.log, SFS_LOG_ERR, "%s: cannot set %s to %s: %s", e->name, key, value,
			 strerror(-rc));
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_set_format(struct sfs_store *s, struct sfs_image *im, const char *key, const char *value)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = sfs_store_set_format_pinned(s, im, key, value);
	sfs_image_unpin(im);
	return rc;
}

static int sfs_store_resize_pinned(struct sfs_store *s, struct sfs_image *im, uint64_t new_size)
{
	struct entry *e;
	int rc;

	if (new_size < sfs_image_geom(im).size && !sfs_image_growing(im)) {
		/* a disk that holds no data past new_size (nothing, or zeros) may shrink: nothing
		 * is lost (qemu-img create and convert truncate a file to 0 before they size it) */
		pthread_mutex_lock(&s->lock);
		e = entry_of(s, im);
		rc = e ? sfs_trim(s->dirfd, s->statefd, im, new_size, &s->opts.log) : -EINVAL;
		if (e && sfs_image_capacity(im) == new_size) {
			e->declared = sfs_image_sidecar(im);
			sidecar_id(s, e->name, &e->scid);
		}
		pthread_mutex_unlock(&s->lock);
		return rc == -EBUSY ? -EINVAL : rc;
	}
	pthread_mutex_lock(&s->lock);
	/* decided under the lock: the creator's close (settle, which clears growing under it)
	 * comes asynchronously and may run while another open of the image truncates it */
	if (sfs_image_growing(im)) {
		/* the creator's truncate: room if needed, then the disk shows new_size */
		struct sfs_geom g = sfs_image_geom(im);

		if (sfs_geom_grow_check(&g, new_size, NULL, 0) < 0)
			rc = -EINVAL;
		else
			rc = grow_locked(s, entry_of(s, im), im, new_size, false);
		if (rc == 0)
			rc = sfs_image_show_size(im, new_size);
		pthread_mutex_unlock(&s->lock);
		return rc;
	}
	e = find(s, sfs_image_name(im), NULL);
	if (e && e->im == im) {
		rc = sfs_grow(s->dirfd, s->statefd, im, new_size, true, &s->opts.log);
		/* the sidecar is now the store's: remember what it says */
		if (sfs_image_geom(im).size == new_size) {
			e->declared = sfs_image_sidecar(im);
			sidecar_id(s, e->name, &e->scid);
		}
	} else {
		/* An unlinked or replaced image has no files in the store any more. */
		rc = sfs_image_grow(im, new_size);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int sfs_store_resize(struct sfs_store *s, struct sfs_image *im, uint64_t new_size)
{
	int rc = sfs_image_pin(im);

	if (rc < 0)
		return rc;
	rc = sfs_store_resize_pinned(s, im, new_size);
	sfs_image_unpin(im);
	return rc;
}

void sfs_store_tally(struct sfs_store *s, struct sfs_store_tally *t)
{
	struct stat st;

	pthread_mutex_lock(&s->lock);
	t->served = s->nents;
	t->refused = 0;
	t->zeroing = 0;
	t->open_max = 0;
	if (s->fdc) {
		struct sfs_fdcache_usage u;

		sfs_fdcache_usage(s->fdc, &u);
		t->open_max = u.budget / (s->opts.buffered ? 2 : 3);
		t->open_now = u.open;
		t->fds_now = u.used;
		t->evictions = u.evictions;
	} else {
		t->open_now = s->nents;
		t->fds_now = 0;
		t->evictions = 0;
	}
	for (size_t i = 0; i < s->nbad; i++)    /* reported, and not taken away since */
		if (fstatat(s->dirfd, s->bad[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			t->refused++;
	for (size_t i = 0; i < s->nents; i++) {
		uint64_t done, total;
		int err;

		if (sfs_image_zeroing(s->ents[i].im, &done, &total, &err) == SFS_ZEROING_RUNNING)
			t->zeroing++;
	}
	pthread_mutex_unlock(&s->lock);
}

int sfs_store_fd(const struct sfs_store *s)
{
	return s->dirfd;
}
