/* SPDX-License-Identifier: MIT */
/*
 * recover.c - start-up recovery of a store (recover.h): the walk over what
 * a crash can leave, each thing planned (read-only) and then, unless only
 * the plan is asked for, applied at once.
 *
 * The state directory is the daemon's own: anything in it named as a
 * temporary file (tmpfile.h), or as the temporary files of older versions
 * (NAME.map.tmp.PID, NAME.map.new), is a leftover and goes.  In the store
 * directory only temporary sidecars are removed, and only regular files
 * that parse as a sidecar: .tmp.PID.N (written beside the sidecar when the
 * state directory is on another filesystem) and NAME.json.tmp.PID, which
 * older versions wrote, when no image of that name is declared (an image
 * may have such a name; its sidecar would be NAME.json.tmp.PID.json).
 *
 * Then the intent records (intent.h), in the order their operations can
 * have left them (the store lock lets one multi-file operation run at a
 * time, so a crash leaves one pending; more are left only beside records
 * a start could not apply, whose images are kept out of service and out
 * of every rename meanwhile):
 *   FROM.rename  (and "rename", the one record of older versions, first)
 *                each of map, backing file and sidecar that is still under
 *                FROM and is the image's (its identity) moves to TO, never
 *                over a file that is not the image's or the replaced one's;
 *                when TO is taken by such a file the moves already done are
 *                rolled back, and when even that cannot be the record stays;
 *   NAME.unlink  sidecar gone (the commit point): backing file and map
 *                removed when they are the image's, else left alone;
 *                sidecar still there: the unlink never happened;
 *   NAME.create  the sidecar there (its last step): finished; else the
 *                backing file and map removed when they are the ones made;
 *   NAME.grow    finished or undone as the map header says (recgrow.c);
 *   NAME.inflate the sidecar made to say eagerzeroedthick when the map
 *                (the commit point) does.
 * A record that is not a regular file is never opened (a FIFO would hang
 * the read); it blocks the images it names until check --repair removes it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "map/map.h"
#include "map/ident.h"
#include "contract/names.h"
#include "recover_internal.h"
#include "store.h"
#include "util/tmpfile.h"

#define NAMEBUF SFS_FILE_NAME_LEN

struct walk {
	struct rec_env e;
	bool apply;
	void (*fn)(void *ctx, const struct sfs_recover_item *p);
	void *ctx;
	int rc;
};

static void note_rc(struct walk *w, int rc)
{
	if (rc < 0 && w->rc == 0)
		w->rc = rc;
}

void rec_say(struct sfs_recover_item *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
}

void rec_done(struct sfs_recover_item *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->done, sizeof(p->done), fmt, ap);
	va_end(ap);
}

void rec_alone(struct sfs_recover_item *p, const char *fmt, ...)
{
	size_t n = strlen(p->alone);
	va_list ap;

	if (n && n + 2 < sizeof(p->alone)) {
		memcpy(p->alone + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(p->alone + n, sizeof(p->alone) - n, fmt, ap);
	va_end(ap);
}

int sfs_move_state_files(int statefd, const char *from, const char *to)
{
	static const char *const state[] = { SFS_DISK_SUFFIX, SFS_UNDO_SUFFIX };
	char a[NAMEBUF], b[NAMEBUF];

	for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++) {
		snprintf(a, sizeof(a), "%s%s", from, state[i]);
		snprintf(b, sizeof(b), "%s%s", to, state[i]);
		if (renameat(statefd, a, statefd, b) < 0 && errno != ENOENT)
			return -errno;
	}
	return 0;
}

int sfs_remove_state_files(int statefd, const char *name)
{
	static const char *const state[] = { SFS_DISK_SUFFIX, SFS_UNDO_SUFFIX };
	char f[NAMEBUF];

	for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++) {
		snprintf(f, sizeof(f), "%s%s", name, state[i]);
		if (unlinkat(statefd, f, 0) < 0 && errno != ENOENT)
			return -errno;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* ---- shared with recgrow.c ---- */

int rec_backing(const struct rec_env *e, const char *name, struct sfs_fileid *id, struct stat *st)
{
	return sfs_fileid_at(e->dirfd, name, id, st);
}

int rec_map(const struct rec_env *e, const char *name, struct sfs_map_info *info,
	    struct sfs_map_ident *ident, char *err, size_t len)
{
	char fname[NAMEBUF];

	sfs_map_name(fname, sizeof(fname), name);
	return sfs_map_peek(e->statefd, fname, info, ident, NULL, err, len);
}

