/* SPDX-License-Identifier: MIT */
/*
 * recover.c - start-up recovery of a store (see recover.h).
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
 * Then the intent records, in the order their operations can have left
 * them (the store lock lets one multi-file operation run at a time, so at
 * most one is pending unless older versions left more):
 *   rename       finished: the three files moved, the record removed;
 *   NAME.unlink  sidecar gone (the commit point): backing file (the same
 *                inode as recorded, else left alone) and map removed;
 *                sidecar still there: the unlink never happened;
 *   NAME.create  the sidecar there (its last step): finished; else the
 *                backing file (the recorded inode; without one, only if it
 *                holds no data) and map removed;
 *   NAME.grow    finished or undone by grow.c, as the map header says;
 *   NAME.inflate the sidecar made to say eagerzeroedthick when the map
 *                (the commit point) does.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocmap.h"
#include "grow.h"
#include "names.h"
#include "recover.h"
#include "sidecar.h"
#include "store.h"
#include "tmpfile.h"

#define NAMEBUF 300

int sfs_intent_put(int statefd, const char *name, const char *suffix, const char *text)
{
	char rec[NAMEBUF];

	if ((size_t)snprintf(rec, sizeof(rec), "%s%s", name, suffix) >= sizeof(rec))
		return -ENAMETOOLONG;
	return sfs_write_file_atomic(statefd, statefd, rec, text, strlen(text), 0600);
}

int sfs_intent_drop(int statefd, const char *name, const char *suffix)
{
	char rec[NAMEBUF];

	if ((size_t)snprintf(rec, sizeof(rec), "%s%s", name, suffix) >= sizeof(rec))
		return -ENAMETOOLONG;
	return sfs_remove_durably(statefd, rec);
}

int sfs_move_image_files(int dirfd, int statefd, const char *from, const char *to)
{
	static const char *const state[] = { SFS_DISK_SUFFIX, SFS_UNDO_SUFFIX };
	char a[NAMEBUF], b[NAMEBUF];

	sfs_map_name(a, sizeof(a), from);
	sfs_map_name(b, sizeof(b), to);
	if (renameat(statefd, a, statefd, b) < 0 && errno != ENOENT)
		return -errno;
	for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++) {   /* the failure state's, if any */
		snprintf(a, sizeof(a), "%s%s", from, state[i]);
		snprintf(b, sizeof(b), "%s%s", to, state[i]);
		if (renameat(statefd, a, statefd, b) < 0 && errno != ENOENT)
			return -errno;
	}
	if (renameat(dirfd, from, dirfd, to) < 0 && errno != ENOENT)
		return -errno;
	sfs_sidecar_name(a, sizeof(a), from);
	sfs_sidecar_name(b, sizeof(b), to);
	if (renameat(dirfd, a, dirfd, b) < 0 && errno != ENOENT)
		return -errno;
	if (fsync(statefd) < 0 || fsync(dirfd) < 0)
		return -errno;
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

/* Does s end in ".tmp.DIGITS" after prefix_len bytes ending in suffix ("X.map" / "X.json")? */
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

struct ctx {
	int dirfd, statefd;
	const struct sfs_log *log;
	bool apply;
	int rc;
};

static void note_rc(struct ctx *c, int rc)
{
	if (rc < 0 && c->rc == 0)
		c->rc = rc;
}

static void remove_leftover(struct ctx *c, int fd, const char *where, const char *name, const char *what)
{
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s%s: %s (removed at the next start)", where, name, what);
		return;
	}
	if (unlinkat(fd, name, 0) < 0 && errno != ENOENT) {
		sfs_logf(c->log, SFS_LOG_ERR, "%s%s: %s; cannot remove it: %s", where, name, what, strerror(errno));
		note_rc(c, -errno);
		return;
	}
	sfs_logf(c->log, SFS_LOG_WARN, "removed %s%s: %s", where, name, what);
}

/* Is STORE/name a regular file holding a sidecar's text? */
static bool is_sidecar(struct ctx *c, const char *name)
{
	struct sfs_sidecar sc;
	struct stat st;
	char err[256];

	if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		return false;
	return sfs_sidecar_load(c->dirfd, name, &sc, err, sizeof(err)) == 0;
}

