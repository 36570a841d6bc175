#!/bin/bash
# SPDX-License-Identifier: MIT
# vm.sh - the "real client" test: a QEMU guest (Debian's kernel, a busybox
# initramfs built here) gets sectorfs images as disks and checks what a
# real block driver sees of them.
#
# Six images are served: a 512n, a 512e and a 4kn one attached as
# virtio-blk, and another three attached as NVMe (an image is attached
# only once).  QEMU opens them through the mount with cache=none, so
# every guest I/O reaches the daemon as an O_DIRECT pread/pwrite on
# MNT/NAME.  Each device gets logical_block_size/physical_block_size from
# the image's xattrs.  In the guest, /init prints, for each disk, the
# geometry the driver reports (/sys/block/DEV/queue/*_block_size, size),
# writes a 64 KiB pattern with GNU dd oflag=direct across an allocation
# block boundary, reads it back with iflag=direct, and tries a 512-byte
# O_DIRECT write and read at a 512-aligned, not 4096-aligned, offset
# (must fail on 4kn, work on 512n/512e), writes the disk's last 64 KiB and
# takes the md5 of the whole disk.  The host then checks the geometry, the
# bytes in the images through the mount, and their md5 against the guest's
# (again after a remount), and the daemon's stats (the 512e write was a
# read-modify-write; the guest's flushes arrived).
# NVMe under QEMU 7.2 cannot show a 512e disk's 4096-byte physical sector
# (see the note at the geometry check): there physical = logical is taken.
#
# Needs root, /dev/fuse, qemu-system-x86_64 and, the first time, apt-get
# download (a linux-image-*-amd64 and busybox-static package, unpacked
# only).  Kernel, modules, busybox and the initramfs are cached in
# ${SECTORFS_VM_CACHE:-/var/cache/sectorfs-test-vm}; a run with a full
# cache downloads nothing.  KVM is used when it works, else TCG
# (SECTORFS_VM_ACCEL=kvm|tcg forces one).  SECTORFS_VM_TIMEOUT bounds the
# guest run (seconds, default 180; TCG needs about 45).
. "$(dirname "$0")/../mount/lib.sh"

requires_root
requires_fuse
requires_gnu_dd
requires_cmd qemu-system-x86_64 timeout getfattr gzip sha256sum flock cmp ldd

CACHE=${SECTORFS_VM_CACHE:-/var/cache/sectorfs-test-vm}
QEMU_TIMEOUT=${SECTORFS_VM_TIMEOUT:-180}
SIZE=16M
SIZE_BYTES=$((16 * 1024 * 1024))
# The pattern: 64 KiB from 1 MiB - 8 KiB, so it spans two 1 MiB
# allocation blocks (4096-aligned: valid on every format).
OFF=$((1024 * 1024 - 8192))
LEN=65536
# The 512-byte I/O: 512-aligned but not 4096-aligned, inside one physical
# sector of a 512e disk (a read-modify-write there), invalid on 4kn.
OFF2=$((2 * 1024 * 1024 + 512))
# Guest modules wanted (their dependencies are found from the .ko files).
WANT_MODS="virtio_pci virtio_blk nvme"

t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
note() { echo "# [$(elapsed)s] $*"; }

# ---------------------------------------------------------------- cache

mkdir -p "$CACHE" || skip "cannot create cache dir $CACHE"
exec 9>"$CACHE/.lock"
flock -w 600 9 || fail "cache $CACHE stays locked by another run"

. "$(dirname "$0")/lib-guest.sh"

prepare_kernel
prepare_busybox
prepare_initramfs
exec 9>&-
KVER=$(cat "$CACHE/kernel/version")
note "cache ready: kernel $KVER, modules: $(tr '\n' ' ' < "$CACHE/kernel/modules.load")"

# ---------------------------------------------------------------- disks

# NAME: v = virtio-blk, n = NVMe; the format is in the name.
NAMES="v512n v512e v4kn n512n n512e n4kn"
for n in $NAMES; do sidecar "$n" "$SIZE" "${n#?}" thin; done
start_daemon

declare -A L P GSUM
qargs=()
i=0
for n in $NAMES; do
	L[$n]=$(getfattr --absolute-names --only-values -n user.sectorfs.logical_sector_size "$MNT/$n") ||
		fail "$n: no logical_sector_size xattr"
	P[$n]=$(getfattr --absolute-names --only-values -n user.sectorfs.physical_sector_size "$MNT/$n") ||
		fail "$n: no physical_sector_size xattr"
	case ${n#?} in
	512n) want="512/512" ;; 512e) want="512/4096" ;; 4kn) want="4096/4096" ;;
	esac
	[ "${L[$n]}/${P[$n]}" = "$want" ] || fail "$n: xattrs say ${L[$n]}/${P[$n]}, sidecar says ${n#?} ($want)"
	qargs+=(-drive "file=$MNT/$n,format=raw,if=none,id=d$i,cache=none,aio=threads")
	case $n in
	v*) qargs+=(-device "virtio-blk-pci,drive=d$i,serial=$n,logical_block_size=${L[$n]},physical_block_size=${P[$n]}") ;;
	n*) qargs+=(-device "nvme,drive=d$i,serial=$n,logical_block_size=${L[$n]},physical_block_size=${P[$n]}") ;;
	esac
	i=$((i + 1))
