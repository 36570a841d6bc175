/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c - CRC-32C, in hardware where the CPU has it.
 *
 * The map flushes at least one 4 KiB bitmap page on every fsync and
 * checksums each of its eight 512-byte chunks, so this is on the flush
 * path.  The bit-at-a-time loop costs about 40 us a page; slice-by-8
 * (eight 256-entry tables, eight bytes per step) a few; the SSE4.2 crc32
 * instruction (eight bytes per instruction) well under one.  Which one
 * runs is decided once, at the first call, from CPUID.
 */
#include <pthread.h>
#include <string.h>

#include "crc32c.h"

#define POLY 0x82f63b78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* table[0] is the byte-at-a-time table; table[k][i] is the CRC of byte i
 * followed by k zero bytes, which slice-by-8 combines eight at a time. */
static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

uint32_t sfs_crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	pthread_once(&table_once, make_table);
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				   (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;

		c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		    table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		    table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
	}
	while (n--)
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
	return ~c;
}

#if defined(__x86_64__)

__attribute__((target("sse4.2")))
uint32_t sfs_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	if (!sfs_crc32c_hw_available())
		return sfs_crc32c_sw(crc, buf, n);
	for (; n && ((uintptr_t)p & 7); n--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);          /* aligned here; memcpy keeps it well defined */
		c = __builtin_ia32_crc32di(c, v);
	}
	while (n--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

bool sfs_crc32c_hw_available(void)
{
	static int have = -1;          /* -1: not asked yet */
	int h = __atomic_load_n(&have, __ATOMIC_RELAXED);

	if (h < 0) {
		__builtin_cpu_init();
		h = __builtin_cpu_supports("sse4.2") ? 1 : 0;
		__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	}
	return h;
}

#else

uint32_t sfs_crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	return sfs_crc32c_sw(crc, buf, n);
}

bool sfs_crc32c_hw_available(void)
{
	return false;
}

#endif

uint32_t sfs_crc32c(uint32_t crc, const void *buf, size_t n)
{
	return sfs_crc32c_hw_available() ? sfs_crc32c_hw(crc, buf, n) : sfs_crc32c_sw(crc, buf, n);
}
