#!/bin/bash
# SPDX-License-Identifier: MIT
# sidecar-creates-image.sh - a sidecar without its backing file gets one
# of the right size (thin: sparse; zeroedthick and eagerzeroedthick:
# fully allocated) that reads zeros; the sector formats are as declared,
# an explicit logical/physical pair (2048/8192) included.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-sidecars.sh"

serve_good_store

for n in gthin gzt gezt gexplicit; do
	expect_eq "$(stat -c %s "$STORE/$n")" $((8 * M)) "size of the backing file made for $n"
	expect_eq "$(stat -c %s "$MNT/$n")" $((8 * M)) "size of $n in the mount"
	expect_eq "$(sum "$MNT/$n" 0 $((8 * M)))" "$(zsum $((8 * M)))" "contents of new image $n"
done
kb=$(du -k "$STORE/gthin" | cut -f1)
[ "$kb" -le 64 ] || fail "thin backing file not sparse: du says $kb KiB"
pass "thin: backing file created sparse (du ${kb} KiB), reads zeros"
for n in gzt gezt; do
	b=$(stat -c %b "$STORE/$n")
	[ $((b * 512)) -ge $((8 * M)) ] || fail "$n backing file not fully allocated: $b blocks of 512"
done
pass "zeroedthick and eagerzeroedthick: backing files fully allocated (st_blocks >= size)"
expect_eq "$(stat -c %o "$MNT/gexplicit")" 8192 "st_blksize of logical 2048 / physical 8192"
expect_eq "$(stat -c %o "$MNT/gezt")" 4096 "st_blksize of 512e"
expect_eq "$(stat -c %o "$MNT/gzt")" 4096 "st_blksize of 4kn"
expect_eq "$(stat -c %o "$MNT/gthin")" 512 "st_blksize of 512n"
if command -v getfattr >/dev/null 2>&1; then
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/gexplicit")" 2048 \
		"logical sector of gexplicit"
fi
pass "sector formats as declared (explicit 2048/8192 pair included)"
stop_daemon
