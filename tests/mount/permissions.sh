#!/bin/bash
# SPDX-License-Identifier: MIT
# permissions.sh - with -o allow_other the kernel enforces each image's
# owner and mode for other users (default_permissions, on by default), and
# chmod and chown through the mount act on the backing file; without
# allow_other, other users cannot get into the mount at all (sectorfs(1):
# THE MOUNT, "owner, mode and times are the backing file's, and chmod(1),
# chown(1) and touch(1) act on it", and -o nodefault_permissions).
#
# As an unprivileged user (nobody, or sfs-test-user created for the test
# and removed at exit), run through setpriv (or runuser), GNU dd with
# O_DIRECT, on a 4kn thin image owned by root, mode 0644, in a mount
# started by root with -o allow_other:
#  - the mount carries default_permissions and allow_other;
#  - the user can stat and read the image (what root wrote) and read the
#    stats; cannot write it, truncate it, chmod it, reset its stats,
#    create, unlink or rename in the mount (Permission denied / Operation
#    not permitted), and nothing changes;
#  - after root's chmod 0666 through the mount (the backing file becomes
#    0666 too) the user can write, and root reads back what they wrote;
#  - after root's chown to the user through the mount (the backing file
#    changes owner), the user can chmod the image to 0600;
#  - owner and mode survive a daemon restart;
#  - restarted without allow_other: the user cannot stat the mount point,
#    stat or read the image (Permission denied), while root still can.
# Skipped (exit 77) when there is no way to run as another user.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_root
requires_gnu_dd
requires_cmd cmp stat

# The user: nobody if it exists, else one made for the test.
TUSER=
if id -u nobody >/dev/null 2>&1 && [ "$(id -u nobody)" -ne 0 ]; then
	TUSER=nobody
elif command -v useradd >/dev/null 2>&1 && command -v userdel >/dev/null 2>&1; then
	if ! id -u sfs-test-user >/dev/null 2>&1; then
		useradd -M -r -s /usr/sbin/nologin sfs-test-user >/dev/null 2>&1 ||
			skip "no unprivileged user (no nobody) and useradd sfs-test-user failed"
		on_exit "userdel sfs-test-user"
	fi
	TUSER=sfs-test-user
else
	skip "no unprivileged user (no nobody) and no useradd"
fi
TUID=$(id -u "$TUSER")
TGID=$(id -g "$TUSER")
if command -v setpriv >/dev/null 2>&1; then
	AS=(setpriv --reuid="$TUID" --regid="$TGID" --clear-groups --)
elif command -v runuser >/dev/null 2>&1; then
	AS=(runuser -u "$TUSER" --)
else
	skip "neither setpriv nor runuser to run commands as $TUSER"
fi
[ "$("${AS[@]}" id -u 2>/dev/null)" = "$TUID" ] || skip "cannot run commands as $TUSER with ${AS[*]}"

# The user must be able to reach the mount point.
chmod 0755 "$T" "$MNT" "$STORE"
# as CMD...: run as the test user.
as() { "${AS[@]}" "$@"; }
# as_fails TEXT CMD...: CMD run as the test user must fail saying TEXT.
as_fails() { local t=$1; shift; expect_errno "$t" "${AS[@]}" "$@"; }

head -c 16384 /dev/urandom > "$T/root.data"
head -c 8192 /dev/urandom > "$T/user.data"
chmod 0644 "$T/root.data" "$T/user.data"
IMG="$MNT/disk"

sidecar disk 8M 4kn thin 1M
start_daemon -o allow_other
grep " $MNT fuse" /proc/mounts | grep -q default_permissions ||
	fail "mount options lack default_permissions: $(grep " $MNT " /proc/mounts)"
grep " $MNT fuse" /proc/mounts | grep -q allow_other || fail "mount options lack allow_other: $(grep " $MNT " /proc/mounts)"
dd if="$T/root.data" of="$IMG" bs=4096 oflag=direct conv=notrunc,fsync status=none || fail "root cannot write $IMG"
chmod 0644 "$IMG" || fail "chmod 0644 $IMG failed"
chown root:root "$IMG" || fail "chown root:root $IMG failed"
[ "$(stat -c '%a %u' "$IMG")" = "644 0" ] || fail "image is $(stat -c '%a %u' "$IMG"), wanted 644 0"
pass "mount with default_permissions,allow_other; image root-owned, mode 0644"

# ---- read-only for the user ----
as stat "$IMG" >/dev/null 2>&1 || fail "$TUSER cannot stat $IMG: $(as stat "$IMG" 2>&1)"
as dd if="$IMG" bs=4096 count=4 iflag=direct status=none > "$T/read.data" ||
	fail "$TUSER cannot read $IMG with O_DIRECT"
cmp -s "$T/read.data" "$T/root.data" || fail "$TUSER read something else than root wrote"
as cat "$MNT/.stats/disk.json" > /dev/null || fail "$TUSER cannot read $MNT/.stats/disk.json"
pass "$TUSER can stat the image, read it with O_DIRECT (16 KiB, as root wrote them) and read its stats"