/* A NAME.json.tmp.PID of an older version: a sidecar text, no image declared by that name. */
static bool legacy_sidecar_tmp(struct ctx *c, const char *name)
{
	char scname[NAMEBUF + 8];
	struct stat st;

	if (name[0] == '.' || !legacy_tmp(name, SFS_SIDECAR_SUFFIX ".tmp."))
		return false;
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(c->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return false;
	return is_sidecar(c, name);
}

/* The directory dirfd, to read; NULL with the errno noted in c when it cannot be opened. */
static DIR *open_dir(struct ctx *c, int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		note_rc(c, -errno);
		if (fd >= 0)
			close(fd);
	}
	return d;
}

static void sweep(struct ctx *c)
{
	DIR *d = open_dir(c, c->statefd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (sfs_tmp_is_ours(de->d_name))
			remove_leftover(c, c->statefd, SFS_STATE_DIR "/", de->d_name,
					"a temporary file left by an interrupted write");
		else if (legacy_tmp(de->d_name, SFS_MAP_SUFFIX ".tmp.") || ends_with(de->d_name, SFS_MAP_NEW_SUFFIX))
			remove_leftover(c, c->statefd, SFS_STATE_DIR "/", de->d_name,
					"a temporary map left by an interrupted write");
	}
	closedir(d);
	if (!(d = open_dir(c, c->dirfd)))
		return;
	while ((de = readdir(d)))
		if (legacy_sidecar_tmp(c, de->d_name) || (sfs_tmp_is_ours(de->d_name) && is_sidecar(c, de->d_name)))
			remove_leftover(c, c->dirfd, "", de->d_name,
					"a temporary sidecar left by an interrupted rewrite");
	closedir(d);
}

/* Intent records are written atomically: one that does not parse is damaged, and goes. */
static void drop_record(struct ctx *c, const char *rec, const char *what)
{
	remove_leftover(c, c->statefd, SFS_STATE_DIR "/", rec, what);
}

static void replay_rename(struct ctx *c)
{
	char buf[2 * (SFS_NAME_MAX + 1) + 1];
	ssize_t n = sfs_read_small_file(c->statefd, SFS_RENAME_JOURNAL, buf, sizeof(buf));
	const char *from = buf, *to;

	if (n == -ENOENT)
		return;
	if (n < 0) {
		sfs_logf(c->log, SFS_LOG_ERR, SFS_STATE_DIR "/" SFS_RENAME_JOURNAL ": cannot read: %s",
			 strerror((int)-n));
		note_rc(c, (int)n);
		return;
	}
	to = memchr(buf, '\0', (size_t)n) ? buf + strlen(buf) + 1 : NULL;
	if (!to || to >= buf + n || !memchr(to, '\0', (size_t)(buf + n - to)) || sfs_name_valid(from) < 0 ||
	    sfs_name_valid(to) < 0) {
		/* written atomically, so never half there: damaged */
		drop_record(c, SFS_RENAME_JOURNAL, "a damaged rename record");
		return;
	}
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted rename to %s (finished at the next start)", from, to);
		return;
	}
	n = sfs_move_image_files(c->dirfd, c->statefd, from, to);
	if (n == 0)
		n = sfs_remove_durably(c->statefd, SFS_RENAME_JOURNAL);
	if (n < 0) {
		sfs_logf(c->log, SFS_LOG_ERR, "%s: cannot finish an interrupted rename to %s: %s", from, to,
			 strerror((int)-n));
		note_rc(c, (int)n);
		return;
	}
	sfs_logf(c->log, SFS_LOG_WARN, "%s: finished an interrupted rename to %s", from, to);
}

/* The image name of record rec (NAME + suffix); false when it is no valid name. */
static bool record_name(const char *rec, const char *suffix, char *name, size_t len)
{
	size_t n = strlen(rec) - strlen(suffix);

	if (n >= len)
		return false;
	memcpy(name, rec, n);
	name[n] = '\0';
	return sfs_name_valid(name) == 0;
}

/* Does the file hold no byte of data (all holes or unwritten extents)? */
static bool holds_no_data(int fd, const struct stat *st)
{
	return st->st_size == 0 || (lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO);
}

/* The end of an unlink finished, or of a create undone: the backing file (when
 * remove_backing), the map and the record go; what was done is logged (what: "finished an
 * interrupted unlink"). */
