#!/bin/bash
# SPDX-License-Identifier: MIT
# recipe-libvirt.sh - the libvirt recipe of doc/recipes.md checked and run
# for real, with the element it gives (checked first that the page still
# gives it):
#
#  libvirt    the <disk> element of the page, inside a minimal domain,
#             valid for libvirt's schema (virt-xml-validate; a misspelt
#             attribute is refused) or, without it, well-formed (xmllint);
#             QEMU's I/O with that element's settings (qemu-io, raw,
#             cache.direct=on, aio=native) as an unprivileged user through
#             the -o allow_other mount (root only; permissions.sh shows
#             other users are shut out without allow_other).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recipes.sh"

sidecar v4k 16M 4kn thin
recipe_serve

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
}

recipe_libvirt
stop_daemon
pass "daemon exits 0"
