#!/bin/bash
# SPDX-License-Identifier: MIT
# huge-sizes.sh - sizes past what an allocation map can hold are refused
# before any work, through every door: the sidecar, truncate, a write past
# the end of a growing image, sectorfs-img resize and create.
#
# The largest disk is 2^30 blocks of its block size (sectorfs.json(5)):
# 1024 TiB with the default 1 MiB blocks.  Sizes 0, 1, 2^62 and 2^63 - 1:
#  - a sidecar of 2^62 bytes (legal JSON) is refused at start with a
#    message naming the key; no map is written for it (one 512 GiB map
#    used to be written until the store's filesystem was full);
#  - truncate of an image made through the mount to 2^62 and 2^63 - 1:
#    "File too large" (EFBIG), 1: "Invalid argument", 0: the size it
#    has; the daemon keeps serving (2^62 killed it: a double free when the
#    bitmap's allocation failed);
#  - one 4 KiB O_DIRECT write at 2^62 - 1 MiB into a new image (dd):
#    EFBIG, the image stays empty;
#  - sectorfs-img resize to 2^62, 2^63 - 1 and +2^62: exit 1 naming the
#    maximum, nothing left behind (no NAME.grow; it used to crash and
#    leave one); create -s 2^62: exit 1, no file made;
#  - the daemon exits 0 at unmount, and serves the images again.
# The store is a 256 MiB tmpfs (the map of the largest disk takes 130
# MiB), so that a daemon that wrote a map past that
# would stop at a full store rather than at the machine's disk.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
[ -x "$SECTORFS_IMG" ] || fail "sectorfs-img not built: $SECTORFS_IMG"

timeout 20 mount -t tmpfs -o size=256M sfs-test "$STORE" || skip "cannot mount a tmpfs on $STORE"
on_exit unmount_store

P62=$((1 << 62))
MAX63=9223372036854775807
printf '{ "size": %s }\n' "$P62" > "$STORE/huge.json"
printf '{ "size": "1025T" }\n' > "$STORE/past.json"
printf '{ "size": "4T", "block_size": "4K" }\n' > "$STORE/edge.json"
READY_TIMEOUT=20 start_daemon
[ -e "$MNT/edge" ] || fail "the largest disk of 4 KiB blocks (4 TiB) is not served"
for n in huge past; do
	[ -e "$MNT/$n" ] && fail "$n: a sidecar past the largest size is served"
	[ -e "$STORE/.sectorfs/$n.map" ] && fail "$n: a map was written for a refused sidecar"
done
grep -q "huge.json: key 'size': $P62 is larger than the maximum 1024 TiB" "$T/daemon.log" ||
	fail "no message naming huge.json's key 'size' and the maximum"
grep -q "past.json: key 'size'" "$T/daemon.log" || fail "no message for past.json"
pass "sidecars of 2^62 and 1025T bytes refused at start naming the key, no map written; 4T of 4K blocks served"

# ---- truncate ----
: > "$MNT/img" || fail "create img"
[ "$(stat_val %s "$MNT/img")" = 0 ] || fail "img is not empty"
truncate -s 0 "$MNT/img" || fail "truncate -s 0 of an empty image failed"
expect_errno "Invalid argument" truncate -s 1 "$MNT/img"
expect_errno "File too large" truncate -s "$P62" "$MNT/img"
expect_errno "File too large" truncate -s "$MAX63" "$MNT/img"
kill -0 "$DPID" 2>/dev/null || fail "the daemon died at a truncate to 2^62"
[ "$(stat_val %s "$MNT/img")" = 0 ] || fail "img's size changed: $(stat_val %s "$MNT/img")"
[ -e "$STORE/.sectorfs/img.grow" ] && fail "a refused truncate left img.grow"
truncate -s 1M "$MNT/img" || fail "truncate -s 1M after the refusals failed"
pass "truncate to 0, 1, 2^62, 2^63-1: kept, EINVAL, EFBIG, EFBIG; the daemon serves on"

# ---- a write past the end of a growing image ----
LC_ALL=C dd if=/dev/zero of="$MNT/new" bs=4k count=1 seek=$(((P62 - (1 << 20)) / 4096)) \
	oflag=direct conv=notrunc status=none 2>"$T/dd.err" && fail "a write at 2^62 - 1 MiB into a new image worked"
grep -q "File too large" "$T/dd.err" || fail "a write at 2^62 - 1 MiB: $(cat "$T/dd.err")"
kill -0 "$DPID" 2>/dev/null || fail "the daemon died at a write at 2^62 - 1 MiB"
[ "$(stat_val %s "$MNT/new")" = 0 ] || fail "new: size $(stat_val %s "$MNT/new") after a refused write, expected 0"
pass "a 4 KiB O_DIRECT write at 2^62 - 1 MiB into a new image: EFBIG, nothing written"

stop_daemon

# ---- the tools ----
for sz in "$P62" "$MAX63" "+$P62"; do
	out=$("$SECTORFS_IMG" resize "$STORE/img" "$sz" 2>&1) && fail "resize to $sz succeeded: $out"
	case "$out" in *"larger than the maximum 1024 TiB"*) ;; *) fail "resize to $sz: $out" ;; esac
done
[ -e "$STORE/.sectorfs/img.grow" ] && fail "a refused resize left img.grow"
out=$("$SECTORFS_IMG" create -s "$P62" "$STORE/big" 2>&1) && fail "create -s 2^62 succeeded: $out"
case "$out" in *"key 'size'"*"maximum"*) ;; *) fail "create -s 2^62: $out" ;; esac
[ -e "$STORE/big" ] || [ -e "$STORE/big.json" ] || [ -e "$STORE/.sectorfs/big.map" ] &&
	fail "a refused create left a file"
"$SECTORFS_IMG" check "$STORE/img" >/dev/null || fail "check img after the refusals: $("$SECTORFS_IMG" check "$STORE/img" 2>&1)"
pass "sectorfs-img resize to 2^62, 2^63-1, +2^62 and create -s 2^62 refused naming the maximum, nothing left"

start_daemon
[ "$(stat_val %s "$MNT/img")" = 1048576 ] || fail "img after a restart: $(stat_val %s "$MNT/img")"
[ "$(stat_val %s "$MNT/new")" = 0 ] || fail "new after a restart: $(stat_val %s "$MNT/new")"
stop_daemon
pass "the daemon exits 0 and serves both images again"