bool rec_backing_ours(const struct sfs_intent *in, const struct sfs_map_ident *mid,
		      const struct sfs_fileid *fid)
{
	if (in->img.has_backing)
		return sfs_fileid_same(&in->img.backing, fid, false);
	/* a record of an older version: vouched for by the map, and its device and inode if it has */
	return (!in->has_devino || (in->dev == fid->dev && in->ino == fid->ino)) && mid && mid->present &&
	       sfs_fileid_same(&mid->backing, fid, false);
}

bool rec_map_ours(const struct sfs_intent *in, const struct sfs_map_ident *mid)
{
	return !mid->present || !in->img.has_id || memcmp(mid->id, in->img.id, SFS_IMAGE_ID_LEN) == 0;
}

int rec_cut_backing(const struct rec_env *e, const char *name, const struct sfs_fileid *want,
		    uint64_t len)
{
	int fd = openat(e->dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = 0;
	struct sfs_fileid id;
	struct stat st;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((rc = sfs_fileid_fd(fd, &id, &st)) == 0) {
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || (want && !sfs_fileid_same(want, &id, false)))
			rc = -ESTALE;
		else if ((uint64_t)st.st_size > len && (ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0))
			rc = -errno;
	}
	close(fd);
	return rc;
}

int rec_sidecar_size(const struct rec_env *e, const char *name, uint64_t size)
{
	char scname[NAMEBUF], err[512];
	struct sfs_sidecar sc;
	int rc;

	sfs_sidecar_name(scname, sizeof(scname), name);
	rc = sfs_sidecar_load(e->dirfd, scname, &sc, err, sizeof(err));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0 || sc.size == size)
		return rc;
	sc.size = size;
	return sfs_sidecar_save(e->dirfd, scname, e->statefd, &sc);
}

