#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount-format.sh - the format of a new image is chosen with setxattr
# before it holds anything (user.sectorfs.sector, .provisioning,
# .block_size; a bad value EINVAL, a geometry key EPERM), EBUSY after; the
# image is served and declared in that format, with its data.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp setfattr getfattr
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

start_daemon -o sector=4kn,provisioning=zeroedthick,block_size=256K

head -c $((5 * M)) /dev/urandom > "$T/src"
exec 3>"$MNT/fmt"
setfattr -n user.sectorfs.sector -v 512e "$MNT/fmt" || fail "setxattr sector on an empty new image"
setfattr -n user.sectorfs.provisioning -v thin "$MNT/fmt" || fail "setxattr provisioning"
setfattr -n user.sectorfs.block_size -v 64K "$MNT/fmt" || fail "setxattr block_size"
expect_errno "Invalid argument" setfattr -n user.sectorfs.sector -v 513x "$MNT/fmt"
expect_errno "Operation not permitted" setfattr -n user.sectorfs.logical_sector_size -v 4096 "$MNT/fmt"
head -c $((2 * M)) "$T/src" >&3
expect_errno "Device or resource busy" setfattr -n user.sectorfs.sector -v 4kn "$MNT/fmt"
exec 3>&-
[ "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/fmt")" = 512 ] &&
[ "$(getfattr --absolute-names --only-values -n user.sectorfs.physical_sector_size "$MNT/fmt")" = 4096 ] &&
[ "$(getfattr --absolute-names --only-values -n user.sectorfs.block_size "$MNT/fmt")" = 65536 ] ||
	fail "the format chosen is not the one served"
grep -q '"sector": "512e"' "$STORE/fmt.json" && grep -q '"provisioning": "thin"' "$STORE/fmt.json" ||
	fail "fmt.json: $(cat "$STORE/fmt.json")"
cmp -n $((2 * M)) "$T/src" "$MNT/fmt" || fail "fmt's data"
pass "setxattr chooses sector format, provisioning and block size before data, EBUSY after"
stop_daemon
"$SECTORFS_IMG" check "$STORE" > "$T/check.out" 2>&1 || fail "check after the copies: $(cat "$T/check.out")"
