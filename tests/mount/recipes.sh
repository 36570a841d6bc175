#!/bin/bash
# SPDX-License-Identifier: MIT
# recipes.sh - the recipes of doc/recipes.md run for real, with the
# commands it gives (each recipe first checks that the page still gives
# them), one "ok" line per recipe:
#
#  qemu-img   qemu-img info -f raw, and with the format probe reading with
#             O_DIRECT (--image-opts ... cache.direct=on), on a 4kn disk;
#             a qcow2 made by qemu-img with a known pattern written by
#             qemu-io, converted with -n -O raw -t none into a 4kn image
#             declared by a sidecar written while mounted; every byte read
#             back through the mount with O_DIRECT; qemu-img compare says
#             identical, and finds a sector changed behind its back; the
#             same convert without -n into a new name (a 4kn image, -o
#             sector=4kn).  A plain `qemu-img info MNT/NAME` finds raw
#             too: its probe reads 512 bytes without O_DIRECT, which the
#             mount serves as a page cache would.
#  nbdkit     the file plugin over a 4kn image with the blocksize-policy
#             filter on a unix socket in $T (started with --exit-with-parent
#             and a pid file, ended by that pid); nbdinfo shows the block
#             sizes; 4 KiB written and read back with nbdcopy, and seen
#             through the mount with O_DIRECT; a 512-byte write refused by
#             libnbd (the advertised minimum) and, with nbdsh and strict
#             alignment off, by nbdkit itself, before the disk sees it;
#             QEMU's -drive file=nbd...,format=raw with -device virtio-blk-pci
#             logical_block_size/physical_block_size starts and shows them.
#  libvirt    the <disk> element of the page, inside a minimal domain,
#             valid for libvirt's schema (virt-xml-validate; a misspelt
#             attribute is refused) or, without it, well-formed (xmllint);
#             QEMU's I/O with that element's settings (qemu-io, raw,
#             cache.direct=on, aio=native) as an unprivileged user through
#             the -o allow_other mount (root only; permissions.sh shows
#             other users are shut out without allow_other).
#  loop-512e  losetup -b 512 --direct-io=on over 512e images: the device's
#             physical block size is reported (512: the loop driver gives
#             its logical size); mkfs.xfs -s size=4096, then a workload of
#             files, fsynced appends and a 16 MiB write: no read-modify-
#             write (rmw_writes 0, mkfs included) and no refused I/O; the
#             same with plain mkfs.xfs, measured and reported; mkfs.ext4 on
#             512 MiB (4 KiB blocks) and with -b 4096 on 256 MiB: no rmw;
#             plain mkfs.ext4 on 256 MiB (1 KiB blocks), measured.
#
# A recipe whose tools are missing is skipped with the reason; the test
# exits 77 only when every recipe was skipped.  It starts its own nbdkit
# and QEMU and ends them by pid, detaches only the loop devices it
# attached, unmounts what it mounted, and changes nothing outside $T
# (not /etc/fuse.conf: -o allow_other is used only as root).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_gnu_dd
requires_cmd cmp head tr truncate timeout

RAN=0

# missing CMD...: print the first CMD that is not installed (status 0), or
# nothing (status 1) when all are.
missing() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { echo "$c"; return 0; }
	done
	return 1
}
skip_recipe() { echo "# SKIP recipe $1: $2"; }
note() { echo "# $*"; }

# pattern BYTE LEN: LEN bytes of BYTE (0-255).
pattern() { head -c "$2" /dev/zero | tr '\0' "\\$(printf '%03o' "$1")"; }

# dread FILE OFFSET LENGTH: bytes of FILE read with O_DIRECT (4 KiB aligned).
dread() {
	dd if="$1" iflag=direct,skip_bytes,count_bytes bs=64K skip="$2" count="$3" status=none
}

# same WHAT FILE1 FILE2: the two files hold the same bytes.
same() { cmp -s "$2" "$3" || fail "$1: $(cmp "$2" "$3" 2>&1 | head -n1)"; }

# doc_says RECIPE TEXT...: doc/recipes.md still gives each TEXT (a command
# this test runs, as the page writes it), else the page and the test
# have parted.
RECIPES=$top_srcdir/doc/recipes.md
doc_says() {
	local r=$1 t
	shift
	[ -f "$RECIPES" ] || fail "$r: $RECIPES is missing"
	for t in "$@"; do
		grep -qF -- "$t" "$RECIPES" || fail "$r: doc/recipes.md no longer says '$t'"
	done
}

