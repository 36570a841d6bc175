/* SPDX-License-Identifier: MIT */
/*
 * fileid.h - what tells one file from another beyond (device, inode).
 *
 * A filesystem hands a freed inode number to the next file it makes (ext4
 * does at once), so (device, inode) alone names "a file that is there now",
 * not "the file we made".  The identity of a file here is its inode number
 * and device together with what the filesystem gives each new inode and no
 * user can set: its birth time (statx STATX_BTIME, to the nanosecond) where
 * the filesystem reports one, else the generation inside its file handle
 * (name_to_handle_at, hashed to 64 bits).  On a filesystem with neither
 * the identity is (device, inode), as before: nothing better is known.
 *
 * Device numbers of device-mapper and btrfs volumes change across reboots,
 * so an identity compared after a restart (an intent record, a map header)
 * leaves the device out when a birth time or generation is there; within
 * one run of the daemon the device is compared too.
 *
 * Functions return 0 or a negative errno.
 */
#ifndef SFS_FILEID_H
#define SFS_FILEID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define SFS_FILEID_BTIME 0x1u    /* btime_sec/btime_nsec are the birth time */
#define SFS_FILEID_GEN 0x2u      /* gen is the file handle's hash */

struct sfs_fileid {
	uint64_t dev, ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	uint32_t has;            /* SFS_FILEID_*; 0: only device and inode known */
	uint64_t gen;
};

/* The identity of the open file fd, and its stat in *st when st is not NULL.  0 or -errno. */
int sfs_fileid_fd(int fd, struct sfs_fileid *id, struct stat *st);

/* The identity of dirfd/name, never following a symbolic link (a link's own), and its stat
 * in *st when st is not NULL: 0, or -errno (-ENOENT when there is no such file). */
int sfs_fileid_at(int dirfd, const char *name, struct sfs_fileid *id, struct stat *st);

/* Are a and b the same file?  The inode must match, and every strong part (birth time,
 * generation) known on both sides; an identity with a strong part is never the same as one
 * whose filesystem has none.  with_dev: compare the devices too (within one run), else only
 * when neither side has a strong part. */
bool sfs_fileid_same(const struct sfs_fileid *a, const struct sfs_fileid *b, bool with_dev);

/* id as text, "dev=D ino=I[ btime=S.NNNNNNNNN][ gen=HEX16]", each key after prefix (""; "sc."
 * for a second identity in the same text), into buf (>= 128 bytes). */
void sfs_fileid_format(const struct sfs_fileid *id, const char *prefix, char *buf, size_t len);

/* Parse what sfs_fileid_format wrote, among other KEY=VALUE words of text (words it does not
 * know are skipped; a prefix such as "sc." before the keys picks one of several identities):
 * 0, or -EINVAL when dev or ino is missing or a value does not parse. */
int sfs_fileid_parse(const char *text, const char *prefix, struct sfs_fileid *id);

/* "inode I, born YYYY-MM-DD HH:MM:SS.NNNNNNNNN UTC" (or "generation HEX", or just the inode),
 * for messages. */
const char *sfs_fileid_text(const struct sfs_fileid *id, char *buf, size_t len);

#endif
