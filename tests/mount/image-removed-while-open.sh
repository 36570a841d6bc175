#!/bin/bash
# SPDX-License-Identifier: MIT
# image-removed-while-open.sh - an image removed from the store while it
# is served, with a descriptor open on it: the next directory listing no
# longer shows it and stat gives ENOENT (at the latest once the kernel's
# 1 s entry cache expired); the open descriptor still reads the old data
# and writes, and what it writes lands in no file of the store; the map is
# removed; the daemon logs a warning naming it; once the descriptor is
# closed the daemon holds no deleted file; the other image is untouched.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-verify.sh"
requires_cmd cmp

sidecar a 8M 4kn thin 64K
sidecar c 4M 512n thin 64K
serve_written a
exec 3<>"$MNT/a" 4<"$MNT/a"
log_mark
rm "$STORE/a" "$STORE/a.json"
ls "$MNT" > "$T/ls" || fail "ls $MNT failed after removing a from the store"
grep -qx a "$T/ls" && fail "ls $MNT still lists a after STORE/a and STORE/a.json were removed: $(tr '\n' ' ' < "$T/ls")"
grep -qx c "$T/ls" || fail "ls $MNT no longer lists c: $(tr '\n' ' ' < "$T/ls")"
for ((i = 0; i < 30; i++)); do
	err=$(stat "$MNT/a" 2>&1) && { sleep 0.1; continue; }
	break
done
case "$err" in
*"No such file or directory"*) ;;
*) fail "stat $MNT/a after a was removed from the store: expected ENOENT, got: $err" ;;
esac
echo "# stat MNT/a gave ENOENT after $((i * 100)) ms"
[ ! -e "$STORE/.sectorfs/a.map" ] || fail "STORE/.sectorfs/a.map still there after a was removed"
log_new | grep -i warn | grep -qE "(^|[ '\"/])a([:'\" ,]|$)" ||
	fail "no warning naming a in the daemon log; new lines: $(log_new)"
# the open descriptors: fd 3 writes MiB 0 (new data, fsynced) and reads MiB 1 (old);
# fd 4 reads MiB 0 (the write) -- each dd moves its descriptor's offset.
ls -A "$STORE" > "$T/store.before"
dd if="$T/src.d" bs=1M skip=4 count=1 oflag=direct conv=fsync status=none >&3 ||
	fail "write through the descriptor open on the removed a failed"
dd of="$T/got" bs=1M count=1 iflag=direct status=none <&3 ||
	fail "read through the descriptor open on the removed a failed"
cmp -s "$T/got" <(dd if="$T/src.d" bs=1M skip=1 count=1 status=none) ||
	fail "the descriptor open on the removed a does not read a's old data (MiB 1)"
dd of="$T/got" bs=1M count=1 iflag=direct status=none <&4 || fail "read through fd 4 on the removed a failed"
cmp -s "$T/got" <(dd if="$T/src.d" bs=1M skip=4 count=1 status=none) ||
	fail "the write through the descriptor on the removed a does not read back through another descriptor"
ls -A "$STORE" | diff "$T/store.before" - >/dev/null || fail "the store changed by writing to the removed a: $(ls -A "$STORE")"
exec 3>&- 4<&-
sleep 0.2
[ ! -e "$STORE/a" ] && [ ! -e "$STORE/a.json" ] && [ ! -e "$STORE/.sectorfs/a.map" ] ||
	fail "after closing the descriptors: $(ls -A "$STORE" "$STORE/.sectorfs" | tr '\n' ' ')"
deleted=$(ls -l "/proc/$DPID/fd" 2>/dev/null | grep -c '(deleted)')
[ "$deleted" -eq 0 ] ||
	not_ok "the daemon still holds $deleted deleted file(s) after the last descriptor on the removed a was closed: $(ls -l "/proc/$DPID/fd" | grep '(deleted)' | sed 's/.*-> //' | tr '\n' ' ')"
dd if="$MNT/c" of="$T/got" bs=1M iflag=direct status=none
cmp -s "$T/got" "$T/c.before" || fail "c changed when a was removed from the store"
pass "image a removed from the store: gone from ls and stat (ENOENT), the open descriptor reads old data and writes, the map is removed, a warning names it, c untouched"

stop_daemon
check_clean c "after the removal"
