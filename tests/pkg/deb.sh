#!/bin/bash
# SPDX-License-Identifier: MIT
# deb.sh - the Debian package, built from the tree and used as a user would.
#
#   tests/pkg/deb.sh            (.ci/run runs it after the suite; as root)
#
# Builds sectorfs_VERSION_ARCH.deb with dpkg-buildpackage -us -uc -b in a
# copy of the tree (the files git tracks, as they are now), checks what it
# holds (the binaries in /usr/bin, man pages, sample sidecars in
# /usr/share/sectorfs, the systemd unit naming /usr/bin/sectorfs, the
# bash completions), runs lintian on it (no errors allowed; warnings and
# info tags are printed), installs it with dpkg -i (apt-get
# -f install for its dependencies), mounts a store through an fstab line
# of type fuse.sectorfs as mount(8) reads it (so mount.fuse3 finds the
# installed daemon in /usr/bin), writes and reads a disk, unmounts,
# verifies the installed unit with systemd-analyze and the installed
# completion in bash, removes the package with dpkg -r and checks that
# none of its files is left.  Skips (77) when not root, without
# dpkg-buildpackage, lintian, /dev/fuse or git, or when a sectorfs package is
# installed already (it is not ours to remove).
. "$(dirname "$0")/../mount/lib.sh"
requires_root
command -v dpkg-buildpackage >/dev/null 2>&1 || skip "needs dpkg-buildpackage (apt-get install dpkg-dev debhelper)"
command -v lintian >/dev/null 2>&1 || skip "needs lintian (apt-get install lintian)"
requires_cmd git dpkg dpkg-deb mount umount
requires_gnu_dd
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ -x /sbin/mount.fuse3 ] || [ -x /usr/sbin/mount.fuse3 ] || skip "needs mount.fuse3 (package fuse3)"
git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$top_srcdir is not a git work tree"
if dpkg-query -W -f='${Status}' sectorfs 2>/dev/null | grep -q "installed"; then
	skip "a sectorfs package is installed already; not replacing it"
fi

# ---- build, in a copy of the tree ----

SRC="$T/src/sectorfs"
mkdir -p "$SRC"
(cd "$top_srcdir" && git ls-files -z | tar --null -T - -cf -) | tar -C "$SRC" -xf - || fail "cannot copy the tree"
version=$(sed -n 's/^AC_INIT(\[sectorfs\], \[\([^]]*\)\].*/\1/p' "$SRC/configure.ac")
dversion=$(cd "$SRC" && dpkg-parsechangelog -S Version)
[ "$dversion" = "$version" ] || fail "debian/changelog says $dversion, configure.ac $version"
arch=$(dpkg --print-architecture)
DEB="$T/src/sectorfs_${version}_${arch}.deb"
t0=$(date +%s)
if ! (cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) > "$T/build.log" 2>&1; then
	tail -n 40 "$T/build.log" >&2
	fail "dpkg-buildpackage failed"
fi
[ -f "$DEB" ] || fail "no $DEB after the build: $(ls "$T/src")"
pass "dpkg-buildpackage: $(basename "$DEB"), $(stat -c %s "$DEB") bytes, in $(( $(date +%s) - t0 )) s"

dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | sort > "$T/contents"
for f in /usr/bin/sectorfs /usr/bin/sectorfs-img /usr/bin/sectorfs-stat /usr/bin/sectorfs-bench \
	/usr/share/man/man1/sectorfs.1.gz /usr/share/man/man1/sectorfs-img.1.gz /usr/share/man/man1/sectorfs-stat.1.gz \
	/usr/share/man/man1/sectorfs-bench.1.gz /usr/share/man/man5/sectorfs.json.5.gz \
	/usr/share/man/man5/sectorfs.stats.5.gz \
	/usr/share/sectorfs/boot.json /usr/share/sectorfs/data.json /usr/share/sectorfs/redo.json \
	/usr/share/sectorfs/example.conf /lib/systemd/system/sectorfs@.service \
	/usr/share/bash-completion/completions/sectorfs /usr/share/bash-completion/completions/sectorfs-img \
	/usr/share/bash-completion/completions/sectorfs-stat /usr/share/bash-completion/completions/sectorfs-bench \
	/usr/share/doc/sectorfs/copyright; do
	grep -qxF "$f" "$T/contents" || fail "the package has no $f"
done
dpkg-deb --fsys-tarfile "$DEB" | tar -xOf - ./lib/systemd/system/sectorfs@.service > "$T/unit"
grep -q '^ExecStart=/usr/bin/sectorfs ' "$T/unit" || fail "the packaged unit does not start /usr/bin/sectorfs"
dpkg-deb -f "$DEB" Depends | grep -q 'fuse3' || fail "the package does not depend on fuse3"
pass "the package holds the binaries, man pages, samples, unit and completions"

