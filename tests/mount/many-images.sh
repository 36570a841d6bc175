#!/bin/bash
# SPDX-License-Identifier: MIT
# many-images.sh - a store of more images than the daemon has descriptors.
#
# Proves, with 2,000 small sidecars and the daemon under ulimit -n 256
# (soft and hard): every image is made and served (the start-up report
# says how many can be open at once: (256 - 64) / 3 = 64, less 65 more
# over io_uring); ls lists all
# of them, in the root and in .stats (two files each, and metrics), sorted, and ls -l
# gives each one its size (the attributes come with the listing); 20
# images picked at random are each opened and read with O_DIRECT, one
# written and read back; the daemon's descriptors stay under the limit
# all along (an image holds descriptors only while in use, or among those
# used last); creating an image through the mount works, and so does a
# later mount.  (nofile-raised.sh and max-open.sh: the descriptor limits.)
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd prlimit python3
requires_gnu_dd

N=2000
LIMIT=256
for ((i = 0; i < N; i++)); do
	printf '{ "size": "64K", "sector": "4kn", "provisioning": "thin", "block_size": "4K" }\n' \
		> "$STORE/$(printf 'img%04d' "$i").json"
done
DAEMON_WRAPPER=(prlimit --nofile=$LIMIT:$LIMIT --)
READY_TIMEOUT=180 start_daemon

fds() { ls "/proc/$DPID/fd" | wc -l; }
MAXFD=0
note_fds() {
	local n
	n=$(fds)
	[ "$n" -gt "$MAXFD" ] && MAXFD=$n
	[ "$n" -lt $LIMIT ] || fail "$1: the daemon holds $n descriptors, the limit is $LIMIT"
}
note_fds "after the start"
grep -qxF "sectorfs: serving $N images from $STORE at $MNT" "$T/daemon.log" ||
	fail "no summary of $N images served: $(grep -v '^sectorfs: .*: ' "$T/daemon.log" | tail -n 5)"
# over io_uring each of the 64 worker threads has a ring of its own, and one eventfd stops them
want=64
grep -q 'FUSE over io_uring' "$T/daemon.log" && want=$(( (LIMIT - 64 - 65) / 3 ))
grep -qxF "sectorfs: up to $want images open at once (descriptor limit $LIMIT)" "$T/daemon.log" ||
	fail "the report does not say how many images can be open at once: $(grep 'open at once' "$T/daemon.log")"
[ "$(ls "$STORE" | grep -cv '\.json$')" -eq $N ] || fail "not every backing file was made"
pass "$N images made and served under ulimit -n $LIMIT; $(fds) descriptors held"

# ---- listing ----
seq -f 'img%04g' 0 $((N - 1)) > "$T/want"
ls "$MNT" > "$T/got"
diff -q "$T/want" "$T/got" >/dev/null || fail "ls lists $(wc -l < "$T/got") names, not the $N images: $(diff "$T/want" "$T/got" | head -n 5)"
ls -f "$MNT" | grep -v '^\.' > "$T/got.f"       # the order readdir gives, unsorted by ls
diff -q "$T/want" "$T/got.f" >/dev/null || fail "readdir does not give every image once, in order: $(diff "$T/want" "$T/got.f" | head -n 5)"
ls "$MNT/.stats" > "$T/got.stats"
# NAME and NAME.json for every image, and the metrics file
[ "$(wc -l < "$T/got.stats")" -eq $((2 * N + 1)) ] || fail "ls .stats lists $(wc -l < "$T/got.stats") files, not $((2 * N + 1))"
sed 's/$/.json/' "$T/want" | cat - "$T/want" <(echo metrics) | LC_ALL=C sort | diff -q - <(LC_ALL=C sort "$T/got.stats") >/dev/null ||
	fail ".stats does not list NAME and NAME.json for every image, and metrics"
ls -l "$MNT" > "$T/ls-l"
[ "$(grep -c ' 65536 .* img[0-9]\{4\}$' "$T/ls-l")" -eq $N ] ||
	fail "ls -l does not show $N images of 65536 bytes: $(grep -v ' 65536 ' "$T/ls-l" | head -n 3)"
note_fds "after the listings"
pass "ls, ls -f, ls .stats and ls -l list all $N images"

# ---- open and read 20 at random ----
for i in $(shuf -i 0-$((N - 1)) -n 20); do
	name=$(printf 'img%04d' "$i")
	dd if="$MNT/$name" of="$T/blk" bs=4096 count=16 iflag=direct status=none || fail "reading $name failed"
	cmp -s "$T/blk" <(head -c 65536 /dev/zero) || fail "$name does not read as zeros"
	note_fds "after reading $name"
done
head -c 65536 /dev/urandom > "$T/data"
w=$(printf 'img%04d' "$(shuf -i 0-$((N - 1)) -n 1)")
dd if="$T/data" of="$MNT/$w" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "writing $w failed"
for i in $(shuf -i 0-$((N - 1)) -n 100); do       # push it out of the cache
	dd if="$MNT/$(printf 'img%04d' "$i")" of=/dev/null bs=4096 count=1 iflag=direct status=none
done
dd if="$MNT/$w" of="$T/back" bs=64K iflag=direct status=none || fail "reading $w back failed"
cmp -s "$T/data" "$T/back" || fail "$w does not read back what was written, after 100 other images were opened"
note_fds "after the reads"
pass "20 random images opened and read, one written and read back after 100 others; at most $MAXFD descriptors"

# ---- create, remount ----
touch "$MNT/new" || fail "touch $MNT/new failed"
[ -e "$MNT/new" ] && [ -f "$STORE/new" ] && [ -f "$STORE/new.json" ] || fail "new image not made"
note_fds "after the create"
stop_daemon
start_daemon
[ "$(ls "$MNT" | wc -l)" -eq $((N + 1)) ] || fail "after a remount: $(ls "$MNT" | wc -l) images listed"
cmp -s "$T/data" <(dd if="$MNT/$w" bs=64K iflag=direct status=none) || fail "$w lost its data at the remount"
note_fds "after the remount"
stop_daemon
pass "an image created through the mount; a later mount serves $((N + 1)); at most $MAXFD descriptors of $LIMIT"
