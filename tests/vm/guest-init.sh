#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# guest-init.sh - /init of vm.sh's guest (busybox sh): for each disk it prints
# the geometry the driver reports, writes and reads back with GNU dd
# (/bin/gdd) O_DIRECT at the offsets the kernel command line gives
# (sfs.off, sfs.len, sfs.off2), and the md5 of the whole disk; then powers off.
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
