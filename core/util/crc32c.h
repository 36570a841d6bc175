/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of the allocation map's
 * header and of each of its bitmap chunks.
 *
 * Reflected polynomial 0x82F63B78, initial value and final xor all ones:
 * the CRC of iSCSI, ext4 and btrfs; CRC-32C("123456789") = 0xE3069283.
 * sfs_crc32c() uses the SSE4.2 crc32 instruction when the CPU has it
 * (checked once, at run time) and a slice-by-8 table otherwise; both
 * paths are exported so that the tests can hold them against each other.
 */
#ifndef SFS_CRC32C_H
#define SFS_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of n bytes of buf (buf may be NULL when n is 0), continuing from crc, the CRC-32C
 * of the bytes before (0 to start): sfs_crc32c(sfs_crc32c(0, a, na), b, nb) is the CRC of a
 * then b.  Never fails. */
uint32_t sfs_crc32c(uint32_t crc, const void *buf, size_t n);

/* sfs_crc32c computed with the slice-by-8 tables (any CPU); same arguments and result. */
uint32_t sfs_crc32c_sw(uint32_t crc, const void *buf, size_t n);

/* sfs_crc32c computed with the SSE4.2 crc32 instruction; same arguments and result.
 * Precondition: sfs_crc32c_hw_available() (without it, it falls back to the tables). */
uint32_t sfs_crc32c_hw(uint32_t crc, const void *buf, size_t n);

/* Does this CPU have the SSE4.2 crc32 instruction?  Always false off x86-64. */
bool sfs_crc32c_hw_available(void);

#endif
