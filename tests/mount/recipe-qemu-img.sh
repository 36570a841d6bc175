#!/bin/bash
# SPDX-License-Identifier: MIT
# recipe-qemu-img.sh - the qemu-img recipe of doc/recipes.md run for
# real, with the commands it gives (checked first that the page still
# gives them):
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
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recipes.sh"

sidecar n4k 16M 4kn thin
recipe_serve

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
}

recipe_qemu_img
stop_daemon
pass "daemon exits 0"
