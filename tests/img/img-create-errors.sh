#!/bin/bash
# SPDX-License-Identifier: MIT
# img-create-errors.sh - sectorfs-img create refuses bad sizes, sector
# formats, provisionings, block sizes, geometries, names, a missing store
# or --from file, a --from file larger than -s, and a file in another
# image format (unless --raw), each with its exact message and exit 1, and
# leaves nothing behind.
. "$(dirname "$0")/lib.sh"

img 1 create -s 8X "$STORE/bad"
err_is "sectorfs-img create: invalid size '8X' for -s: use a number of bytes, optionally followed by K, M, G or T (e.g. 8G)"
img 1 create -s 99999999999T "$STORE/bad"
err_is "sectorfs-img create: size '99999999999T' for -s is too large"
img 1 create -s 1000 -f 4kn "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'size': 1000 is not a multiple of the logical sector size 4096"
img 1 create -s 8M -f 9kn "$STORE/bad"
err_is "sectorfs-img create: unknown sector format '9kn': use 512n, 512e or 4kn, or --logical and --physical"
img 1 create -s 8M -p fat "$STORE/bad"
err_is "sectorfs-img create: unknown provisioning 'fat': use thin, zeroedthick or eagerzeroedthick"
img 1 create -s 8M -b 3K "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'block_size': 3072 is not a power of two"
img 1 create -s 8M -f 4kn -b 1K "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'block_size': 1024 is smaller than the physical sector size 4096"
img 1 create -s 8M --logical 4096 "$STORE/bad"
err_is "sectorfs-img create: --logical and --physical go together"
img 1 create -s 8M --logical 4096 --physical 512 "$STORE/bad"
err_is "sectorfs-img: cannot create $STORE/bad: $STORE/bad.json: key 'physical_sector_size': 512 is smaller than the logical sector size 4096"
img 1 create -s 8M -f 4kn --logical 4096 --physical 4096 "$STORE/bad"
err_is "sectorfs-img create: -f and --logical/--physical exclude each other"
img 1 create -s 8M "$STORE/bad.json"
err_is "sectorfs-img: $STORE/bad.json: invalid image name 'bad.json': a name must not start with '.', end in '.json' or be longer than 200 characters"
img 1 create -s 8M "$T/nostore/bad"
err_is "sectorfs-img: $T/nostore: cannot open store: No such file or directory"
img 1 create --from "$T/nofile" "$STORE/bad"
err_is "sectorfs-img: $T/nofile: cannot open: No such file or directory"
head -c 10000 /dev/urandom > "$T/small.raw"
img 1 create -s 4K --from "$T/small.raw" "$STORE/bad"
err_is "sectorfs-img: $STORE/bad: size 4096 is smaller than $T/small.raw (10000 bytes)"
# a file that starts like another image format is not taken for raw, unless --raw says so
printf 'QFI\373\0\0\0\3' > "$T/fake.qcow2"
head -c 65536 /dev/zero >> "$T/fake.qcow2"
img 1 create --from "$T/fake.qcow2" "$STORE/bad"
err_is "sectorfs-img: $T/fake.qcow2 is a qcow2 image: convert it with 'qemu-img convert -O raw' first (or give --raw to copy its bytes as they are)"
[ ! -e "$STORE/bad" ] && [ ! -e "$STORE/bad.json" ] || fail "a refused --from left files"
img 0 create --from "$T/fake.qcow2" --raw "$STORE/fakeraw"
rm -f "$STORE/fakeraw" "$STORE/fakeraw.json" "$STORE/.sectorfs/fakeraw.map"
gone bad
pass "create refuses bad arguments and leaves nothing"
