/* SPDX-License-Identifier: MIT */
/*
 * ident.h - what ties an allocation map to its image, and how a map
 * found on disk is judged against the image it is to serve.
 *
 * Every image has a random identity of 16 bytes, made with its map and
 * kept for life; the map header records it with the identity of the
 * backing file the map describes, the map file's own identity, and the
 * image's name (map.h, struct sfs_map_ident).  The intent records
 * carry the image identity too (intent.h).  A map is then judged by two
 * questions: is this map file the one that was written (its own
 * identity), and is the backing file beside it the one it describes?
 *
 *   map file   backing file   name       verdict
 *   the same   the same       the same   OK
 *   the same   the same       other      RENAMED (by hand): the name recorded again
 *   the same   another        the same   REPLACED: the map describes a file that is gone;
 *                                        refused (check --repair rebuilds it from the
 *                                        file now there)
 *   the same   another        other      FOREIGN: a hard link to another image's map
 *   a copy     another, none  the same   COPIED: the image was copied whole (a store
 *                                        copied or restored); recorded again
 *   a copy     the same       the same   FOREIGN: a copy of a map put over the image's
 *   a copy     -              other      own, or another image's map: refused
 *   no identity recorded                 NONE (an older version's map): recorded at the
 *                                        next read-write open
 *
 * Why each part.  The map's own identity tells a map left where it was
 * made from a copy, so that a store copied or restored whole (cp -a,
 * rsync, tar: every file new) keeps working while a backing file replaced
 * beside its own map does not pass.  The name then tells a store copied
 * whole (every map a copy, under its own name) from a map copied from
 * another image; a map copied from another store's image of the same name
 * reads as COPIED, and nothing on disk can tell it apart.  The name is
 * rewritten with the map when the image is renamed (sfs_image_set_name,
 * and recovery's rename), so that a copy taken after a rename is still
 * its image's.  Devices are left out (fileid.h): a store's device number
 * can change at a reboot.  The image identity is what intent records name
 * the map by.
 *
 * Why a replaced backing file is refused here but imported while served:
 * a daemon that sees the image's file go (prune_if_gone in store/scan.c)
 * drops the image and serves the name again from its sidecar, importing
 * whatever file is there, as it always has; at a start nothing says
 * whether the file now under the name was meant as the disk, and the
 * map's bits describe another file (laid over it, they would read as
 * zeros where it holds data and have a first write zero the rest of its
 * block), so the choice is left to check --repair, which imports it.
 */
#ifndef SFS_MAPIDENT_H
#define SFS_MAPIDENT_H

#include <stdbool.h>
#include <stddef.h>

#include "map.h"
#include "util/fileid.h"

enum sfs_map_tie {
	SFS_TIE_OK,
	SFS_TIE_NONE,
	SFS_TIE_RENAMED,
	SFS_TIE_COPIED,
	SFS_TIE_REPLACED,
	SFS_TIE_FOREIGN,
};

/* How map m (its file as opened) stands to image name whose backing file is backing (NULL:
 * there is none): the verdict, and in why (len > 0) a sentence saying it for messages, which
 * starts with the map's file name. */
enum sfs_map_tie sfs_map_tie(const struct sfs_map *m, const char *name, const struct sfs_fileid *backing,
			     char *why, size_t len);

/* May an image be served through a map of verdict t (its identity recorded again first when
 * not OK)? */
static inline bool sfs_map_tie_servable(enum sfs_map_tie t)
{
	return t <= SFS_TIE_COPIED;
}

/* The identity to record in m for image name with backing file backing: m's image identity
 * kept when it has one, a new one made otherwise.  0 or -errno (getrandom). */
int sfs_map_ident_for(const struct sfs_map *m, const char *name, const struct sfs_fileid *backing,
		      struct sfs_map_ident *out);

/* A new random image identity into id.  0 or -errno. */
int sfs_image_id_new(unsigned char id[SFS_IMAGE_ID_LEN]);

/* id as 32 lowercase hex digits into buf (>= 33 bytes); buf. */
char *sfs_image_id_hex(const unsigned char id[SFS_IMAGE_ID_LEN], char *buf);

/* Parse 32 hex digits at hex (then a space, a newline or the end) into id: 0 or -EINVAL. */
int sfs_image_id_parse(const char *hex, unsigned char id[SFS_IMAGE_ID_LEN]);

/* What an intent record (intent.h) says of one image: its identity, its backing file's and
 * its sidecar's. */
struct sfs_intent_who {
	bool has_id;
	unsigned char id[SFS_IMAGE_ID_LEN];
	bool has_backing, has_sidecar;
	struct sfs_fileid backing, sidecar;
};

/* A who for an image of identity id (NULL: none) whose backing file and sidecar have the
 * identities given (NULL: not recorded). */
struct sfs_intent_who sfs_intent_who_of(const unsigned char *id, const struct sfs_fileid *backing,
					const struct sfs_fileid *sidecar);

#endif
