#!/bin/bash
# SPDX-License-Identifier: MIT
# into-mount.sh - putting data into the mount as into a file system: an
# image created through the mount grows with writes at its end until the
# handle that created it is closed, then it is a disk of fixed size.
#  - cp of a raw file with a hole at its end, dd of a raw file, qemu-img
#    convert into a new name and (without -n) into a declared image that
#    holds nothing, qemu-img create twice: sizes and bytes as the source's;
#  - the sidecar and the map say the size once closed, sectorfs-img check
#    is clean, the room grown ahead of the writes is given back;
#  - a write that is not whole sectors is refused (EINVAL, counted), a
#    write past the end of a closed image gets ENOSPC, a disk holding data
#    is not shrunk (qemu-img create over it fails);
#  - the format of a new image is chosen with setxattr before it holds
#    anything (user.sectorfs.sector, .provisioning, .block_size), EBUSY after;
#  - kill -9 while a creator is still writing: what it fsynced is there,
#    and the image is a clean disk of the size fsync made durable or more.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd cmp perl
requires_built "$SECTORFS_IMG"
M=$((1024 * 1024))

start_daemon -o sector=4kn,provisioning=zeroedthick,block_size=256K

# ---- cp and dd ----
head -c $((5 * M)) /dev/urandom > "$T/src"
truncate -s $((7 * M)) "$T/src"            # a hole at the end: cp sizes it with ftruncate
cp "$T/src" "$MNT/cp" || fail "cp into the mount failed"
cmp "$T/src" "$MNT/cp" || fail "cp: the image differs from the source"
[ "$(stat -c %s "$MNT/cp")" -eq $((7 * M)) ] || fail "cp: size $(stat -c %s "$MNT/cp")"
dd if="$T/src" of="$MNT/dd" bs=1M status=none || fail "dd into a new name failed"
cmp "$T/src" "$MNT/dd" || fail "dd: the image differs from the source"
for n in cp dd; do
	grep -q "\"size\": $((7 * M))," "$STORE/$n.json" || fail "$n.json: $(cat "$STORE/$n.json")"
	[ "$(stat -c %s "$STORE/$n")" -eq $((7 * M)) ] || fail "$n: backing file $(stat -c %s "$STORE/$n") bytes"
	blocks=$(stat -c %b "$STORE/$n")
	[ $((blocks * 512)) -le $((7 * M + 256 * 1024)) ] ||
		fail "$n: $((blocks * 512)) bytes reserved for a 7 MiB zeroedthick disk: the room ahead was kept"
done
pass "cp and dd into new names: the source's size and bytes, sidecar and reservation as the disk"

# ---- qemu-img ----
if command -v qemu-img >/dev/null 2>&1 && command -v qemu-io >/dev/null 2>&1; then
	qemu-img create -q -f qcow2 "$T/src.qcow2" 8M
	qemu-io -f qcow2 -c "write -P 0x5a 1M 1M" "$T/src.qcow2" >/dev/null
	qemu-img convert -O raw "$T/src.qcow2" "$MNT/q" || fail "qemu-img convert into a new name"
	qemu-img compare -q -f qcow2 -F raw -T none "$T/src.qcow2" "$MNT/q" || fail "compare q"
	printf '{ "size": "16M", "sector": "4kn" }\n' > "$STORE/d4.json"
	qemu-img convert -O raw "$T/src.qcow2" "$MNT/d4" || fail "qemu-img convert into a declared image (no -n)"
	qemu-img compare -q -f qcow2 -F raw -T none "$T/src.qcow2" "$MNT/d4" || fail "compare d4"
	grep -q "\"size\": $((8 * M))," "$STORE/d4.json" || fail "d4.json: $(cat "$STORE/d4.json")"
	qemu-img create -q -f raw "$MNT/n1" 1G || fail "qemu-img create"
	qemu-img create -q -f raw "$MNT/n1" 2G || fail "qemu-img create again over an image holding nothing"
	sleep 1.1
	[ "$(stat -c %s "$MNT/n1")" -eq $((2048 * M)) ] || fail "n1 is $(stat -c %s "$MNT/n1") bytes"
	dd if="$T/src" of="$MNT/n1" bs=1M count=1 seek=10 oflag=direct conv=notrunc status=none
	expect_errno "Could not resize file" qemu-img create -q -f raw "$MNT/n1" 1G
	sleep 1.1
	[ "$(stat -c %s "$MNT/n1")" -eq $((2048 * M)) ] || fail "a disk holding data shrank"
	pass "qemu-img convert (new and declared, no -n) and create twice; a disk holding data is not shrunk"
else
	echo "# SKIP qemu-img part: needs qemu-img and qemu-io (package qemu-utils)"
fi

# ---- the rules ----
head -c 1000 /dev/urandom > "$T/odd"
mis0=$(stats_key cp misaligned_rejected)
expect_errno "Invalid argument" cp "$T/odd" "$MNT/odd"
[ "$(stat -c %s "$MNT/odd")" -eq 0 ] || fail "odd: $(stat -c %s "$MNT/odd") bytes"
expect_errno "No space left on device" dd if="$T/src" of="$MNT/cp" bs=4096 count=1 seek=$((7 * 256)) \
	oflag=direct conv=notrunc status=none
[ "$(stats_key cp misaligned_rejected)" = "$mis0" ] || fail "counters of another image moved"
pass "a write of part of a sector is refused (EINVAL); past the end of a closed image, ENOSPC"

# ---- choosing the format ----
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

# ---- kill -9 while a creator writes ----
start_daemon -o sector=4kn
perl -MIO::Handle -e '
	open(my $f, ">", $ARGV[0]) or die "open: $!\n";
	open(my $s, "<", $ARGV[1]) or die "src: $!\n";
	binmode $f; binmode $s;
	my $buf;
	for (1 .. 48) { read($s, $buf, 65536) == 65536 or die "read\n"; syswrite($f, $buf) == 65536 or die "write: $!\n"; }
	$f->sync or die "fsync: $!\n";
	for (1 .. 16) { read($s, $buf, 65536); syswrite($f, $buf) == 65536 or die "write: $!\n"; }
	open(my $r, ">", $ARGV[2]); close($r);
	sleep 30;' "$MNT/k" "$T/src" "$T/written" &
WPID=$!
on_exit "kill $WPID"
for ((i = 0; i < 100; i++)); do [ -e "$T/written" ] && break; sleep 0.1; done
[ -e "$T/written" ] || fail "the writer did not get through"
kill9_daemon
kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null
"$SECTORFS_IMG" check "$STORE/k" > "$T/check.out" 2>&1 || true
start_daemon
size=$(stat -c %s "$MNT/k")
[ "$size" -ge $((3 * M)) ] || fail "k is $size bytes after kill -9: less than the 3 MiB fsync made durable"
cmp -n $((3 * M)) "$T/src" "$MNT/k" || fail "what was fsynced before kill -9 is not there"
stop_daemon
"$SECTORFS_IMG" check "$STORE/k" > "$T/check.out" 2>&1 || fail "check after kill -9: $(cat "$T/check.out")"
pass "kill -9 while a creator writes: the fsynced 3 MiB are there, the image ($size bytes) is clean"
