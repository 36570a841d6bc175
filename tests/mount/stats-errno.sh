#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-errno.sh - the errno a user expects in .stats: truncating a text
# stats file to 0 works (echo reset > does it) and to any other size fails
# with EPERM, by descriptor and by path; the JSON file gives EACCES;
# mkfifo and mknod in the mount give EPERM; rmdir .stats gives EPERM and
# .stats stays.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 truncate mkfifo

sidecar plain 1M 512n thin 64K
start_daemon
dd if=/dev/zero of="$MNT/plain" bs=4096 count=1 oflag=direct conv=notrunc status=none ||
	fail "plain: a write failed"

expect_errno "Operation not permitted" truncate -s 100 "$MNT/.stats/plain"
truncate -s 0 "$MNT/.stats/plain" || fail "truncate -s 0 of the text stats file failed"
expect_eq "$(stats_key plain writes)" 1 "plain: writes after truncate -s 0 of its stats file"
echo reset > "$MNT/.stats/plain" || fail "echo reset > .stats/plain failed"
expect_errno "Permission denied" truncate -s 0 "$MNT/.stats/plain.json"
python3 - "$MNT/.stats/plain" "$MNT/.stats/plain.json" <<'PY' || fail "truncate by path: see above"
import errno, os, sys
text, js = sys.argv[1], sys.argv[2]
def err(path, size):
    try:
        os.truncate(path, size)
        return 0
    except OSError as e:
        return e.errno
got = (err(text, 0), err(text, 100), err(js, 0), err(js, 100))
want = (0, errno.EPERM, errno.EACCES, errno.EACCES)
if got != want:
    sys.exit("truncate(2) of text to 0 and 100, of JSON to 0 and 100: errno %s, want %s" % (got, want))
PY
pass "truncate: text stats file to 0 works, to 100 is EPERM; the JSON file is EACCES"

expect_errno "Operation not permitted" mkfifo "$MNT/fifo"
if [ "$(id -u)" -eq 0 ]; then
	expect_errno "Operation not permitted" mknod "$MNT/blk" b 7 0
	expect_errno "Operation not permitted" mknod "$MNT/chr" c 1 3
fi
[ -e "$MNT/fifo" ] && fail "mkfifo left a file"
expect_errno "Operation not permitted" rmdir "$MNT/.stats"
[ -d "$MNT/.stats" ] || fail ".stats is gone after rmdir"
pass "mkfifo and mknod give EPERM; rmdir .stats gives EPERM and .stats stays"

stop_daemon
pass "daemon unmounted and exited 0"