static void remove_image_files(struct ctx *c, const char *name, const char *rec, bool remove_backing,
			       const char *what)
{
	char mapname[NAMEBUF + 8];
	int rc = 0;

	sfs_map_name(mapname, sizeof(mapname), name);
	if (remove_backing && unlinkat(c->dirfd, name, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && unlinkat(c->statefd, mapname, 0) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0)
		rc = sfs_remove_state_files(c->statefd, name);
	if (rc == 0 && fsync(c->dirfd) < 0)
		rc = -errno;
	if (rc == 0)
		rc = sfs_remove_durably(c->statefd, rec);
	if (rc < 0) {
		sfs_logf(c->log, SFS_LOG_ERR, "%s: cannot %s: %s", name, what, strerror(-rc));
		note_rc(c, rc);
		return;
	}
	sfs_logf(c->log, SFS_LOG_WARN, "%s: %s", name, what);
}

static void replay_unlink(struct ctx *c, const char *rec)
{
	char name[NAMEBUF], text[128], scname[NAMEBUF + 8], tail;
	unsigned long long dev, ino;
	struct stat st;
	bool ours;
	ssize_t len;
	int rc;

	if (!record_name(rec, SFS_UNLINK_SUFFIX, name, sizeof(name)))
		return;
	len = sfs_read_small_file(c->statefd, rec, text, sizeof(text));
	if (len < 0 ||
	    sscanf(text, "unlink %llu %llu%c", &dev, &ino, &tail) != 3 || tail != '\n') {
		drop_record(c, rec, "a damaged unlink record");
		return;
	}
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (fstatat(c->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!c->apply) {
			sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted unlink that had not begun (the image stays)", name);
			return;
		}
		rc = sfs_remove_durably(c->statefd, rec);
		if (rc == 0)
			sfs_logf(c->log, SFS_LOG_WARN, "%s: an interrupted unlink had not removed the sidecar; "
				 "the image stays", name);
		note_rc(c, rc);
		return;
	}
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted unlink (finished at the next start)", name);
		return;
	}
	ours = true;
	if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ((unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino)) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: not the backing file an interrupted unlink was "
			 "removing (another file took the name); left alone", name);
		ours = false;
	}
	remove_image_files(c, name, rec, ours, "finished an interrupted unlink");
}

static void replay_create(struct ctx *c, const char *rec)
{
	char name[NAMEBUF], text[128], scname[NAMEBUF + 8], tail;
	unsigned long long dev = 0, ino = 0;
	struct stat st;
	bool ours = true;
	int n = 0, fd, rc;
	ssize_t len;

	if (!record_name(rec, SFS_CREATE_SUFFIX, name, sizeof(name)))
		return;
	len = sfs_read_small_file(c->statefd, rec, text, sizeof(text));
	if (len < 0 || (strcmp(text, "create\n") != 0 &&
			((n = sscanf(text, "create %llu %llu%c", &dev, &ino, &tail)) != 3 || tail != '\n'))) {
		drop_record(c, rec, "a damaged create record");
		return;
	}
	sfs_sidecar_name(scname, sizeof(scname), name);
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted create (%s at the next start)", name,
			 fstatat(c->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0 ? "finished" : "undone");
		return;
	}
	if (fstatat(c->dirfd, scname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* the sidecar is its last step: the image is whole */
		rc = sfs_remove_durably(c->statefd, rec);
		if (rc == 0)
			sfs_logf(c->log, SFS_LOG_WARN, "%s: finished an interrupted create", name);
		note_rc(c, rc);
		return;
	}
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
			    (n == 3 ? (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino
				    : holds_no_data(fd, &st));

		close(fd);
		if (!ours)
			sfs_logf(c->log, SFS_LOG_WARN, "%s: not the backing file an interrupted create made "
				 "(another file took the name, or it holds data); left alone", name);
	}
	remove_image_files(c, name, rec, ours, "undid an interrupted create");
}

