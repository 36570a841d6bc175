#!/bin/bash
# SPDX-License-Identifier: MIT
# img-create-interrupt.sh - Ctrl-C (SIGINT) during the eager zeroing of
# sectorfs-img create exits 130, says so, and removes the half-made image
# (backing file, sidecar and map).
. "$(dirname "$0")/lib.sh"

"$SECTORFS_IMG" create -s 1G -b 4K -p eagerzeroedthick --no-zero-offload "$STORE/big" >"$T/out" 2>"$T/err" &
CPID=$!
for ((i = 0; i < 500; i++)); do
	[ -e "$STORE/.sectorfs/big.map" ] && break
	sleep 0.01
done
kill -INT $CPID
rc=0; wait $CPID || rc=$?
[ $rc -eq 130 ] || fail "interrupted create exited $rc, expected 130: $(cat "$T/err")"
err_is "sectorfs-img: create interrupted; $STORE/big removed"
gone big
pass "Ctrl-C during eager zeroing leaves no image"
