/* SPDX-License-Identifier: MIT */
/*
 * le.h - little-endian stores and loads of 32- and 64-bit integers, for
 * the on-disk formats (the allocation map, the undo log).  The 64-bit
 * ones are a plain copy on a little-endian host (a map page is 504 of
 * them on every flush), byte by byte elsewhere.  p need not be aligned.
 */
#ifndef SFS_LE_H
#define SFS_LE_H

#include <stdint.h>
#include <string.h>

static inline void sfs_put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void sfs_put_le64(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
#endif
}

static inline uint32_t sfs_get_le32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint64_t sfs_get_le64(const unsigned char *p)
{
	uint64_t v = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, 8);
#else
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
#endif
	return v;
}

#endif
