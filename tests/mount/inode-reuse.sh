#!/bin/bash
# SPDX-License-Identifier: MIT
# inode-reuse.sh - a file put where an image's backing file was, on the
# same inode number (ext4 gives a freed number out again at once), is
# never served through the image's old map.
#
# With -o max_open=1 the image's descriptors are closed once another
# image is used; then STORE/a is removed and the user makes files under
# its name until one has a's old inode number.  The descriptor cache must
# not reopen it as a's file, so that the old map (block 1 never written)
# is not laid over it: a read of block 1 through the mount shows the
# user's bytes, not zeros, and a 4 KiB write into block 1 changes those
# 4 KiB of the user's file and nothing else (the old map would have had
# the rest of the block zeroed as a first write).  The daemon logs the
# file as removed from the store while served.  Skipped (77) where the
# store's filesystem does not give the number out again.
. "$(dirname "$0")/lib.sh"
requires_fuse

K=1024
sidecar a 1M 512n thin 64K
sidecar b 1M 512n thin 64K
start_daemon -o max_open=1
head -c 4096 /dev/urandom > "$T/w0"
dd if="$T/w0" of="$MNT/a" bs=4096 count=1 oflag=direct conv=notrunc,fsync status=none || fail "write to a"
dd if="$MNT/b" of=/dev/null bs=4096 count=1 iflag=direct status=none || fail "read of b"   # a evicted
ino=$(stat -c %i "$STORE/a")

# the user's file: 128 KiB of 'U', on a's old inode number (files that get
# another number are kept aside until it comes; the directory for them is
# made first, or it could take the number itself)
mkdir "$T/pads"
rm "$STORE/a"
for ((i = 0; i < 3000; i++)); do
	head -c $((128 * K)) /dev/zero | tr '\0' U > "$STORE/a"
	[ "$(stat -c %i "$STORE/a")" = "$ino" ] && break
	mv "$STORE/a" "$T/pads/$i"
done
rm -rf "$T/pads"
[ -e "$STORE/a" ] || skip "the store's filesystem did not give inode $ino out again"
echo "# inode $ino given out again after $i files"
cp "$STORE/a" "$T/user"

got=$(dd if="$MNT/a" bs=4096 count=1 skip=16 iflag=direct status=none | tr -d '\0' | wc -c)
[ "$got" -eq 4096 ] || fail "block 1 of the user's file read through the mount as $((4096 - got)) zero bytes of 4096: served through the old map"
head -c 4096 /dev/urandom > "$T/w1"
dd if="$T/w1" of="$MNT/a" bs=4096 count=1 seek=16 oflag=direct conv=notrunc,fsync status=none ||
	fail "write into block 1 of a"
dd if="$T/w1" of="$T/user" bs=4096 count=1 seek=16 conv=notrunc status=none
cmp -n $((128 * K)) "$STORE/a" "$T/user" ||
	fail "the user's file holds other bytes than its own and the 4 KiB written (the rest of block 1 zeroed?)"
grep -q "a: backing file removed from the store while served" "$T/daemon.log" ||
	fail "no line about a in the log: $(cat "$T/daemon.log")"
pass "a file on a's old inode number: not served through a's old map; a write changes only what it writes"
stop_daemon
