#!/bin/sh
# SPDX-License-Identifier: MIT
# install-deps.sh - install what building and testing sectorfs needs, from
# Debian's packages.  Run as root on Debian 12; does nothing when all is there.
set -e
PKGS="build-essential autoconf automake pkg-config libfuse3-dev fuse3 libjansson-dev liburing-dev
libcriterion-dev fio e2fsprogs xfsprogs attr util-linux coreutils qemu-system-x86 xz-utils
clang libclang-rt-14-dev valgrind
qemu-utils nbdkit libnbd-bin python3-libnbd libvirt-clients libxml2-utils python3-prometheus-client
debhelper dpkg-dev lintian systemd librsvg2-bin"
missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps.sh: installed:$missing"