# xattr FILE NAME: an xattr of FILE, or nothing without getfattr.
xattr() { getfattr --only-values -n "$2" "$1" 2>/dev/null; }

# The images.  512e ones for the loop recipe; mkfs.xfs needs 300 MiB.
sidecar n4k 16M 4kn thin
sidecar v4k 16M 4kn thin
sidecar x4k 512M 512e thin
sidecar x512 512M 512e thin
sidecar e4big 512M 512e thin
sidecar e4b 256M 512e thin
sidecar e4small 256M 512e thin
OPTS=sector=4kn   # images created in the mount (qemu-img convert without -n)
[ "$(id -u)" -eq 0 ] && OPTS=$OPTS,allow_other
start_daemon -o "$OPTS"

# ------------------------------------------------------------ qemu-img

recipe_qemu_img() {
	local m I=$MNT/qc4k src=$T/src.qcow2 size out
	doc_says qemu-img 'qemu-img info $D' 'qemu-img info -f raw $D' \
		'qemu-img info --image-opts file.driver=file,file.filename=$D,cache.direct=on' \
		'qemu-img convert -n -O raw -t none src.qcow2' 'qemu-img compare -f qcow2 -F raw -T none src.qcow2' \
		'qemu-img convert -O raw -t none src.qcow2'
	if m=$(missing qemu-img qemu-io); then
		skip_recipe qemu-img "needs $m (package qemu-utils)"
		return
	fi
	# The source: 32 MiB qcow2 with three patterns, the rest never written.
	step "qemu-img create" qemu-img create -q -f qcow2 "$src" 32M
	step "qemu-io writes the pattern" qemu-io -f qcow2 \
		-c 'write -P 0xab 1M 3M' -c 'write -P 0xcd 20492K 8K' -c 'write -P 0x5a 31M 1M' "$src"
	size=$(qemu-img info --output=json "$src" | tr -d ' \n' | grep -o '"virtual-size":[0-9]*' | cut -d: -f2)
	[ "$size" = 33554432 ] || fail "qemu-img info $src: virtual-size '$size', want 33554432"
	truncate -s "$size" "$T/want.raw"
	pattern 171 $((3 << 20)) | dd of="$T/want.raw" bs=64K seek=1M oflag=seek_bytes conv=notrunc status=none
	pattern 205 8192 | dd of="$T/want.raw" bs=64K seek=$((20492 << 10)) oflag=seek_bytes conv=notrunc status=none
	pattern 90 $((1 << 20)) | dd of="$T/want.raw" bs=64K seek=31M oflag=seek_bytes conv=notrunc status=none

	# The target: declared by a sidecar written while mounted; the
	# daemon creates it at the first lookup (qemu-img's open).
	printf '{ "size": %s, "sector": "4kn" }\n' "$size" > "$STORE/qc4k.json"

	step "qemu-img info -f raw" qemu-img info -f raw "$I"
	grep -q '^file format: raw$' "$T/step.out" || fail "qemu-img info -f raw: $(cat "$T/step.out")"
	grep -q "^virtual size: .*($size bytes)" "$T/step.out" || fail "qemu-img info -f raw: $(cat "$T/step.out")"
	step "qemu-img info --image-opts cache.direct=on" \
		qemu-img info --image-opts "file.driver=file,file.filename=$I,cache.direct=on"
	grep -q '^file format: raw$' "$T/step.out" ||
		fail "qemu-img info --image-opts (the probe with O_DIRECT) did not find raw: $(cat "$T/step.out")"
	step "qemu-img info (its probe reads 512 bytes without O_DIRECT)" qemu-img info "$I"
	grep -q '^file format: raw$' "$T/step.out" ||
		fail "plain qemu-img info did not find raw: $(cat "$T/step.out")"

	echo reset > "$MNT/.stats/qc4k"
	step "qemu-img convert -n" qemu-img convert -n -O raw -t none "$src" "$I"
	dread "$I" 0 "$size" > "$T/got.raw" || fail "O_DIRECT read of $I failed"
	same "qemu-img convert -n: the bytes in $I (O_DIRECT) against the pattern" "$T/want.raw" "$T/got.raw"
	local w rej disc
	w=$(stats_key qc4k writes) rej=$(stats_key qc4k misaligned_rejected) disc=$(stats_key qc4k discards)
	[ "$w" -gt 0 ] || fail "qemu-img convert: the stats show no writes"
	step "qemu-img compare" qemu-img compare -f qcow2 -F raw -T none "$src" "$I"
	grep -q 'Images are identical' "$T/step.out" || fail "qemu-img compare: $(cat "$T/step.out")"

	# compare reads through the mount: a sector changed there is found.
	pattern 255 4096 | dd of="$I" bs=4096 seek=2048 oflag=direct conv=notrunc status=none ||
		fail "O_DIRECT write of one sector into $I failed"
	local rc=0
	out=$(timeout 60 qemu-img compare -f qcow2 -F raw -T none "$src" "$I" 2>&1) || rc=$?
	[ $rc -eq 1 ] && [[ $out == *"mismatch at offset 8388608"* ]] ||
		fail "qemu-img compare after a sector was changed at 8 MiB: exit $rc, '$out'"

	# Without -n: a new image, made with the mount's defaults (4kn here).
	step "qemu-img convert to a new name" qemu-img convert -O raw -t none "$src" "$MNT/qnew"
	[ "$(stat_val %s "$MNT/qnew")" = "$size" ] || fail "qnew: size $(stat_val %s "$MNT/qnew"), want $size"
	if command -v getfattr >/dev/null 2>&1; then
		[ "$(xattr "$MNT/qnew" user.sectorfs.logical_sector_size)" = 4096 ] ||
			fail "qnew: logical sector '$(xattr "$MNT/qnew" user.sectorfs.logical_sector_size)', want 4096"
	fi
	step "qemu-img compare (new image)" qemu-img compare -f qcow2 -F raw -T none "$src" "$MNT/qnew"
	pass "qemu-img: info, info -f raw and the O_DIRECT probe find raw, $size bytes, on a 4kn disk;" \
		"convert -n -O raw -t none into a sidecar-declared 4kn image:" \
		"every byte right through O_DIRECT ($w writes, $disc discards, $rej misaligned probes);" \
		"compare identical, and finds a changed sector; convert into a new name makes a 4kn image"
	RAN=$((RAN + 1))
}

