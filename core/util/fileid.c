/* SPDX-License-Identifier: MIT */
/*
 * fileid.c - file identities (fileid.h): statx for the inode and the birth
 * time, name_to_handle_at for the generation where there is no birth time.
 *
 * The handle is only asked for when statx reports no birth time, so on
 * ext4, XFS, btrfs and tmpfs an identity costs one statx, what a stat
 * costs.  The handle's bytes are opaque (ext4 and XFS put the inode and its
 * generation in them); they are hashed, FNV-1a over 64 bits, which is all
 * a comparison needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "fileid.h"

#define HANDLE_MAX 128   /* MAX_HANDLE_SZ */

/* FNV-1a, 64 bits, over the handle's type and bytes. */
static uint64_t handle_hash(const struct file_handle *fh)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int type = fh->handle_type;

	for (size_t i = 0; i < sizeof(type); i++)
		h = (h ^ ((const unsigned char *)&type)[i]) * 0x100000001b3ull;
	for (unsigned i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 0x100000001b3ull;
	return h;
}

/* The generation of dirfd/name (name "" with AT_EMPTY_PATH: dirfd itself) into id, when the
 * filesystem gives file handles; nothing otherwise. */
static void add_gen(int dirfd, const char *name, int flags, struct sfs_fileid *id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + HANDLE_MAX];
	} u;
	int mnt;

	u.fh.handle_bytes = HANDLE_MAX;
	if (name_to_handle_at(dirfd, name, &u.fh, &mnt, flags) == 0) {
		id->gen = handle_hash(&u.fh);
		id->has |= SFS_FILEID_GEN;
	}
}

static void from_statx(const struct statx *sx, struct sfs_fileid *id, struct stat *st)
{
	memset(id, 0, sizeof(*id));
	id->dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	id->ino = sx->stx_ino;
	if (sx->stx_mask & STATX_BTIME) {
		id->btime_sec = sx->stx_btime.tv_sec;
		id->btime_nsec = sx->stx_btime.tv_nsec;
		id->has |= SFS_FILEID_BTIME;
	}
	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	st->st_dev = (dev_t)id->dev;
	st->st_ino = sx->stx_ino;
	st->st_mode = sx->stx_mode;
	st->st_nlink = sx->stx_nlink;
	st->st_uid = sx->stx_uid;
	st->st_gid = sx->stx_gid;
	st->st_rdev = makedev(sx->stx_rdev_major, sx->stx_rdev_minor);
	st->st_size = (off_t)sx->stx_size;
	st->st_blksize = (blksize_t)sx->stx_blksize;
	st->st_blocks = (blkcnt_t)sx->stx_blocks;
	st->st_atim.tv_sec = sx->stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx->stx_atime.tv_nsec;
	st->st_mtim.tv_sec = sx->stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx->stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx->stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx->stx_ctime.tv_nsec;
}

int sfs_fileid_fd(int fd, struct sfs_fileid *id, struct stat *st)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return -errno;
	from_statx(&sx, id, st);
	if (!(id->has & SFS_FILEID_BTIME))
		add_gen(fd, "", AT_EMPTY_PATH, id);
	return 0;
}

int sfs_fileid_at(int dirfd, const char *name, struct sfs_fileid *id, struct stat *st)
{
	struct statx sx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
		return -errno;
	from_statx(&sx, id, st);
	if (!(id->has & SFS_FILEID_BTIME))
		add_gen(dirfd, name, 0, id);
	return 0;
}

bool sfs_fileid_same(const struct sfs_fileid *a, const struct sfs_fileid *b, bool with_dev)
{
	uint32_t both = a->has & b->has;

	if (a->ino != b->ino)
		return false;
	if ((a->has != 0) != (b->has != 0))
		return false;
	if ((with_dev || !both) && a->dev != b->dev)
		return false;
	if ((both & SFS_FILEID_BTIME) && (a->btime_sec != b->btime_sec || a->btime_nsec != b->btime_nsec))
		return false;
	if ((both & SFS_FILEID_GEN) && a->gen != b->gen)
		return false;
	/* strong parts on both sides, none of them common: not comparable, so not the same */
	return !(a->has && !both);
}