static void replay_inflate(struct ctx *c, const char *rec)
{
	char name[NAMEBUF], scname[NAMEBUF + 8], mapname[NAMEBUF + 8], err[512];
	struct sfs_sidecar sc;
	struct sfs_map *m;
	enum sfs_prov prov;
	int rc;

	if (!record_name(rec, SFS_INFLATE_SUFFIX, name, sizeof(name)))
		return;
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted inflate (finished at the next start)", name);
		return;
	}
	sfs_sidecar_name(scname, sizeof(scname), name);
	sfs_map_name(mapname, sizeof(mapname), name);
	rc = sfs_map_open(c->statefd, mapname, 0, c->log, &m, err, sizeof(err));
	if (rc < 0) {
		sfs_logf(c->log, SFS_LOG_ERR, "%s: cannot finish an interrupted inflate: %s", name, err);
		note_rc(c, rc);
		return;
	}
	prov = sfs_map_info(m)->prov;
	sfs_map_close(m);
	/* the map is the commit point: the sidecar follows it */
	if (prov == SFS_PROV_EAGERZEROEDTHICK && sfs_sidecar_load(c->dirfd, scname, &sc, err, sizeof(err)) == 0 &&
	    sc.prov != prov) {
		sc.prov = prov;
		rc = sfs_sidecar_save(c->dirfd, scname, c->statefd, &sc);
	}
	if (rc == 0)
		rc = sfs_remove_durably(c->statefd, rec);
	if (rc < 0) {
		sfs_logf(c->log, SFS_LOG_ERR, "%s: cannot finish an interrupted inflate: %s", name, strerror(-rc));
		note_rc(c, rc);
		return;
	}
	sfs_logf(c->log, SFS_LOG_WARN, "%s: %s an interrupted inflate", name,
		 prov == SFS_PROV_EAGERZEROEDTHICK ? "finished" : "dropped (the image keeps its mode)");
}

static void replay_grow(struct ctx *c, const char *rec)
{
	char name[NAMEBUF];
	size_t n = strlen(rec) - strlen(SFS_GROW_SUFFIX);

	if (n >= sizeof(name))
		return;
	memcpy(name, rec, n);
	name[n] = '\0';
	if (sfs_name_valid(name) < 0)
		return;
	if (!c->apply) {
		sfs_logf(c->log, SFS_LOG_WARN, "%s: interrupted grow (finished or undone at the next start)", name);
		return;
	}
	note_rc(c, sfs_grow_recover(c->dirfd, c->statefd, name, c->log));
}

/* Call fn for every name in the state directory ending in suffix. */
static void each_record(struct ctx *c, const char *suffix, void (*fn)(struct ctx *, const char *))
{
	DIR *d = open_dir(c, c->statefd);
	struct dirent *de;
	char (*names)[NAME_MAX + 1] = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !ends_with(de->d_name, suffix))
			continue;
		if (n == cap) {
			void *p = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof(*names));

			if (!p) {
				note_rc(c, -ENOMEM);
				break;
			}
			names = p;
		}
		snprintf(names[n++], sizeof(*names), "%s", de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		fn(c, names[i]);
	free(names);
}

int sfs_recover_pending(int statefd, const char *name, char *buf, size_t len)
{
	static const struct { const char *suffix, *what; } recs[] = {
		{ SFS_GROW_SUFFIX, "an interrupted grow" },
		{ SFS_UNLINK_SUFFIX, "an interrupted unlink" },
		{ SFS_CREATE_SUFFIX, "an interrupted create" },
		{ SFS_INFLATE_SUFFIX, "an interrupted inflate" },
	};
	char rec[NAMEBUF], j[2 * (SFS_NAME_MAX + 1) + 1];
	struct stat st;
	ssize_t n;

	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		snprintf(rec, sizeof(rec), "%s%s", name, recs[i].suffix);
		if (fstatat(statefd, rec, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			snprintf(buf, len, "%s (%s/%s)", recs[i].what, SFS_STATE_DIR, rec);
			return 1;
		}
	}
	n = sfs_read_small_file(statefd, SFS_RENAME_JOURNAL, j, sizeof(j));
	if (n > 0 && memchr(j, '\0', (size_t)n) && (size_t)n > strlen(j) + 1) {
		const char *to = j + strlen(j) + 1;

		if (strcmp(j, name) == 0 || strcmp(to, name) == 0) {
			snprintf(buf, len, "an interrupted rename of %s to %s (%s/%s)", j, to, SFS_STATE_DIR,
				 SFS_RENAME_JOURNAL);
			return 1;
		}
	}
	return 0;
}

int sfs_recover(int dirfd, int statefd, const struct sfs_log *log, bool apply)
{
	struct ctx c = { dirfd, statefd, log, apply, 0 };

	sweep(&c);
	replay_rename(&c);
	each_record(&c, SFS_UNLINK_SUFFIX, replay_unlink);
	each_record(&c, SFS_CREATE_SUFFIX, replay_create);
	each_record(&c, SFS_GROW_SUFFIX, replay_grow);
	each_record(&c, SFS_INFLATE_SUFFIX, replay_inflate);
	return c.rc;
}