done

# ---------------------------------------------------------------- boot

NONCE=$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
APPEND="console=ttyS0 panic=-1 quiet rdinit=/init sfs.nonce=$NONCE sfs.ndev=$i sfs.off=$OFF sfs.len=$LEN sfs.off2=$OFF2"
CONSOLE="$T/console.log"

pick_accel

tb=$(date +%s)
note "booting the guest ($ACCEL)"
qrc=0
qemu "$ACCEL" "$QEMU_TIMEOUT" "$CONSOLE" "$APPEND" "${qargs[@]}" || qrc=$?
BOOT_SECS=$(($(date +%s) - tb))
sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g; s/\r$//' "$CONSOLE" > "$CONSOLE.txt"
note "guest ran ${BOOT_SECS}s ($ACCEL), qemu status $qrc"
grep '^SFSVM' "$CONSOLE.txt" | sed 's/^/#   /'

show_console() { echo "--- guest console (last 40 lines) ---"; tail -n 40 "$CONSOLE.txt"; }
[ $qrc -eq 124 ] && { show_console; fail "guest did not finish within ${QEMU_TIMEOUT}s ($ACCEL)"; }
grep -q '^SFSVM done' "$CONSOLE.txt" || { show_console; fail "guest did not finish its checks (qemu status $qrc)"; }
[ $qrc -eq 0 ] || { show_console; fail "qemu exited with $qrc"; }
if grep -q '^SFSVM error' "$CONSOLE.txt"; then
	show_console; fail "guest: $(grep '^SFSVM error' "$CONSOLE.txt" | head -n1)"
fi
grep -q "^SFSVM done disks=$i\$" "$CONSOLE.txt" || fail "guest saw $(sed -n 's/^SFSVM done disks=//p' "$CONSOLE.txt") disks, not $i"

# ---------------------------------------------------------------- checks

# field KEY LINE: the value of KEY=... in LINE
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

for n in $NAMES; do
	line=$(grep "^SFSVM dev [^ ]* serial=$n " "$CONSOLE.txt")
	[ -n "$line" ] || fail "$n: the guest has no disk with serial $n"
	dev=$(echo "$line" | cut -d' ' -f3)
	glbs=$(field lbs "$line") gpbs=$(field pbs "$line") gsec=$(field sectors "$line")
	[ "$glbs" = "${L[$n]}" ] ||
		fail "$n: guest $dev logical_block_size $glbs, image has ${L[$n]}"
	giomin=$(field iomin "$line")
	if [ "$gpbs" != "${P[$n]}" ]; then
		# NVMe cannot show a physical sector larger than the logical one
		# here: QEMU 7.2's nvme leaves NPWG and NAWUPF/AWUPF at 0 whatever
		# physical_block_size says, and Linux sets physical_block_size =
		# min(that NPWG size, the atomic write unit) (drivers/nvme/host/core.c,
		# nvme_update_disk_info).  Accept the logical size there, only there.
		case $n in n*)
			[ "$gpbs" = "${L[$n]}" ] ||
				fail "$n: guest $dev physical_block_size $gpbs, image has ${P[$n]}"
			echo "# note: $n: NVMe shows physical_block_size $gpbs, not ${P[$n]} (QEMU's nvme advertises no NPWG/NAWUPF)" ;;
		*) fail "$n: guest $dev physical_block_size $gpbs, image has ${P[$n]}" ;;
		esac
	fi
	[ "$giomin" -ge "$gpbs" ] ||
		fail "$n: guest $dev minimum_io_size $giomin, below its physical_block_size $gpbs"
	[ "$gsec" = $((SIZE_BYTES / 512)) ] ||
		fail "$n: guest $dev has $gsec 512-byte sectors, image is $SIZE_BYTES bytes"
	pass "$n: guest $dev sees logical $glbs, physical $gpbs, minimum_io $giomin, $gsec sectors"

	io=$(grep "^SFSVM io $dev " "$CONSOLE.txt")
	for k in write read cmp; do
		[ "$(field $k "$io")" = ok ] || fail "$n: guest $dev O_DIRECT $LEN bytes at $OFF: $k=$(field $k "$io")"
	done
	pass "$n: guest $dev wrote and read back $LEN bytes at $OFF with O_DIRECT"
	[ "$(field writeend "$io")" = ok ] ||
		fail "$n: guest $dev O_DIRECT write of the last $LEN bytes: $(field writeend "$io")"
	GSUM[$n]=$(field md5 "$io")
	w512=$(field write512 "$io") r512=$(field read512 "$io") c512=$(field cmp512 "$io")
	if [ "${L[$n]}" -gt 512 ]; then
		case $w512 in fail:*) ;; *) fail "$n: guest $dev accepted a 512-byte O_DIRECT write at $OFF2 ($w512)" ;; esac
		case $r512 in fail:*) ;; *) fail "$n: guest $dev accepted a 512-byte O_DIRECT read at $OFF2 ($r512)" ;; esac
		pass "$n: guest $dev refuses 512-byte O_DIRECT write and read (${w512#fail:})"
	else
		[ "$w512" = ok ] && [ "$r512" = ok ] && [ "$c512" = ok ] ||
			fail "$n: guest $dev 512-byte O_DIRECT at $OFF2: write=$w512 read=$r512 cmp=$c512"
		pass "$n: guest $dev wrote and read back 512 bytes at $OFF2 with O_DIRECT"
	fi