lintian -I --pedantic --tag-display-limit 0 "$DEB" 2>&1 | grep -v "running with root privileges" > "$T/lintian"
lrc=${PIPESTATUS[0]}   # 1: tags of the fail-on level (errors) found, more: lintian itself failed
[ "$lrc" -le 1 ] || { cat "$T/lintian" >&2; fail "lintian did not run (exit $lrc)"; }
sed 's/^/  lintian: /' "$T/lintian"
grep -q '^E: ' "$T/lintian" && fail "lintian reports errors"
pass "lintian: no errors ($(grep -c "^W: " "$T/lintian") warnings, $(grep -c "^[IP]: " "$T/lintian") info and pedantic tags)"

# ---- install, use, remove ----

on_exit "dpkg -P sectorfs"
if ! dpkg -i "$DEB" > "$T/install.log" 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq >> "$T/install.log" 2>&1 ||
		{ cat "$T/install.log" >&2; fail "dpkg -i and apt-get -f install failed"; }
fi
dpkg-query -W -f='${Status}' sectorfs | grep -qx "install ok installed" || fail "not installed: $(cat "$T/install.log")"
[ "$(/usr/bin/sectorfs --version | head -n1 | cut -d' ' -f2)" = "$version" ] || fail "/usr/bin/sectorfs --version"
pass "dpkg -i: installed"

sidecar disk 8M 4kn thin 64K
printf '%s %s fuse.sectorfs allow_other,pidfile=%s 0 0\n' "$STORE" "$MNT" "$T/pid" > "$T/fstab"
mount -T "$T/fstab" "$MNT" 2>>"$T/daemon.log" || fail "mount -T fstab (fuse.sectorfs) failed"
[ -s "$T/pid" ] || fail "mount returned without the pid file"
pid=$(cat "$T/pid")
on_exit "kill $pid"
[ "$(readlink "/proc/$pid/exe")" = /usr/bin/sectorfs ] || fail "the mount is served by $(readlink "/proc/$pid/exe")"
grep -q "^sectorfs:$STORE $MNT fuse.sectorfs " /proc/mounts || fail "not a fuse.sectorfs mount"
head -c 8192 /dev/urandom > "$T/blk"
dd if="$T/blk" of="$MNT/disk" bs=4096 oflag=direct conv=notrunc status=none || fail "write"
cmp -s "$T/blk" <(dd if="$MNT/disk" bs=4096 count=2 iflag=direct status=none) || fail "read back"
expect_errno "Invalid argument" dd if="$T/blk" of="$MNT/disk" bs=512 count=1 oflag=direct conv=notrunc status=none
/usr/bin/sectorfs-stat "$MNT" disk | grep -q '^disk ' || fail "the installed sectorfs-stat"
umount "$MNT" || fail "umount failed"
wait_gone "$pid" 10 || fail "daemon $pid still running 10 s after umount"
/usr/bin/sectorfs-img check "$STORE/disk" > /dev/null || fail "the installed sectorfs-img: check not clean"
pass "an fstab line of type fuse.sectorfs mounts with the installed daemon; umount ends it"

if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/units"
	cp /lib/systemd/system/sectorfs@.service "$T/units/sectorfs@pkgtest.service"
	systemd-analyze verify "$T/units/sectorfs@pkgtest.service" > "$T/verify" 2>&1 || { cat "$T/verify" >&2; fail "verify"; }
	grep "sectorfs@" "$T/verify" && fail "systemd-analyze verify has something to say about the installed unit"
	pass "systemd-analyze verify: the installed unit is clean"
fi
got=$(bash -c '. /usr/share/bash-completion/completions/sectorfs-img
	COMP_WORDS=(sectorfs-img c); COMP_CWORD=1; _sectorfs_img 2>/dev/null; echo "${COMPREPLY[*]}"')
[ "$got" = "create check" ] || [ "$got" = "check create" ] || fail "installed completion: sectorfs-img c<TAB> gives '$got'"
pass "the installed completion: sectorfs-img c<TAB> gives check and create"

dpkg -r sectorfs > "$T/remove.log" 2>&1 || { cat "$T/remove.log" >&2; fail "dpkg -r failed"; }
dpkg-query -W -f='${Status}' sectorfs 2>/dev/null | grep -q "ok installed" && fail "still installed after dpkg -r"
left=0
while IFS= read -r f; do
	[ -z "$f" ] || [ -d "$f" ] && continue       # directories are shared (/usr/bin, /usr/share/man, ...)
	if [ -e "$f" ] || [ -L "$f" ]; then
		echo "left after dpkg -r: $f" >&2
		left=$((left + 1))
	fi
done < "$T/contents"
[ -d /usr/share/sectorfs ] && { echo "left after dpkg -r: /usr/share/sectorfs/" >&2; left=$((left + 1)); }
[ $left -eq 0 ] || fail "$left files of the package left after dpkg -r"
dpkg -P sectorfs > /dev/null 2>&1
pass "dpkg -r: removed, none of its files left"