bool rec_exists(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* ---- temporary files ---- */

/* Does s hold "WHAT" followed by digits only, after at least one byte ("X.map.tmp.123")? */
static bool legacy_tmp(const char *s, const char *what)
{
	const char *p = strstr(s, what);

	while (p) {
		const char *q = p + strlen(what);

		if (q[0] && strspn(q, "0123456789") == strlen(q) && p > s)
			return true;
		p = strstr(p + 1, what);
	}
	return false;
}

/* Is STORE/name a regular file holding a sidecar's text? */
static bool is_sidecar(const struct rec_env *e, const char *name)
{
	struct sfs_sidecar sc;
	struct stat st;
	char err[256];

	if (fstatat(e->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		return false;
	return sfs_sidecar_load(e->dirfd, name, &sc, err, sizeof(err)) == 0;
}

/* A NAME.json.tmp.PID of an older version: a sidecar text, no image declared by that name. */
static bool legacy_sidecar_tmp(const struct rec_env *e, const char *name)
{
	char scname[NAME_MAX + 8];
	struct stat st;

	if (name[0] == '.' || !legacy_tmp(name, SFS_SIDECAR_SUFFIX ".tmp."))
		return false;
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(e->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return false;
	return is_sidecar(e, name);
}

/* The directory dirfd, to read; NULL with the errno noted when it cannot be opened. */
static DIR *open_dir(struct walk *w, int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		note_rc(w, -errno);
		if (fd >= 0)
			close(fd);
	}
	return d;
}

/* Plan, and apply when asked, the removal of leftover in_state ? .sectorfs/name : name. */
static void leftover(struct walk *w, bool in_state, const char *name, const char *what)
{
	struct sfs_recover_item p = { .verdict = SFS_RECOVER_REMOVE };
	int fd = in_state ? w->e.statefd : w->e.dirfd;

	snprintf(p.file, sizeof(p.file), "%s%s", in_state ? SFS_STATE_DIR "/" : "", name);
	rec_say(&p, "%s", what);
	rec_done(&p, "removed %s: %s", p.file, what);
	if (w->fn)
		w->fn(w->ctx, &p);
	if (!w->apply)
		return;
	/* a directory under such a name goes too when empty, as a record's does (apply) */
	if (unlinkat(fd, name, 0) < 0 && errno != ENOENT &&
	    (errno != EISDIR || unlinkat(fd, name, AT_REMOVEDIR) < 0)) {
		sfs_logf(w->e.log, SFS_LOG_ERR, "%s: %s; cannot remove it: %s", p.file, what, strerror(errno));
		note_rc(w, -errno);
		return;
	}
	sfs_logf(w->e.log, SFS_LOG_WARN, "removed %s: %s", p.file, what);
}

static void sweep(struct walk *w)
{
	DIR *d = open_dir(w, w->e.statefd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (sfs_tmp_is_ours(de->d_name))
			leftover(w, true, de->d_name, "a temporary file left by an interrupted write");
		else if (legacy_tmp(de->d_name, SFS_MAP_SUFFIX ".tmp.") || ends_with(de->d_name, SFS_MAP_NEW_SUFFIX))
			leftover(w, true, de->d_name, "a temporary map left by an interrupted write");
	}
	closedir(d);
	if (!(d = open_dir(w, w->e.dirfd)))
		return;
	while ((de = readdir(d)))
		if (legacy_sidecar_tmp(&w->e, de->d_name) || (sfs_tmp_is_ours(de->d_name) && is_sidecar(&w->e, de->d_name)))
			leftover(w, false, de->d_name, "a temporary sidecar left by an interrupted rewrite");
	closedir(d);
}

/* ---- records: reading ---- */

static const char *kind_text(enum sfs_intent_kind k)
{
	static const char *const t[] = { "rename", "unlink", "create", "grow", "trim", "inflate" };

	return t[k];
}

/* Read record fname of kind into it; false (the item planned) when it cannot be: a damaged
 * record is dropped, one that is not a regular file or cannot be read blocks its image. */
static bool read_record(struct walk *w, enum sfs_intent_kind kind, const char *fname, struct rec_item *it)
{
	struct sfs_recover_item *p = &it->p;
	int rc = sfs_intent_read(w->e.statefd, kind, fname, &it->in);
	const char *dot = strrchr(fname, '.');
	size_t k = !dot ? 0 : (size_t)(dot - fname);   /* NAME of NAME.grow; none in "rename" */

	p->is_record = true;
	p->kind = kind;
	snprintf(p->file, sizeof(p->file), SFS_STATE_DIR "/%s", fname);
	if (rc == 0) {
		p->kind = it->in.kind;
		memcpy(p->name, it->in.name, sizeof(p->name));
		memcpy(p->to, it->in.to, sizeof(p->to));
		return true;
	}
	if (k && k <= SFS_NAME_MAX)
		snprintf(p->name, sizeof(p->name), "%.*s", (int)k, fname);
	if (rc == -EUCLEAN) {
		p->verdict = SFS_RECOVER_DROP;
		rec_say(p, "a damaged %s record (written atomically, so never half there): removed",
			kind_text(kind));
		rec_done(p, "removed %s: a damaged %s record", p->file, kind_text(kind));
	} else if (rc == -EPERM) {
		p->verdict = w->e.clear ? SFS_RECOVER_REMOVE : SFS_RECOVER_BLOCKED;
		rec_say(p, "%s record that is not a regular file, so none of sectorfs's (never opened)",
			kind_text(kind));
		rec_done(p, "removed %s: not a regular file, so no record of sectorfs's", p->file);
		p->clearable = true;
		snprintf(p->fix, sizeof(p->fix), "'sectorfs-img check --repair' removes it");
	} else if (rc != -ENOENT) {
		p->verdict = SFS_RECOVER_BLOCKED;
		rec_say(p, "%s record that cannot be read: %s", kind_text(kind), strerror(-rc));
	}
	return false;
}

/* ---- the walk ---- */

/* Apply item it (planned): its changes, then the record goes, unless it is blocked; logged. */
static void apply(struct walk *w, struct rec_item *it)
{
	const struct rec_env *e = &w->e;
	struct sfs_recover_item *p = &it->p;
	int rc = 0;

	if (p->verdict == SFS_RECOVER_BLOCKED) {
		sfs_logf(e->log, SFS_LOG_ERR, "%s: %s; the record is kept%s%s%s%s%s (%s)", p->file, p->what,
			 p->name[0] ? ", and " : "", p->name, p->to[0] ? " and " : "", p->to,
			 p->name[0] ? " not served until it is cleared" : "", p->fix[0] ? p->fix :
			 "see 'sectorfs-img check'");
		return;
	}
	if (p->verdict == SFS_RECOVER_REMOVE) {
		rc = unlinkat(e->statefd, p->file + sizeof(SFS_STATE_DIR), 0) < 0 && errno != ENOENT ? -errno : 0;
		if (rc == -EISDIR || rc == -EPERM)
			rc = unlinkat(e->statefd, p->file + sizeof(SFS_STATE_DIR), AT_REMOVEDIR) < 0 ? -errno : 0;
	} else if (p->verdict != SFS_RECOVER_DROP) {
		switch (p->kind) {
		case SFS_INTENT_RENAME:
			rc = rec_apply_rename(e, it);
			break;
		case SFS_INTENT_UNLINK:
		case SFS_INTENT_CREATE:
			rc = p->goes ? rec_apply_removal(e, it) : 0;
			break;
		case SFS_INTENT_GROW:
		case SFS_INTENT_TRIM:
			rc = rec_apply_grow(e, it);
			break;
		case SFS_INTENT_INFLATE:
			rc = rec_apply_inflate(e, it);
			break;
		}
	}
	if (rc == 0 && p->verdict != SFS_RECOVER_REMOVE)
		rc = sfs_remove_durably(e->statefd, p->file + sizeof(SFS_STATE_DIR));
	if (rc < 0) {
		sfs_logf(e->log, SFS_LOG_ERR, "%s: %s; cannot be done: %s (the record is kept for the next "
			 "start%s%s%s%s%s)", p->file, p->what, strerror(-rc), p->name[0] ? "; " : "", p->name,
			 p->to[0] ? " and " : "", p->to, p->name[0] ? " not served until then" : "");
		note_rc(w, rc);
		return;
	}
	if (p->alone[0])
		sfs_logf(e->log, SFS_LOG_WARN, "%s", p->alone);
	sfs_logf(e->log, SFS_LOG_WARN, "%s", p->done[0] ? p->done : p->what);
}

/* Plan record fname of kind, hand the plan on and apply it when asked. */
static void record(struct walk *w, enum sfs_intent_kind kind, const char *fname)
{
	struct rec_item it;

	memset(&it, 0, sizeof(it));
	if (read_record(w, kind, fname, &it)) {
		switch (it.p.kind) {
		case SFS_INTENT_RENAME:
			rec_plan_rename(&w->e, &it);
			break;
		case SFS_INTENT_UNLINK:
			rec_plan_unlink(&w->e, &it);
			break;
		case SFS_INTENT_CREATE:
			rec_plan_create(&w->e, &it);
			break;
		case SFS_INTENT_GROW:
		case SFS_INTENT_TRIM:
			rec_plan_grow(&w->e, &it);
			break;
		case SFS_INTENT_INFLATE:
			rec_plan_inflate(&w->e, &it);
			break;
		}
	} else if (!it.p.what[0]) {
		return;                             /* gone meanwhile */
	}
	if (w->fn)
		w->fn(w->ctx, &it.p);
	if (w->apply)
		apply(w, &it);
}

/* Every record in the state directory ending in suffix, of kind. */
static void each_record(struct walk *w, const char *suffix, enum sfs_intent_kind kind)
{
	DIR *d = open_dir(w, w->e.statefd);
	char (*names)[NAME_MAX + 1] = NULL;
	struct dirent *de;
	size_t n = 0, cap = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !ends_with(de->d_name, suffix))
			continue;
		if (n == cap) {
			void *p = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof(*names));

			if (!p) {
				note_rc(w, -ENOMEM);
				break;
			}
			names = p;
		}
		snprintf(names[n++], sizeof(*names), "%s", de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		record(w, kind, names[i]);
	free(names);
}

static int walk(struct walk *w)
{
	sweep(w);
	/* the rename record of an older version first (it is older than any FROM.rename) */
	if (rec_exists(w->e.statefd, SFS_RENAME_JOURNAL))
		record(w, SFS_INTENT_RENAME, SFS_RENAME_JOURNAL);
	each_record(w, SFS_RENAME_SUFFIX, SFS_INTENT_RENAME);
	each_record(w, SFS_UNLINK_SUFFIX, SFS_INTENT_UNLINK);
	each_record(w, SFS_CREATE_SUFFIX, SFS_INTENT_CREATE);
	each_record(w, SFS_GROW_SUFFIX, SFS_INTENT_GROW);
	each_record(w, SFS_INFLATE_SUFFIX, SFS_INTENT_INFLATE);
	return w->rc;
}

int sfs_recover_plan(int dirfd, int statefd, void (*fn)(void *ctx, const struct sfs_recover_item *p), void *ctx)
{
	struct walk w = { { dirfd, statefd, NULL, false }, false, fn, ctx, 0 };

	return walk(&w);
}

/* Only the state directory that cannot be read stops the store: the rest is one image's. */
static int recover_with(int dirfd, int statefd, const struct sfs_log *log, bool clear)
{
	struct walk w = { { dirfd, statefd, log, clear }, true, NULL, NULL, 0 };
	DIR *d = open_dir(&w, statefd);

	if (!d)
		return w.rc;
	closedir(d);
	walk(&w);
	return clear ? w.rc : 0;
}

int sfs_recover(int dirfd, int statefd, const struct sfs_log *log)
{
	return recover_with(dirfd, statefd, log, false);
}

int sfs_recover_clear(int dirfd, int statefd, const struct sfs_log *log)
{
	return recover_with(dirfd, statefd, log, true);
}

/* Does the rename record fname in statefd concern image name: moving it (its file name says
 * so, whatever it holds), or, by what it says, from or onto it?  1 with it described in buf,
 * else 0. */
static int rename_concerns(int statefd, const char *fname, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);
	bool own = strncmp(fname, name, n) == 0 && strcmp(fname + n, SFS_RENAME_SUFFIX) == 0;
	struct sfs_intent in;
	int rc = sfs_intent_read(statefd, SFS_INTENT_RENAME, fname, &in);

	if (rc == -ENOENT)
		return 0;
	if (rc == 0 && (strcmp(in.name, name) == 0 || strcmp(in.to, name) == 0)) {
		snprintf(buf, len, "an interrupted rename of %s to %s (%s/%s)", in.name, in.to, SFS_STATE_DIR,
			 fname);
		return 1;
	}
	if (own)
		snprintf(buf, len, "an interrupted rename of %s (%s/%s)", name, SFS_STATE_DIR, fname);
	return own;
}

/* The rename records in statefd that concern image name: its own (NAME.rename), the one of
 * older versions, and, when onto, those of renames onto name, named for their FROM (which
 * takes reading the directory; one that cannot be read counts).  1 with it described in buf,
 * else 0. */
static int pending_rename(int statefd, const char *name, bool onto, char *buf, size_t len)
{
	char rec[NAMEBUF];
	struct dirent *de;
	int fd, found = 0;
	DIR *d;

	snprintf(rec, sizeof(rec), "%s" SFS_RENAME_SUFFIX, name);
	if (rename_concerns(statefd, rec, name, buf, len) ||
	    rename_concerns(statefd, SFS_RENAME_JOURNAL, name, buf, len))
		return 1;
	if (!onto)
		return 0;
	fd = openat(statefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		snprintf(buf, len, "perhaps a rename onto it (%s cannot be read: %s)", SFS_STATE_DIR,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	while (!found && (de = readdir(d)))
		if (de->d_name[0] != '.' && ends_with(de->d_name, SFS_RENAME_SUFFIX))
			found = rename_concerns(statefd, de->d_name, name, buf, len);
	closedir(d);
	return found;
}

int sfs_recover_pending_rename(int statefd, const char *name, bool renames_left, char *buf, size_t len)
{
	return pending_rename(statefd, name, renames_left, buf, len);
}

bool sfs_recover_renames_left(int statefd)
{
	int fd = openat(statefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool found = false;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return true;
	}
	while (!found && (de = readdir(d)))
		found = strcmp(de->d_name, SFS_RENAME_JOURNAL) == 0 ||
			(de->d_name[0] != '.' && ends_with(de->d_name, SFS_RENAME_SUFFIX));
	closedir(d);
	return found;
}

int sfs_recover_pending_known(int statefd, const char *name, bool renames_left, char *buf, size_t len)
{
	static const struct { const char *suffix, *what; } recs[] = {
		{ SFS_GROW_SUFFIX, "an interrupted grow" },
		{ SFS_UNLINK_SUFFIX, "an interrupted unlink" },
		{ SFS_CREATE_SUFFIX, "an interrupted create" },
		{ SFS_INFLATE_SUFFIX, "an interrupted inflate" },
	};
	char rec[NAMEBUF];

	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		snprintf(rec, sizeof(rec), "%s%s", name, recs[i].suffix);
		if (rec_exists(statefd, rec)) {
			snprintf(buf, len, "%s (%s/%s)", recs[i].what, SFS_STATE_DIR, rec);
			return 1;
		}
	}
	return pending_rename(statefd, name, renames_left, buf, len);
}

int sfs_recover_pending(int statefd, const char *name, char *buf, size_t len)
{
	return sfs_recover_pending_known(statefd, name, true, buf, len);
}