# -------------------------------------------------------------- nbdkit

NPID=
stop_nbdkit() {
	[ -n "$NPID" ] || return 0
	kill "$NPID" 2>/dev/null
	wait_gone "$NPID" 10 || kill -9 "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	NPID=
}

# nbdsh_cmd: how to run nbdsh here, or nothing.  nbdsh is "python3 -m
# nbd", and the nbd module is installed for the system's python3
# (python3-libnbd), which another python3 earlier on PATH does not see.
nbdsh_cmd() {
	command -v nbdsh >/dev/null 2>&1 || return 0
	if nbdsh -c pass >/dev/null 2>&1; then
		echo nbdsh
	elif PATH=/usr/bin:$PATH nbdsh -c pass >/dev/null 2>&1; then
		echo "env PATH=/usr/bin:$PATH nbdsh"
	fi
}

recipe_nbdkit() {
	local m I=$MNT/n4k L=4096 P=4096 sock=$T/nbd.sock uri i info
	doc_says nbdkit '--filter=blocksize-policy file $D' \
		'blocksize-minimum=$L blocksize-preferred=$P blocksize-error-policy=error' \
		',format=raw,if=none,id=d0' \
		'-device virtio-blk-pci,drive=d0,logical_block_size=$L,physical_block_size=$P'
	if m=$(missing nbdkit nbdinfo nbdcopy); then
		skip_recipe nbdkit "needs $m (packages nbdkit, libnbd-bin)"
		return
	fi
	if ! nbdkit --filter=blocksize-policy null --dump-plugin >/dev/null 2>&1; then
		skip_recipe nbdkit "nbdkit $(nbdkit --version | cut -d' ' -f2) has no blocksize-policy filter (1.30 and later)"
		return
	fi
	if command -v getfattr >/dev/null 2>&1; then
		L=$(xattr "$I" user.sectorfs.logical_sector_size)
		P=$(xattr "$I" user.sectorfs.physical_sector_size)
	fi
	uri="nbd+unix:///?socket=$sock"
	nbdkit -f --exit-with-parent -U "$sock" -P "$T/nbdkit.pid" \
		--filter=blocksize-policy file "$I" \
		blocksize-minimum="$L" blocksize-preferred="$P" blocksize-error-policy=error \
		2>>"$T/nbdkit.log" &
	NPID=$!
	on_exit stop_nbdkit
	FAIL_LOGS="${FAIL_LOGS:-} $T/nbdkit.log"
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/nbdkit.pid" ] && break
		kill -0 "$NPID" 2>/dev/null || fail "nbdkit exited before it was ready: $(cat "$T/nbdkit.log")"
		sleep 0.1
	done
	[ -s "$T/nbdkit.pid" ] || fail "nbdkit wrote no pid file in 10 s"
	[ "$(cat "$T/nbdkit.pid")" = "$NPID" ] || fail "nbdkit pid file says $(cat "$T/nbdkit.pid"), it is $NPID"

	step "nbdinfo" nbdinfo "$uri"
	info=$(cat "$T/step.out")
	grep -q "block_size_minimum: $L\$" <<< "$info" || fail "nbdinfo: no block_size_minimum $L: $info"
	grep -q "block_size_preferred: $P\$" <<< "$info" || fail "nbdinfo: no block_size_preferred $P: $info"
	grep -q "export-size: 16777216" <<< "$info" || fail "nbdinfo: wrong size: $info"

	# 4 KiB in (at offset 0: nbdcopy writes the source's size), flushed
	# (nbdkit's fdatasync reaches the disk), and out.
	head -c 4096 /dev/urandom > "$T/p4k"
	step "nbdcopy 4 KiB in" nbdcopy --flush "$T/p4k" "$uri"
	[ "$(stats_key n4k flushes)" -ge 1 ] || fail "nbdcopy --flush: no flush reached the disk"
	step "nbdcopy the disk out" nbdcopy "$uri" "$T/n4k.out"
	head -c 4096 "$T/n4k.out" > "$T/n4k.head"
	same "nbdcopy: 4 KiB read back over NBD" "$T/p4k" "$T/n4k.head"
	dread "$I" 0 4096 > "$T/n4k.dio" || fail "O_DIRECT read of $I failed"
	same "nbdcopy: 4 KiB through the mount (O_DIRECT)" "$T/p4k" "$T/n4k.dio"

	# 512 bytes: libnbd itself refuses a request below the advertised minimum.
	local w0 r0 out rc=0 how
	w0=$(stats_key n4k writes) r0=$(stats_key n4k misaligned_rejected)
	head -c 512 /dev/urandom > "$T/p512"
	out=$(timeout 60 nbdcopy "$T/p512" "$uri" 2>&1) || rc=$?
	[ $rc -ne 0 ] || fail "nbdcopy of 512 bytes onto a 4kn disk succeeded"
	[[ $out == *"Invalid argument"* ]] || fail "nbdcopy of 512 bytes: '$out', want Invalid argument"
	how="libnbd refuses it ('${out##*: }')"
	# And with strict alignment off, the request reaches nbdkit: the filter refuses it.
	local sh
	sh=$(nbdsh_cmd)
	if [ -n "$sh" ]; then
		out=$($sh -u "$uri" -c 'h.set_strict_mode(0)' -c '
try:
    h.pwrite(b"\xee" * 512, 512)
    print("accepted")
except nbd.Error as e:
    print("refused", e.errno)
' 2>&1)
		[ "$out" = "refused EINVAL" ] || fail "nbdsh, 512-byte write at 512 with strict mode off: '$out', want refused EINVAL"
		how="$how; sent anyway (nbdsh, strict mode off), nbdkit refuses it with EINVAL"
	else
		note "nbdsh (python3-libnbd) missing: the server-side refusal of a 512-byte write is not tried"
	fi
	[ "$(stats_key n4k writes)" = "$w0" ] && [ "$(stats_key n4k misaligned_rejected)" = "$r0" ] ||
		fail "a refused 512-byte NBD write reached the disk (writes $w0 -> $(stats_key n4k writes), misaligned $r0 -> $(stats_key n4k misaligned_rejected))"
	dread "$I" 0 4096 > "$T/n4k.dio" || fail "O_DIRECT read of $I failed"
	same "the first 4 KiB after the refused writes" "$T/p4k" "$T/n4k.dio"

	# QEMU's NBD client takes the advertised minimum as its alignment: a
	# 512-byte write becomes a read-modify-write of the 4 KiB around it,
	# and the disk sees only whole sectors.
	local qio="QEMU's NBD client not tried (no qemu-io)"
	if command -v qemu-io >/dev/null 2>&1; then
		r0=$(stats_key n4k misaligned_rejected)
		head -c 4096 /dev/urandom | dd of="$I" bs=4096 seek=2 oflag=direct conv=notrunc status=none ||
			fail "O_DIRECT write into $I failed"
		dread "$I" 8192 4096 > "$T/n4k.before" || fail "O_DIRECT read of $I failed"
		{ head -c 512 "$T/n4k.before"; pattern 60 512; tail -c 3072 "$T/n4k.before"; } > "$T/n4k.want"
		step "qemu-io 512 bytes over NBD" qemu-io -f raw -c 'write -P 0x3c 8704 512' "$uri"
		dread "$I" 8192 4096 > "$T/n4k.got" || fail "O_DIRECT read of $I failed"
		same "qemu-io's 512 bytes at 8704 over NBD" "$T/n4k.want" "$T/n4k.got"
		[ "$(stats_key n4k misaligned_rejected)" = "$r0" ] ||
			fail "qemu-io over NBD: the disk refused I/O ($r0 -> $(stats_key n4k misaligned_rejected))"
		qio="qemu-io writes 512 bytes over NBD as whole 4 KiB"
	fi

	# QEMU on the other host: the page's -drive and -device.
	local q="QEMU not tried (no qemu-system-x86_64)"
	if command -v qemu-system-x86_64 >/dev/null 2>&1; then
		printf 'info qtree\nquit\n' | timeout 60 qemu-system-x86_64 -M q35,accel=tcg -nodefaults \
			-display none -S -monitor stdio \
			-drive "file=$uri,format=raw,if=none,id=d0" \
			-device "virtio-blk-pci,drive=d0,logical_block_size=$L,physical_block_size=$P" \
			> "$T/qemu-nbd.out" 2>&1 || fail "QEMU with the NBD disk: $(tail -n5 "$T/qemu-nbd.out")"
		grep -q "logical_block_size = $L " "$T/qemu-nbd.out" &&
			grep -q "physical_block_size = $P " "$T/qemu-nbd.out" ||
			fail "QEMU's virtio-blk over NBD does not show $L/$P: $(grep block_size "$T/qemu-nbd.out")"
		q="QEMU's -drive file=nbd+unix...,format=raw + virtio-blk $L/$P starts"
	fi
	stop_nbdkit
	pass "nbdkit file + blocksize-policy on a 4kn disk: nbdinfo shows minimum $L, preferred $P;" \
		"4 KiB in and out with nbdcopy, seen through the mount; a 512-byte write: $how," \
		"the disk never sees it; $qio; $q; nbdkit ended by its pid"
	RAN=$((RAN + 1))
}

# ------------------------------------------------------------- libvirt

recipe_libvirt() {
	local I=$MNT/v4k disk dom=$T/domain.xml valid how as=() user= a
	doc_says libvirt "<disk type='file' device='disk'>"
	disk=$(sed -n "/^    <disk type='file' device='disk'>\$/,/^    <\/disk>\$/p" "$RECIPES")
	[ -n "$disk" ] || fail "doc/recipes.md has no libvirt <disk type='file' device='disk'> element"
	for a in "cache='none'" "io='native'" "<blockio logical_block_size=" "physical_block_size="; do
		[[ $disk == *"$a"* ]] || fail "doc/recipes.md's libvirt disk element has no $a"
	done
	if ! command -v virt-xml-validate >/dev/null 2>&1 && ! command -v xmllint >/dev/null 2>&1 &&
		! command -v qemu-io >/dev/null 2>&1; then
		skip_recipe libvirt "needs virt-xml-validate (libvirt-clients), xmllint (libxml2-utils) or qemu-io (qemu-utils)"
		return
	fi
	{
		echo "<domain type='kvm'>"
		echo "  <name>vm1</name>"
		echo "  <memory unit='MiB'>1024</memory>"
		echo "  <os><type arch='x86_64' machine='q35'>hvm</type></os>"
		echo "  <devices>"
		echo "    <emulator>/usr/bin/qemu-system-x86_64</emulator>"
		echo "$disk"
		echo "  </devices>"
		echo "</domain>"
	} > "$dom"
	if command -v virt-xml-validate >/dev/null 2>&1 && command -v xmllint >/dev/null 2>&1; then
		step "virt-xml-validate the page's disk element" virt-xml-validate "$dom" domain
		sed 's/physical_block_size=/physical_blocksize=/' "$dom" > "$T/bad.xml"
		timeout 60 virt-xml-validate "$T/bad.xml" domain >/dev/null 2>&1 &&
			fail "virt-xml-validate accepts a misspelt blockio attribute: it checks nothing"
		valid="valid for libvirt's domain schema (virt-xml-validate)"
	elif command -v xmllint >/dev/null 2>&1; then
		step "xmllint the page's disk element" xmllint --noout "$dom"
		valid="well-formed (xmllint; virt-xml-validate, package libvirt-clients, is missing)"
	else
		valid="not checked (neither virt-xml-validate nor xmllint)"
	fi
	note "libvirt disk element: $valid"

	how="qemu-io not installed: QEMU's I/O not tried"
	if command -v qemu-io >/dev/null 2>&1; then
		# QEMU as libvirt runs it: another user, through -o allow_other.
		if [ "$(id -u)" -eq 0 ] && id -u nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 &&
			[ "$(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups id -u 2>/dev/null)" = "$(id -u nobody)" ]; then
			chmod 0755 "$T"   # mktemp -d made it 0700; the mount's root is 0755
			chown nobody "$I" || fail "chown nobody $I (through the mount) failed"
			as=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --)
			user="as nobody through -o allow_other"
		else
			user="as $(id -un) (no root, nobody or setpriv for another user)"
		fi
		pattern 108 4096 > "$T/v.want"
		step "qemu-io cache.direct=on aio=native $user" "${as[@]}" qemu-io --image-opts \
			"driver=raw,file.driver=file,file.filename=$I,file.aio=native,cache.direct=on" \
			-c 'write -P 0x6c 64k 4k' -c 'flush' -c 'read -P 0x6c 64k 4k'
		grep -q 'read 4096/4096 bytes at offset 65536' "$T/step.out" || fail "qemu-io: $(cat "$T/step.out")"
		dread "$I" 65536 4096 > "$T/v.got" || fail "O_DIRECT read of $I failed"
		same "qemu-io's 4 KiB through the mount" "$T/v.want" "$T/v.got"
		[ "$(stats_key v4k flushes)" -ge 1 ] || fail "qemu-io's flush did not reach the disk"
		how="QEMU's I/O with its settings (qemu-io raw, cache.direct=on, aio=native) $user works"
	fi
	pass "libvirt: doc/recipes.md's disk element $valid; $how"
	RAN=$((RAN + 1))
}

