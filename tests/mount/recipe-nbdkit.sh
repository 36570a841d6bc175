#!/bin/bash
# SPDX-License-Identifier: MIT
# recipe-nbdkit.sh - the nbdkit recipe of doc/recipes.md run for real,
# with the commands it gives (checked first that the page still gives
# them):
#
#  nbdkit     the file plugin over a 4kn image with the blocksize-policy
#             filter on a unix socket in $T (started with --exit-with-parent
#             and a pid file, ended by that pid); nbdinfo shows the block
#             sizes; 4 KiB written and read back with nbdcopy, and seen
#             through the mount with O_DIRECT; a 512-byte write refused by
#             libnbd (the advertised minimum) and, with nbdsh and strict
#             alignment off, by nbdkit itself, before the disk sees it;
#             QEMU's -drive file=nbd...,format=raw with -device virtio-blk-pci
#             logical_block_size/physical_block_size starts and shows them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recipes.sh"

sidecar n4k 16M 4kn thin
recipe_serve

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
}

recipe_nbdkit
stop_daemon
pass "daemon exits 0"