done

# The bytes in the images, read through the mount with O_DIRECT.
ZERO4K="$T/zero4k"
head -c 4096 /dev/zero > "$ZERO4K"
readat() {	# NAME OFFSET LENGTH: print LENGTH bytes at OFFSET of MNT/NAME (O_DIRECT)
	dd if="$MNT/$1" bs="$3" count=1 skip="$2" iflag=direct,skip_bytes status=none
}
check_bytes() {	# WHEN
	local n
	for n in $NAMES; do
		yes "sectorfs-vm $NONCE $n big" | head -c $LEN > "$T/big"
		yes "sectorfs-vm $NONCE $n small" | head -c 512 > "$T/small"
		yes "sectorfs-vm $NONCE $n end" | head -c $LEN > "$T/end"
		readat "$n" $OFF $LEN | cmp -s - "$T/big" ||
			fail "$n ($1): the $LEN bytes at $OFF are not what the guest wrote"
		readat "$n" $((SIZE_BYTES - LEN)) $LEN | cmp -s - "$T/end" ||
			fail "$n ($1): the last $LEN bytes are not what the guest wrote there"
		sum=$(dd if="$MNT/$n" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)
		[ "$sum" = "${GSUM[$n]}" ] ||
			fail "$n ($1): md5 of the image through the mount $sum, the guest read ${GSUM[$n]}"
		readat "$n" $((OFF - 4096)) 4096 | cmp -s - "$ZERO4K" ||
			fail "$n ($1): the 4096 bytes before $OFF are not zero"
		readat "$n" $((OFF + LEN)) 4096 | cmp -s - "$ZERO4K" ||
			fail "$n ($1): the 4096 bytes after $((OFF + LEN)) are not zero"
		if [ "${L[$n]}" -gt 512 ]; then
			readat "$n" $((OFF2 - 512)) 4096 | cmp -s - "$ZERO4K" ||
				fail "$n ($1): the refused 512-byte write changed the sector at $((OFF2 - 512))"
		else
			readat "$n" $OFF2 512 | cmp -s - "$T/small" ||
				fail "$n ($1): the 512 bytes at $OFF2 are not what the guest wrote"
			readat "$n" $((OFF2 - 512)) 512 | cmp -s - <(head -c 512 /dev/zero) ||
				fail "$n ($1): the 512 bytes before $OFF2 are not zero"
			readat "$n" $((OFF2 + 512)) 3072 | cmp -s - <(head -c 3072 /dev/zero) ||
				fail "$n ($1): the rest of the physical sector after $OFF2 is not zero"
		fi
	done
	pass "images hold the guest's data, zeros around it, same md5 as the guest read ($1)"
}
check_bytes "after the guest"

# Stats: the guest's 512-byte write on a 512e disk reached the daemon as
# a read-modify-write; nothing does on 512n.
for n in $NAMES; do
	rmw=$(stats_key "$n" rmw_writes) mis=$(stats_key "$n" misaligned_rejected)
	w=$(stats_key "$n" writes) fl=$(stats_key "$n" flushes)
	echo "# $n stats: writes=$w flushes=$fl rmw_writes=$rmw misaligned_rejected=$mis"
	case ${n#?} in
	512e) [ "${rmw:-0}" -ge 1 ] || fail "$n: the guest's 512-byte write at $OFF2 counted no rmw_writes ($rmw)" ;;
	*) [ "${rmw:-0}" -eq 0 ] || fail "$n: rmw_writes=$rmw on a disk without larger physical sectors" ;;
	esac
	[ "${fl:-0}" -ge 1 ] || fail "$n: the guest's conv=fsync reached the daemon as no flush (flushes=$fl)"
done
pass "stats: read-modify-writes on 512e only, guest flushes reached the daemon"

stop_daemon
start_daemon
check_bytes "after a remount"

note "total ${SECONDS}s (guest ${BOOT_SECS}s, $ACCEL)"