as_fails "Permission denied" dd if="$T/user.data" of="$IMG" bs=4096 oflag=direct conv=notrunc status=none
as_fails "Permission denied" truncate -s 16M "$IMG"
as_fails "Operation not permitted" chmod 0666 "$IMG"
as_fails "Permission denied" sh -c "echo reset > '$MNT/.stats/disk'"
dd if="$IMG" bs=4096 count=4 iflag=direct status=none | cmp -s - "$T/root.data" || fail "the image changed after $TUSER's refused writes"
[ "$(stat -c '%s %a' "$IMG")" = "8388608 644" ] || fail "the image is now $(stat -c '%s %a' "$IMG"), expected 8388608 644"
pass "$TUSER cannot write (O_DIRECT dd), truncate, chmod the image or reset its stats; it is unchanged"

as_fails "Permission denied" touch "$MNT/new"
as_fails "Permission denied" unlink "$IMG"
as_fails "Permission denied" mv "$IMG" "$MNT/disk2"
[ "$(ls "$MNT")" = disk ] || fail "the mount now holds: $(ls "$MNT")"
[ -e "$STORE/disk" ] && [ -e "$STORE/disk.json" ] && [ ! -e "$STORE/new" ] && [ ! -e "$STORE/disk2.json" ] ||
	fail "the store changed: $(ls -A "$STORE")"
pass "$TUSER cannot create, unlink or rename in the mount; store unchanged"

# ---- chmod 0666 through the mount: the user can write ----
chmod 0666 "$IMG" || fail "root: chmod 0666 $IMG failed"
[ "$(stat -c %a "$STORE/disk")" = 666 ] || fail "chmod through the mount: backing file is $(stat -c %a "$STORE/disk"), expected 666"
as dd if="$T/user.data" of="$IMG" bs=4096 seek=2 oflag=direct conv=notrunc status=none 2>"$T/dd.err" ||
	fail "$TUSER cannot write $IMG after chmod 0666: $(cat "$T/dd.err")"
dd if="$IMG" bs=4096 skip=2 count=2 iflag=direct status=none | cmp -s - "$T/user.data" ||
	fail "root does not read back what $TUSER wrote"
dd if="$IMG" bs=4096 count=2 iflag=direct status=none | cmp -s - <(head -c 8192 "$T/root.data") ||
	fail "$TUSER's write at 8K changed the first 8K"
pass "after chmod 0666 through the mount (backing file 0666 too) $TUSER writes with O_DIRECT; root reads it back"

# ---- chown to the user through the mount: the user can chmod ----
chown "$TUID:$TGID" "$IMG" || fail "root: chown $TUID:$TGID $IMG failed"
[ "$(stat -c '%u:%g' "$STORE/disk")" = "$TUID:$TGID" ] ||
	fail "chown through the mount: backing file owned by $(stat -c '%u:%g' "$STORE/disk"), expected $TUID:$TGID"
as chmod 0600 "$IMG" 2>"$T/chmod.err" || fail "$TUSER cannot chmod the image it now owns: $(cat "$T/chmod.err")"
[ "$(stat -c %a "$IMG")" = 600 ] || fail "mode after $TUSER's chmod 0600 is $(stat -c %a "$IMG")"
pass "after chown to $TUSER through the mount (backing file too), $TUSER can chmod the image 0600"

stop_daemon
start_daemon -o allow_other
[ "$(stat -c '%a %u:%g' "$IMG")" = "600 $TUID:$TGID" ] ||
	fail "after a restart the image is $(stat -c '%a %u:%g' "$IMG"), expected 600 $TUID:$TGID"
as dd if="$IMG" bs=4096 skip=2 count=2 iflag=direct status=none | cmp -s - "$T/user.data" ||
	fail "after a restart $TUSER cannot read back its data"
chown 0:0 "$IMG" && chmod 0644 "$IMG" || fail "root: chown/chmod back failed"
pass "owner and mode survive a daemon restart"
stop_daemon

# ---- without allow_other: other users are kept out of the mount ----
start_daemon
grep " $MNT fuse" /proc/mounts | grep -q allow_other && fail "allow_other without asking for it"
as_fails "Permission denied" stat "$MNT"
as_fails "Permission denied" stat "$IMG"
as_fails "Permission denied" dd if="$IMG" of=/dev/null bs=4096 count=1 iflag=direct status=none
as_fails "Permission denied" cat "$MNT/.stats/disk.json"
stat "$IMG" >/dev/null || fail "root cannot stat $IMG without allow_other"
dd if="$IMG" bs=4096 count=2 iflag=direct status=none | cmp -s - <(head -c 8192 "$T/root.data") ||
	fail "root cannot read $IMG without allow_other"
stop_daemon
pass "without allow_other $TUSER cannot stat the mount point or the image, nor read it; root can"
