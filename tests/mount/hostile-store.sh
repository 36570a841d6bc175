#!/bin/bash
# SPDX-License-Identifier: MIT
# hostile-store.sh - the store is not a way out.  Backing files that are
# symbolic links (to /etc/passwd and to a file outside the store), hard
# links, FIFOs or directories, a 1 GiB sidecar, a state directory that is
# a symbolic link, and names with "/" or ".." are refused with a message
# naming what was wrong; nothing outside the store is read or written, and
# the good images of the same store are still served.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_gnu_dd

OUTSIDE="$T/outside"
head -c 65536 /dev/urandom > "$OUTSIDE"
cp "$OUTSIDE" "$T/outside.orig"
sum_passwd=$(sha256sum /etc/passwd)

sidecar good 4M 4kn thin 64K
sidecar passwd 4M 512n thin
ln -s /etc/passwd "$STORE/passwd"
sidecar escape 64K 512n thin
ln -s "$OUTSIDE" "$STORE/escape"
sidecar hard 64K 512n thin
ln "$OUTSIDE" "$STORE/hard"
sidecar fifo 4M 512n thin
mkfifo "$STORE/fifo"
sidecar dir 4M 512n thin
mkdir "$STORE/dir"
truncate -s 1G "$STORE/huge.json"

start_daemon
ls "$MNT" > "$T/ls"
[ "$(cat "$T/ls")" = "good" ] || fail "only 'good' should be served; got: $(tr '\n' ' ' < "$T/ls")"
pass "only the good image is served"

expect_log() {
	grep -q "$1" "$T/daemon.log" || fail "no log line matching '$1'; log: $(cat "$T/daemon.log")"
}
expect_log "passwd: backing file is a symbolic link; refused"
expect_log "escape: backing file is a symbolic link; refused"
expect_log "hard: backing file is hard-linked elsewhere; refused"
expect_log "fifo: backing file is not a regular file; refused"
expect_log "dir: backing file is not a regular file; refused"
expect_log "huge.json: .*larger than 64 KiB"
pass "each refusal is logged naming the file and the reason"

for n in passwd escape hard fifo dir huge; do
	[ -e "$MNT/$n" ] && fail "$n is reachable through the mount"
done
[ "$(sha256sum /etc/passwd)" = "$sum_passwd" ] || fail "/etc/passwd changed"
cmp -s "$OUTSIDE" "$T/outside.orig" || fail "the file outside the store changed"
[ -L "$STORE/passwd" ] && [ -L "$STORE/escape" ] && [ -p "$STORE/fifo" ] || fail "a refused file was replaced"
pass "nothing outside the store was touched; the planted files are left as they were"

# Names: the kernel resolves "/" and ".." before the daemon sees a name;
# sidecar-like and hidden names are refused when created through the mount.
expect_errno "Operation not permitted" touch "$MNT/.hidden"
expect_errno "Operation not permitted" touch "$MNT/x.json"
expect_errno "No such file or directory" touch "$MNT/no/such"
[ ! -e "$STORE/.hidden" ] && [ ! -e "$STORE/x.json.json" ] || fail "a refused name reached the store"
pass "hidden and .json names refused, a name with '/' is not a file of the store"

head -c 4096 /dev/urandom > "$T/blk"
dd if="$T/blk" of="$MNT/good" bs=4096 seek=1 oflag=direct conv=notrunc status=none || fail "write to good"
cmp -s "$T/blk" <(dd if="$MNT/good" bs=4096 skip=1 count=1 iflag=direct status=none) || fail "read back good"
pass "the good image works beside the refused ones"
stop_daemon

# A state directory that is a symbolic link is refused: the daemon's own
# files must not be redirected elsewhere.
mkdir "$T/elsewhere"
mv "$STORE/.sectorfs" "$T/sectorfs.real"
ln -s "$T/elsewhere" "$STORE/.sectorfs"
if "$SECTORFS" -f "$STORE" "$MNT" 2>"$T/err"; then
	fail "the daemon accepted a store whose .sectorfs is a symbolic link"
fi
grep -q "\.sectorfs.*cannot open state directory" "$T/err" || fail "unclear message: $(cat "$T/err")"
mountpoint -q "$MNT" && fail "mounted anyway"
[ -z "$(ls -A "$T/elsewhere")" ] || fail "files were written through the symbolic link"
pass "a .sectorfs symbolic link is refused with a message, nothing written through it"
