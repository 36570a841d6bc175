/* SPDX-License-Identifier: MIT */
/*
 * intent.h - the intent records of the store's multi-file operations:
 * what each says, as text, written and read back.
 *
 * A record is written (atomically, durably) before an operation's first
 * change and removed after its last (recover.h says what a crash leaves
 * and how the next start puts it right).  Its first line is what older
 * versions wrote and still read; the second names the image it is about
 * beyond (device, inode) (fileid.h, map/ident.h), and a rename over an
 * image has a third for the image it replaces:
 *
 *   FROM.rename "FROM\0TO\0" then  "id=ID dev=D ino=I [btime=S.N] [gen=G] sc.dev=.. sc.ino=..\n"
 *                                  ["over id=ID dev=.. ino=.. sc.dev=.. sc.ino=..\n"]
 *   NAME.unlink "unlink DEV INO\n" "id=ID dev=.. ino=.. ..\n"
 *   NAME.create "create\n"         "id=ID\n" (the backing file made later, tied by the map)
 *   NAME.grow   "grow OLD NEW LEN SC\n" or "trim OLD NEW\n", then "id=ID dev=.. ino=.. ..\n"
 *   NAME.inflate "inflate\n"       "id=ID\n"
 *
 * ID is the image's identity in 32 hex digits; dev, ino, btime and gen
 * the backing file's identity, sc.* its sidecar's.  A record of an older
 * version has the first line only ("create DEV INO\n" among them):
 * recovery then acts only where the map's identity vouches for a file.
 * Each record is named for the image it changes, a rename's for the image
 * it moves (FROM: the store runs one rename of an image at a time, and
 * FROM.rename is no other file's name, NAME.map and the rest ending
 * otherwise); older versions named every rename's "rename" (the same
 * text, with or without the lines), which is still read.
 *
 * Functions return 0 or a negative errno.
 */
#ifndef SFS_INTENT_H
#define SFS_INTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "map/ident.h"
#include "map/map.h"
#include "util/fileid.h"
#include "contract/names.h"

enum sfs_intent_kind {
	SFS_INTENT_RENAME,
	SFS_INTENT_UNLINK,
	SFS_INTENT_CREATE,
	SFS_INTENT_GROW,     /* NAME.grow holding "grow ..." */
	SFS_INTENT_TRIM,     /* NAME.grow holding "trim ..." */
	SFS_INTENT_INFLATE,
};

struct sfs_intent {
	enum sfs_intent_kind kind;
	char name[SFS_NAME_MAX + 1];     /* the image (a rename's FROM) */
	char to[SFS_NAME_MAX + 1];       /* a rename's TO */
	uint64_t old_size, new_size;     /* grow, trim */
	uint64_t old_len;                /* grow: the backing file's length before */
	int sidecar;                     /* grow: 1 when the grow rewrites the sidecar */
	bool has_devino;                 /* unlink, create: the first line's DEV INO (older versions) */
	uint64_t dev, ino;
	struct sfs_intent_who img;       /* the second line */
	bool has_over;                   /* a rename over an image: the third line */
	struct sfs_intent_who over;
};

/* The record's file name in the state directory ("FROM.rename", "NAME.unlink", ...) into buf
 * (len >= SFS_FILE_NAME_LEN): 0, or -ENAMETOOLONG. */
int sfs_intent_file(const struct sfs_intent *in, char *buf, size_t len);

/* Write record in atomically and durably into the state directory statefd. */
int sfs_intent_write(int statefd, const struct sfs_intent *in);

/* Remove record in durably (0 also when it is not there). */
int sfs_intent_remove(int statefd, const struct sfs_intent *in);

/* Read the record of kind (for NAME.grow: SFS_INTENT_GROW, which also reads a trim) named
 * fname in statefd into *out (a rename's: FROM.rename, or "rename" of older versions): 0;
 * -ENOENT; -EPERM when fname is not a regular file (a FIFO, a directory: never opened for
 * reading, so nothing hangs); -EUCLEAN when it does not parse (records are written
 * atomically: such a one is damaged), or names another image than its file name does;
 * -errno when it cannot be read. */
int sfs_intent_read(int statefd, enum sfs_intent_kind kind, const char *fname, struct sfs_intent *out);

/* Write the small record NAME+suffix holding text (sectorfs-img's make: "create\n..."),
 * atomically and durably. */
int sfs_intent_put(int statefd, const char *name, const char *suffix, const char *text);

/* Remove the record NAME+suffix durably; 0 also when absent. */
int sfs_intent_drop(int statefd, const char *name, const char *suffix);

#endif
