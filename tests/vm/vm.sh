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

# The guest's /init (busybox sh).  GNU dd is /bin/gdd: busybox dd retries
# an O_DIRECT open without O_DIRECT when it fails.
write_init() {
	cat > "$1" <<'EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /usr/bin /sbin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "SFSVM $*"; }
NONCE=x NDEV=0 OFF=0 LEN=0 OFF2=0
for a in $(cat /proc/cmdline); do
	case $a in
	sfs.nonce=*) NONCE=${a#*=} ;;
	sfs.ndev=*) NDEV=${a#*=} ;;
	sfs.off=*) OFF=${a#*=} ;;
	sfs.len=*) LEN=${a#*=} ;;
	sfs.off2=*) OFF2=${a#*=} ;;
	esac
done
echo	# the console may still hold a terminal reset before this
say "start kernel=$(uname -r) ndev=$NDEV"
grep -q 'sfs.probe=1' /proc/cmdline && poweroff -f
gdd --version 2>/dev/null | grep -q coreutils || say "error gdd-is-not-gnu-dd"
for m in $(cat /lib/modules/load); do
	insmod /lib/modules/$m.ko || say "error insmod $m"
done
i=0
while :; do
	n=$(ls -d /sys/block/vd* /sys/block/nvme*n* 2>/dev/null | wc -l)
	[ "$n" -ge "$NDEV" ] && break
	i=$((i + 1))
	[ $i -ge 300 ] && { say "error only $n of $NDEV disks after 30 s"; break; }
	sleep 0.1
done
# one-word result of a command: ok, or fail:<its last message, no spaces>
run() {
	local out
	if out=$("$@" 2>&1); then echo ok; else
		out=$(echo "$out" | grep -m1 -e '^gdd:' -e '^cmp:' || echo "$out" | tail -n1)
		echo "fail:$(echo "$out" | tr ' ' '_')"; fi
}
count=0
for d in /sys/block/vd* /sys/block/nvme*n*; do
	[ -e "$d" ] || continue
	dev=${d##*/}
	if [ -r "$d/serial" ]; then ser=$(cat "$d/serial"); else ser=$(cat "$d/device/serial"); fi
	ser=$(echo $ser)
	say "dev $dev serial=$ser lbs=$(cat $d/queue/logical_block_size) pbs=$(cat $d/queue/physical_block_size) iomin=$(cat $d/queue/minimum_io_size) ioopt=$(cat $d/queue/optimal_io_size) sectors=$(cat $d/size)"
	yes "sectorfs-vm $NONCE $ser big" | head -c "$LEN" > /tmp/big
	yes "sectorfs-vm $NONCE $ser small" | head -c 512 > /tmp/small
	w=$(run gdd if=/tmp/big of=/dev/$dev bs=$LEN count=1 seek=$OFF oflag=direct,seek_bytes conv=notrunc,fsync)
	r=$(run gdd if=/dev/$dev of=/tmp/rb bs=$LEN count=1 skip=$OFF iflag=direct,skip_bytes)
	c=$(run cmp /tmp/rb /tmp/big)
	sw=$(run gdd if=/tmp/small of=/dev/$dev bs=512 count=1 seek=$OFF2 oflag=direct,seek_bytes conv=notrunc,fsync)
	sr=$(run gdd if=/dev/$dev of=/tmp/rb bs=512 count=1 skip=$OFF2 iflag=direct,skip_bytes)
	sc=-
	[ "$sr" = ok ] && sc=$(run cmp /tmp/rb /tmp/small)
	# the last LEN bytes of the disk, then a checksum of all of it
	end=$(($(cat $d/size) * 512 - LEN))
	yes "sectorfs-vm $NONCE $ser end" | head -c "$LEN" > /tmp/end
	we=$(run gdd if=/tmp/end of=/dev/$dev bs=$LEN count=1 seek=$end oflag=direct,seek_bytes conv=notrunc,fsync)
	sum=$(gdd if=/dev/$dev bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)
	say "io $dev serial=$ser write=$w read=$r cmp=$c write512=$sw read512=$sr cmp512=$sc writeend=$we md5=$sum"
	count=$((count + 1))
done
say "done disks=$count"
sync
poweroff -f
EOF
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
