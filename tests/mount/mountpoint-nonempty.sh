#!/bin/bash
# SPDX-License-Identifier: MIT
# mountpoint-nonempty.sh - -o nonempty mounts over a non-empty directory
# and over a mount point, and is taken by sectorfs, not handed to libfuse
# (which no longer knows it); at unmount the directory's own files, and
# the mount below, come back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K
echo hello > "$MNT2/note"

# -o nonempty: mounts over the directory's contents, which come back at unmount
bg_start "$T/start.err" -o nonempty "$STORE" "$MNT2"
[ $RC -eq 0 ] || fail "-o nonempty on a non-empty directory exited $RC: $(cat "$T/start.err")"
mountpoint -q "$MNT2" || fail "-o nonempty: $MNT2 not mounted"
[ -e "$MNT2/a" ] && [ ! -e "$MNT2/note" ] || fail "-o nonempty: $MNT2 does not show the store: $(ls "$MNT2")"
grep -q "unknown option" "$T/start.err" && fail "-o nonempty reached libfuse: $(cat "$T/start.err")"
stop_bg nonempty "$MNT2"
[ "$(cat "$MNT2/note")" = hello ] || fail "-o nonempty: the directory's own file is gone after unmount"
pass "-o nonempty mounts over a non-empty directory; its file is back after unmount"
rm "$MNT2/note"

# an empty-looking mount point: another sectorfs, of an empty store, without .stats
mount_store2

# -o nonempty stacks on it; unmounting the top one shows the one below again
bg_start "$T/start.err" -o nonempty "$STORE" "$MNT2"
[ $RC -eq 0 ] || fail "-o nonempty on a mount point exited $RC: $(cat "$T/start.err")"
[ -e "$MNT2/a" ] || fail "-o nonempty on a mount point: the store is not shown: $(ls -A "$MNT2")"
stop_bg stacked "$MNT2"
mountpoint -q "$MNT2" || fail "the mount below is gone"
kill -0 $D2 || fail "the daemon below died"
[ -z "$(ls -A "$MNT2")" ] || fail "after unmounting the top mount $MNT2 shows: $(ls -A "$MNT2")"
fusermount3 -u "$MNT2" || fail "fusermount3 -u $MNT2 (the second store) failed"
wait_gone $D2 10 || fail "the daemon of the second store still runs after unmount"
pass "-o nonempty stacks a mount on a mount point; unmounting it shows the one below"
