# SPDX-License-Identifier: MIT
# lib-guest.sh - vm.sh's guest: its kernel, busybox and initramfs, made
# once and cached in $CACHE, and QEMU run on them.  vm.sh sources it after
# tests/mount/lib.sh and after setting CACHE, WANT_MODS and T; the
# guest's /init is guest-init.sh beside this file.

GUEST_DIR=$(dirname "${BASH_SOURCE[0]}")

apt_download() {	# DIR PACKAGE: apt-get download PACKAGE into DIR, or skip
	command -v apt-get >/dev/null 2>&1 || skip "$2 not in cache $CACHE and no apt-get to download it"
	(cd "$1" && apt-get -q -o APT::Sandbox::User=root download "$2") >"$T/apt.log" 2>&1 ||
		skip "$2 not in cache $CACHE and 'apt-get download $2' failed: $(tail -n1 "$T/apt.log")"
}

# Kernel: vmlinuz plus the wanted modules and their dependencies,
# decompressed, and the order to load them in.
prepare_kernel() {
	[ -s "$CACHE/kernel/vmlinuz" ] && [ -f "$CACHE/kernel/modules.load" ] && return 0
	local pkg work x moddir f b n
	command -v apt-cache >/dev/null 2>&1 || skip "no kernel in cache $CACHE and no apt-cache"
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
	[ -n "$pkg" ] || skip "no kernel in cache $CACHE and apt knows no linux-image-amd64 (apt-get update?)"
	note "downloading $pkg"
	work=$(mktemp -d "$CACHE/tmp.XXXXXX")
	on_exit "rm -rf '$work'"
	apt_download "$work" "$pkg"
	x="$work/x"
	dpkg-deb -x "$work"/linux-image-*.deb "$x" || fail "dpkg-deb -x $pkg failed"
	mkdir -p "$work/kernel/modules"
	cp "$x"/boot/vmlinuz-* "$work/kernel/vmlinuz" || fail "$pkg has no /boot/vmlinuz-*"
	moddir=$(echo "$x"/lib/modules/*)
	[ -d "$moddir/kernel" ] || fail "$pkg has no /lib/modules/*/kernel"
	basename "$moddir" > "$work/kernel/version"

	declare -A path seen
	while IFS= read -r f; do
		b=${f##*/}; b=${b%%.ko*}; path[${b//-/_}]=$f
	done < <(find "$moddir/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst')
	local order=()
	add_mod() {	# depth first: dependencies before the module
		local n=${1//-/_} f out deps d
		[ -n "${seen[$n]:-}" ] && return 0
		seen[$n]=1
		f=${path[$n]:-}
		if [ -z "$f" ]; then
			# built into the kernel: nothing to load
			grep -q "/${n}.ko\$\|/${n//_/-}.ko\$" "$moddir/modules.builtin" 2>/dev/null && return 0
			fail "module $n: neither in $pkg nor built in"
		fi
		out="$work/kernel/modules/$n.ko"
		case $f in
		*.ko.xz) requires_cmd xz; xz -dc "$f" > "$out" || fail "xz -d $f" ;;
		*.ko.zst) requires_cmd zstd; zstd -qdc "$f" > "$out" || fail "zstd -d $f" ;;
		*) cp "$f" "$out" ;;
		esac
		deps=$(tr '\0' '\n' < "$out" | sed -n 's/^depends=//p')
		for d in ${deps//,/ }; do add_mod "$d"; done
		order+=("$n")
	}
	for n in $WANT_MODS; do add_mod "$n"; done
	printf '%s\n' "${order[@]}" > "$work/kernel/modules.load"
	rm -rf "$CACHE/kernel"
	mv "$work/kernel" "$CACHE/kernel"
	rm -rf "$work"
}

prepare_busybox() {
	[ -x "$CACHE/busybox/busybox" ] && return 0
	local work
	note "downloading busybox-static"
	work=$(mktemp -d "$CACHE/tmp.XXXXXX")
	on_exit "rm -rf '$work'"
	apt_download "$work" busybox-static
	dpkg-deb -x "$work"/busybox-static_*.deb "$work/x" || fail "dpkg-deb -x busybox-static failed"
	mkdir -p "$work/busybox"
	cp "$work/x/bin/busybox" "$work/busybox/busybox" || fail "busybox-static has no /bin/busybox"
	rm -rf "$CACHE/busybox"
	mv "$work/busybox" "$CACHE/busybox"
	rm -rf "$work"
}

# The guest's /init (busybox sh, guest-init.sh).  GNU dd is /bin/gdd:
# busybox dd retries an O_DIRECT open without O_DIRECT when it fails.
write_init() {
	cp "$GUEST_DIR/guest-init.sh" "$1" || fail "no $GUEST_DIR/guest-init.sh"
	chmod 755 "$1"
}

# The initramfs: busybox, GNU dd and its libraries, the modules, /init.
# Cached under a name that hashes everything in it.
prepare_initramfs() {
	local root="$T/initramfs" lib h m
	mkdir -p "$root/bin" "$root/lib/modules"
	cp "$CACHE/busybox/busybox" "$root/bin/busybox"
	cp "$(command -v dd)" "$root/bin/gdd"
	for lib in $(ldd "$(command -v dd)" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	for m in $(cat "$CACHE/kernel/modules.load"); do
		cp "$CACHE/kernel/modules/$m.ko" "$root/lib/modules/"
	done
	cp "$CACHE/kernel/modules.load" "$root/lib/modules/load"
	write_init "$root/init"
	h=$(cd "$root" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
	INITRD="$CACHE/initramfs-$h.cpio.gz"
	if [ ! -s "$INITRD" ]; then
		note "building initramfs $INITRD"
		(cd "$root" && find . | LC_ALL=C sort |
			"$CACHE/busybox/busybox" cpio -o -H newc -R 0:0 2>/dev/null) |
			gzip -9 > "$INITRD.tmp" || fail "building the initramfs failed"
		find "$CACHE" -maxdepth 1 -name 'initramfs-*.cpio.gz' -delete
		mv "$INITRD.tmp" "$INITRD"
	fi
}

QPID=
on_exit '[ -n "$QPID" ] && kill $QPID'
# qemu ACCEL TIMEOUT OUTPUT APPEND [ARGS...]: run a guest in the
# background (killed at exit), serial console to OUTPUT; returns qemu's
# status (124: timed out).
qemu() {
	local accel=$1 tmo=$2 out=$3 append=$4 rc=0
	shift 4
	timeout -k 10 "$tmo" qemu-system-x86_64 -accel "$accel" -m 256 -smp 1 \
		-nodefaults -nographic -serial stdio -no-reboot \
		-kernel "$CACHE/kernel/vmlinuz" -initrd "$INITRD" -append "$append" \
		"$@" < /dev/null > "$out" 2>&1 &
	QPID=$!
	wait $QPID || rc=$?
	QPID=
	return $rc
}

# KVM when it runs a guest: /dev/kvm may be there and still not boot one
# (nested virtualisation missing CPU features: the kernel hangs before its
# first message).  A guest that only says it started and powers off,
# within 20 s; the answer is cached for this host kernel and QEMU.
pick_accel() {
	local key f rc=0
	if [ -n "${SECTORFS_VM_ACCEL:-}" ]; then ACCEL=$SECTORFS_VM_ACCEL; return; fi
	ACCEL=tcg
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 0
	key=$( (uname -r; qemu-system-x86_64 --version | head -n1) | sha256sum | cut -c1-16)
	f="$CACHE/accel-$key"
	if [ -s "$f" ]; then ACCEL=$(cat "$f"); return; fi
	qemu kvm 20 "$T/probe.log" "console=ttyS0 panic=-1 quiet rdinit=/init sfs.probe=1" || rc=$?
	if [ $rc -eq 0 ] && grep -q 'SFSVM start' "$T/probe.log"; then
		ACCEL=kvm
	else
		note "KVM does not run a guest here (qemu status $rc: $(sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' "$T/probe.log" | tr -cd '[:print:]\n' | grep -v '^\s*$' | tail -n1 | cut -c1-100)): TCG"
	fi
	echo "$ACCEL" > "$f.tmp" && mv "$f.tmp" "$f"
}
