/* SPDX-License-Identifier: MIT */
/*
 * pattern.c - self-describing sectors: every 512-byte sector the workload
 * writes says which data it is.
 *
 *   0       8         16                32    36    40             512
 *   +-------+---------+-----------------+-----+-----+---------------+
 *   | magic |   tag   | name written as | gen | 0   | filler(tag)   |
 *   +-------+---------+-----------------+-----+-----+---------------+
 *
 * The filler is an xorshift stream seeded by the tag, so a sector whose
 * header was kept but whose body came from elsewhere reads as junk.
 * Zeros read as TAG_ZERO, anything else as TAG_JUNK.
 */
#include <string.h>

#include "crashns.h"

static const char magic[8] = "SFSCRNS1";

struct hdr {
	char magic[8];
	uint64_t tag;
	char name[16];
	uint32_t gen, pad;
};

_Static_assert(sizeof(struct hdr) == 40, "header layout");

uint64_t make_w(uint32_t round, int t, uint32_t n)
{
	return (uint64_t)round << 24 | (uint64_t)t << 20 | (n & 0xfffff);
}

static void filler(unsigned char *p, uint64_t tag)
{
	uint64_t x = tag * 0x9e3779b97f4a7c15ull | 1;

	for (size_t i = sizeof(struct hdr); i < SECT; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

void fill_sector(unsigned char *p, uint64_t tag, const char *name, uint32_t gen)
{
	struct hdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, magic, sizeof(magic));
	h.tag = tag;
	strncpy(h.name, name, sizeof(h.name) - 1);
	h.gen = gen;
	memcpy(p, &h, sizeof(h));
	filler(p, tag);
}

uint64_t read_sector(const unsigned char *p)
{
	unsigned char want[SECT];
	struct hdr h;
	size_t i;

	for (i = 0; i < SECT && p[i] == 0; i++)
		;
	if (i == SECT)
		return TAG_ZERO;
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, magic, sizeof(magic)) != 0 || h.tag == TAG_ZERO || h.tag >= TAG_JUNK)
		return TAG_JUNK;
	filler(want, h.tag);
	if (memcmp(p + sizeof(h), want + sizeof(h), SECT - sizeof(h)) != 0)
		return TAG_JUNK;
	return h.tag;
}