# ----------------------------------------------------------- loop, 512e

# fs_workload DIR: files, appends each fsynced (journal/log writes), a
# 16 MiB write with fsync.
fs_workload() {
	local i
	for ((i = 1; i <= 30; i++)); do
		head -c $((RANDOM * 4 + RANDOM % 4096)) /dev/urandom > "$1/f$i" || fail "writing $1/f$i failed"
	done
	for ((i = 1; i <= 20; i++)); do
		echo "line $i" >> "$1/log" || fail "appending to $1/log failed"
		step "fsync $1/log" sync "$1/log"
	done
	step "16 MiB write" dd if=/dev/urandom of="$1/big" bs=1M count=16 conv=fsync status=none
}

# loop_case NAME FSTYPE MKFS...: attach NAME with -b 512, mkfs, mount, the
# workload, umount, detach.  Sets PBSZ, GEOM (sector or block size the
# filesystem took), RMW_MKFS and W_MKFS (read-modify-writes and writes of
# mkfs), RMW_WORK and W_WORK (of the workload) and REJ (refused I/Os).
loop_case() {
	local name=$1 fstype=$2 dir=$T/fs-$1
	shift 2
	mkdir -p "$dir"
	attach_loop "$MNT/$name" 512
	PBSZ=$(timeout 10 blockdev --getpbsz "$DEV")
	echo reset > "$MNT/.stats/$name"
	step "$* on $name" "$@" "$DEV"
	if [ "$fstype" = xfs ]; then
		GEOM=$(timeout 20 xfs_db -r -c 'sb 0' -c 'p sectsize' "$DEV" | sed -n 's/^sectsize = //p')
	else
		GEOM=$(timeout 20 dumpe2fs -h "$DEV" 2>/dev/null | sed -n 's/^Block size: *//p')
	fi
	RMW_MKFS=$(stats_key "$name" rmw_writes) W_MKFS=$(stats_key "$name" writes)
	REJ=$(stats_key "$name" misaligned_rejected)
	echo reset > "$MNT/.stats/$name"
	step "mount $DEV ($name)" mount -t "$fstype" "$DEV" "$dir"
	on_exit "timeout 20 umount $dir || umount -l $dir"
	fs_workload "$dir"
	step "umount $dir" umount "$dir"
	detach_loop "$DEV"
	RMW_WORK=$(stats_key "$name" rmw_writes) W_WORK=$(stats_key "$name" writes)
	REJ=$((REJ + $(stats_key "$name" misaligned_rejected)))
	[ "$REJ" = 0 ] || fail "$name ($*): $REJ I/Os refused as misaligned"
}

