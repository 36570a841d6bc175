/* SPDX-License-Identifier: MIT */
/*
 * units.h - parsing and printing of byte sizes ("8G", "512", "1M").
 *
 * Sizes are integers of bytes or a decimal integer followed by one of
 * K, M, G, T (binary multiples: K = 1024).  An optional trailing "B" or
 * "iB" is accepted ("4KiB", "1MB" mean 4096 and 1048576).  No fractions,
 * no signs, no spaces.
 */
#ifndef SFS_UNITS_H
#define SFS_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Parse a size string into bytes: 0, -EINVAL if malformed, -ERANGE if it overflows 63 bits. */
int sfs_parse_size(const char *s, uint64_t *out);

/* Print bytes with the largest exact binary suffix ("1M", "4K", "1536"); returns 0 or -ENOSPC. */
int sfs_format_size(uint64_t bytes, char *buf, size_t len);

/* Print bytes for people, rounded to one decimal ("1.5 GiB"); returns 0 or -ENOSPC. */
int sfs_format_human(uint64_t bytes, char *buf, size_t len);

/* Print bytes in the largest binary unit up to TiB that holds them whole ("512 B", "4 KiB",
 * "1536 KiB", "1024 TiB"), else as sfs_format_human ("1.5 KiB"); returns 0 or -ENOSPC. */
int sfs_format_iec(uint64_t bytes, char *buf, size_t len);

/* True when v is a power of two (and not 0). */
static inline int sfs_is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

#endif
