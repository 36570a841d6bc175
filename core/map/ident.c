/* SPDX-License-Identifier: MIT */
/*
 * ident.c - judging a map against its image (ident.h), and image
 * identities: 16 bytes from getrandom, written as 32 hex digits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "ident.h"

enum sfs_map_tie sfs_map_tie(const struct sfs_map *m, const char *name, const struct sfs_fileid *backing,
			     char *why, size_t len)
{
	const struct sfs_map_ident *id = sfs_map_ident(m);
	bool self = id->present && sfs_fileid_same(&id->self, sfs_map_fileid(m), false);
	bool bk = id->present && backing && sfs_fileid_same(&id->backing, backing, false);
	bool named = id->present && strcmp(id->name, name) == 0;
	char was[96], now[96];
	enum sfs_map_tie t;

	if (!id->present)
		t = SFS_TIE_NONE;
	else if (self && (bk || !backing))
		t = named ? SFS_TIE_OK : SFS_TIE_RENAMED;
	else if (self)
		t = named ? SFS_TIE_REPLACED : SFS_TIE_FOREIGN;    /* the other: a link to another's map */
	else if (named && !bk)
		t = SFS_TIE_COPIED;
	else
		t = SFS_TIE_FOREIGN;
	if (!len)
		return t;
	switch (t) {
	case SFS_TIE_NONE:
		snprintf(why, len, "%s" SFS_MAP_SUFFIX ": no image identity recorded (a map of an older "
			 "version)", name);
		break;
	case SFS_TIE_OK:
		snprintf(why, len, "%s" SFS_MAP_SUFFIX ": the map of this image and backing file", name);
		break;
	case SFS_TIE_RENAMED:
		snprintf(why, len, "%s" SFS_MAP_SUFFIX ": the map of this backing file, written as image '%s' "
			 "(renamed by hand)", name, id->name);
		break;
	case SFS_TIE_COPIED:
		snprintf(why, len, "%s" SFS_MAP_SUFFIX ": the map and the backing file are both copies of "
			 "image %s's (the store copied or restored)", name, name);
		break;
	case SFS_TIE_REPLACED:
		snprintf(why, len, "%s" SFS_MAP_SUFFIX ": made for a backing file that is no longer there "
			 "(%s); the file now at %s (%s) was put there behind the daemon's back", name,
			 sfs_fileid_text(&id->backing, was, sizeof(was)), name,
			 sfs_fileid_text(backing, now, sizeof(now)));
		break;
	case SFS_TIE_FOREIGN:
		if (!named)
			snprintf(why, len, "%s" SFS_MAP_SUFFIX ": %s the map of image '%s', not this image's", name,
				 self ? "a hard link to" : "a copy of", id->name);
		else
			snprintf(why, len, "%s" SFS_MAP_SUFFIX ": a copy of a map put in place of the one "
				 "written for this image (not the file the map was written as)", name);
		break;
	}
	return t;
}

int sfs_map_ident_for(const struct sfs_map *m, const char *name, const struct sfs_fileid *backing,
		      struct sfs_map_ident *out)
{
	const struct sfs_map_ident *id = sfs_map_ident(m);

	memset(out, 0, sizeof(*out));
	if (id->present)
		memcpy(out->id, id->id, SFS_IMAGE_ID_LEN);
	else if (sfs_image_id_new(out->id) < 0)
		return -errno;
	out->present = true;
	out->backing = *backing;
	snprintf(out->name, sizeof(out->name), "%s", name);
	return 0;
}

int sfs_image_id_new(unsigned char id[SFS_IMAGE_ID_LEN])
{
	size_t got = 0;

	while (got < SFS_IMAGE_ID_LEN) {
		ssize_t n = getrandom(id + got, SFS_IMAGE_ID_LEN - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

char *sfs_image_id_hex(const unsigned char id[SFS_IMAGE_ID_LEN], char *buf)
{
	for (int i = 0; i < SFS_IMAGE_ID_LEN; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	return buf;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int sfs_image_id_parse(const char *hex, unsigned char id[SFS_IMAGE_ID_LEN])
{
	for (int i = 0; i < SFS_IMAGE_ID_LEN; i++) {
		int hi = hexval(hex[2 * i]), lo = hi < 0 ? -1 : hexval(hex[2 * i + 1]);

		if (lo < 0)
			return -EINVAL;
		id[i] = (unsigned char)(hi << 4 | lo);
	}
	return hex[2 * SFS_IMAGE_ID_LEN] && !strchr(" \t\n", hex[2 * SFS_IMAGE_ID_LEN]) ? -EINVAL : 0;
}

struct sfs_intent_who sfs_intent_who_of(const unsigned char *id, const struct sfs_fileid *backing,
					const struct sfs_fileid *sidecar)
{
	struct sfs_intent_who w = { 0 };

	if (id) {
		w.has_id = true;
		memcpy(w.id, id, SFS_IMAGE_ID_LEN);
	}
	if (backing) {
		w.has_backing = true;
		w.backing = *backing;
	}
	if (sidecar) {
		w.has_sidecar = true;
		w.sidecar = *sidecar;
	}
	return w;
}