void sfs_fileid_format(const struct sfs_fileid *id, const char *prefix, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%sdev=%" PRIu64 " %sino=%" PRIu64, prefix, id->dev, prefix, id->ino);

	if (n > 0 && (size_t)n < len && (id->has & SFS_FILEID_BTIME))
		n += snprintf(buf + n, len - (size_t)n, " %sbtime=%" PRId64 ".%09" PRIu32, prefix, id->btime_sec,
			      id->btime_nsec);
	if (n > 0 && (size_t)n < len && (id->has & SFS_FILEID_GEN))
		snprintf(buf + n, len - (size_t)n, " %sgen=%016" PRIx64, prefix, id->gen);
}

/* The value of word prefix+key= in text, or NULL. */
static const char *value_of(const char *text, const char *prefix, const char *key)
{
	size_t pl = strlen(prefix), kl = strlen(key);

	for (const char *p = text; *p;) {
		p += strspn(p, " \t\n");
		if (strncmp(p, prefix, pl) == 0 && strncmp(p + pl, key, kl) == 0 && p[pl + kl] == '=')
			return p + pl + kl + 1;
		p += strcspn(p, " \t\n");
	}
	return NULL;
}

/* Parse an unsigned number at v ending at a space, newline or NUL, in base. */
static int parse_u64(const char *v, int base, uint64_t *out)
{
	char *end;

	if (!v || !*v || *v == '-' || *v == '+' || *v == ' ')
		return -EINVAL;
	errno = 0;
	*out = strtoull(v, &end, base);
	if (errno || (*end && *end != ' ' && *end != '\n' && *end != '\t'))
		return -EINVAL;
	return 0;
}

int sfs_fileid_parse(const char *text, const char *prefix, struct sfs_fileid *id)
{
	const char *bt = value_of(text, prefix, "btime"), *gen = value_of(text, prefix, "gen");
	uint64_t sec, nsec;

	memset(id, 0, sizeof(*id));
	if (parse_u64(value_of(text, prefix, "dev"), 10, &id->dev) < 0 ||
	    parse_u64(value_of(text, prefix, "ino"), 10, &id->ino) < 0)
		return -EINVAL;
	if (bt) {
		char secs[32];
		size_t n = strcspn(bt, ".");

		if (n == 0 || n >= sizeof(secs) || bt[n] != '.')
			return -EINVAL;
		memcpy(secs, bt, n);
		secs[n] = '\0';
		if (parse_u64(secs, 10, &sec) < 0 || parse_u64(bt + n + 1, 10, &nsec) < 0 || nsec >= 1000000000u ||
		    sec > INT64_MAX)
			return -EINVAL;
		id->btime_sec = (int64_t)sec;
		id->btime_nsec = (uint32_t)nsec;
		id->has |= SFS_FILEID_BTIME;
	}
	if (gen) {
		if (parse_u64(gen, 16, &id->gen) < 0)
			return -EINVAL;
		id->has |= SFS_FILEID_GEN;
	}
	return 0;
}

const char *sfs_fileid_text(const struct sfs_fileid *id, char *buf, size_t len)
{
	if (id->has & SFS_FILEID_BTIME) {
		time_t t = (time_t)id->btime_sec;
		struct tm tm;
		char when[32] = "?";

		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(buf, len, "inode %" PRIu64 ", born %s.%09" PRIu32 " UTC", id->ino, when, id->btime_nsec);
	} else if (id->has & SFS_FILEID_GEN) {
		snprintf(buf, len, "inode %" PRIu64 ", generation %016" PRIx64, id->ino, id->gen);
	} else {
		snprintf(buf, len, "inode %" PRIu64, id->ino);
	}
	return buf;
}