recipe_loop() {
	local m
	doc_says loop-512e 'losetup -f --show -b 512 --direct-io=on' 'mkfs.xfs -s size=4096' 'mkfs.ext4 -b 4096'
	if [ "$(id -u)" -ne 0 ]; then
		skip_recipe loop-512e "needs root"
		return
	fi
	if [ ! -e /dev/loop-control ]; then
		skip_recipe loop-512e "no loop devices (/dev/loop-control missing)"
		return
	fi
	if m=$(missing losetup blockdev mount umount sync mkfs.xfs xfs_db mkfs.ext4 dumpe2fs); then
		skip_recipe loop-512e "needs $m"
		return
	fi
	local x4k x512 e4big e4b e4small

	loop_case x4k xfs mkfs.xfs -q -f -s size=4096
	[ "$GEOM" = 4096 ] || fail "mkfs.xfs -s size=4096: sector size '$GEOM'"
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.xfs -s size=4096 on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	x4k="mkfs.xfs -s size=4096: rmw 0 (mkfs and workload)"
	local pbsz=$PBSZ

	loop_case x512 xfs mkfs.xfs -q -f
	x512="plain mkfs.xfs: sector $GEOM, rmw $RMW_MKFS of $W_MKFS writes at mkfs, $RMW_WORK of $W_WORK in the workload"
	[ "$GEOM" = 512 ] && [ "$RMW_WORK" = 0 ] &&
		note "plain mkfs.xfs with 512-byte sectors made no read-modify-write in this workload"

	loop_case e4big ext4 mkfs.ext4 -q -F
	[ "$GEOM" = 4096 ] || fail "mkfs.ext4 on 512 MiB: block size '$GEOM', want 4096"
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.ext4 (4 KiB blocks) on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	e4big="mkfs.ext4 on 512 MiB: block $GEOM, rmw 0"

	loop_case e4b ext4 mkfs.ext4 -q -F -b 4096
	[ "$RMW_MKFS" = 0 ] && [ "$RMW_WORK" = 0 ] ||
		fail "mkfs.ext4 -b 4096 on 512e: rmw_writes $RMW_MKFS at mkfs, $RMW_WORK in the workload, want 0"
	e4b="mkfs.ext4 -b 4096 on 256 MiB: rmw 0"

	loop_case e4small ext4 mkfs.ext4 -q -F
	e4small="plain mkfs.ext4 on 256 MiB: block $GEOM, rmw $RMW_MKFS of $W_MKFS writes at mkfs, $RMW_WORK of $W_WORK in the workload"

	pass "loop -b 512 over 512e: physical block size reported $pbsz; $x4k; $x512; $e4big; $e4b; $e4small;" \
		"no I/O refused"
	RAN=$((RAN + 1))
}

recipe_qemu_img
recipe_nbdkit
recipe_libvirt
recipe_loop

[ $RAN -gt 0 ] || skip "every recipe was skipped"
stop_daemon
pass "daemon exits 0"
