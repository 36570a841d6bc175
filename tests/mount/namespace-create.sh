#!/bin/bash
# SPDX-License-Identifier: MIT
# namespace-create.sh - creating a file in the mount makes an image with
# the mount's defaults (-o sector=4kn,provisioning=thin,block_size=64K),
# size 0, a sidecar saying so and a map (": >" and touch alike); names
# starting with '.' or ending in '.json' are refused, to create and to
# rename to; ls shows only images, ls -a adds .stats, sidecars and
# .sectorfs never show; all of it the same after unmount + remount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-namespace.sh"
requires_fuse

start_daemon "${OPTS[@]}"

# ---- create ----
: > "$MNT/disk" || fail "creating $MNT/disk failed"
expect_eq "$(stat -c %s "$MNT/disk")" 0 "size of a new image"
three_files disk present
sc="$STORE/disk.json"
expect_eq "$(json_num "$sc" size)" 0 "new sidecar size"
expect_eq "$(json_str "$sc" sector)" 4kn "new sidecar sector"
expect_eq "$(json_str "$sc" provisioning)" thin "new sidecar provisioning"
expect_eq "$(json_num "$sc" block_size)" $BS "new sidecar block_size"
expect_eq "$(stat -c %o "$MNT/disk")" 4096 "st_blksize of the new 4kn image"
if command -v getfattr >/dev/null 2>&1; then
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/disk")" 4096 "xattr logical_sector_size"
	expect_eq "$(getfattr --absolute-names --only-values -n user.sectorfs.provisioning "$MNT/disk")" thin "xattr provisioning"
fi
pass "': > MNT/disk' makes a size-0 4kn thin 64K image, its sidecar and its map"
touch "$MNT/other" || fail "touch $MNT/other failed"
three_files other present
pass "touch creates an image too"

# ---- refused names ----
for bad in .hidden x.json; do
	expect_errno "Operation not permitted" touch "$MNT/$bad"
	[ ! -e "$STORE/$bad" ] || fail "refused name $bad left $STORE/$bad"
done
expect_errno "Operation not permitted" mv "$MNT/other" "$MNT/y.json"
expect_errno "Operation not permitted" mv "$MNT/other" "$MNT/.y"
three_files other present
pass "names starting with '.' or ending in '.json' are refused (create and rename)"

check_listing "disk other"
pass "ls shows only images; ls -a adds .stats; no sidecars or .sectorfs"

stop_daemon
start_daemon "${OPTS[@]}"
check_listing "disk other"
three_files disk present
three_files other present
pass "names and sidecars survive unmount + remount"
stop_daemon
pass "daemon exits 0 after unmount"
