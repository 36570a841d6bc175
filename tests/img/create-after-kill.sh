#!/bin/bash
# SPDX-License-Identifier: MIT
# create-after-kill.sh - sectorfs-img create killed (-9, a power cut)
# during its eager zeroing leaves its files and its record; running the
# same create again works: the store's recovery, which the create runs
# when it takes the store, removes what the first one left (check said
# so: "pending ... the image is not there after it"), instead of a
# refusal that the image already exists.
. "$(dirname "$0")/lib.sh"

"$SECTORFS_IMG" create -s 2G -b 4K -p eagerzeroedthick --no-zero-offload "$STORE/big" >/dev/null 2>&1 &
CPID=$!
for ((i = 0; i < 500; i++)); do
	[ -e "$STORE/.sectorfs/big.create" ] && [ -e "$STORE/big" ] && break
	sleep 0.01
done
kill -9 $CPID
wait $CPID 2>/dev/null
[ -e "$STORE/.sectorfs/big.create" ] || skip "the create ended before it could be killed"
img 0 check "$STORE"
out_has "$STORE/big: pending: an interrupted create of big"
img 0 create -s 1M "$STORE/big"
out_has "created $STORE/big: 1M"
[ ! -e "$STORE/.sectorfs/big.create" ] || fail "the record is still there"
img 0 check "$STORE/big"
out_is "$STORE/big: clean (1048576 bytes, thin, 0 of 1 blocks allocated)"
pass "create killed -9, then the same create again: made, clean"
