#!/bin/bash
# SPDX-License-Identifier: MIT
# setformat-busy.sh - a setxattr of an image's format that fails changes
# nothing: the image stays in the mount while its creator holds it.
#
# An image created through the mount takes a new format by setxattr
# user.sectorfs.sector while it holds nothing; the maps it replaces are
# kept until close, 4 of them, so the fifth is refused with EBUSY.  That
# fifth call used to save its sidecar and delete the map before it found
# the limit: the image left the mount while its creator held it open
# (stat ENOENT) and came back later in the refused format.  Now:
#  - the fifth setfattr fails with "Device or resource busy";
#  - stat by name and fstat of the creator's descriptor work, and say the
#    fourth format's sector (st_blksize 4096);
#  - the creator writes 8 KiB through its descriptor and closes: the
#    image is 8 KiB of 4kn with those bytes, also after a restart.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd setfattr getfattr cmp python3

start_daemon
exec 3>"$MNT/x" || fail "create x"
for f in 4kn 512e 512n 4kn; do
	setfattr -n user.sectorfs.sector -v "$f" "$MNT/x" || fail "setxattr sector $f"
done
expect_errno "Device or resource busy" setfattr -n user.sectorfs.sector -v 512e "$MNT/x"
stat "$MNT/x" >/dev/null || fail "stat x after the refused setxattr"
[ "$(stat_val %o "$MNT/x")" = 4096 ] || fail "x: st_blksize $(stat_val %o "$MNT/x") after the refused setxattr"
python3 -c 'import os; st = os.fstat(3); assert st.st_blksize == 4096, st.st_blksize' 3>&3 ||
	fail "fstat of the creator's descriptor after the refused setxattr"
[ "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/x")" = 4096 ] ||
	fail "x's logical sector is not the fourth format's"
pass "the fifth setxattr of the sector: EBUSY, and x stays in the mount as 4kn (stat, fstat)"

head -c 8192 /dev/urandom > "$T/data"
cat "$T/data" >&3 || fail "the creator cannot write after the refused setxattr"
exec 3>&-
[ "$(stat_val %s "$MNT/x")" = 8192 ] || fail "x is $(stat_val %s "$MNT/x") bytes after close"
cmp -s "$MNT/x" "$T/data" || fail "x does not read back what its creator wrote"
grep -q '"sector": "4kn"' "$STORE/x.json" || fail "x.json: $(cat "$STORE/x.json")"
restart_daemon
[ "$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/x")" = 4096 ] ||
	fail "x came back in another format after a restart"
cmp -s "$MNT/x" "$T/data" || fail "x does not read back after a restart"
stop_daemon
pass "the creator writes on and closes: 8 KiB of 4kn, also after a restart"
