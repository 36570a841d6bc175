#!/bin/bash
# SPDX-License-Identifier: MIT
# eager-zeroing-background.sh - an eagerzeroedthick image (2 GiB, zeroed
# without offload) declared while the store is served zeroes in the
# background, and the rest of the store does not wait for it:
#  - the image is there at once (its first lookup well under the zeroing
#    time); meanwhile stat(2) (statx, AT_STATX_FORCE_SYNC, so that it
#    reaches the daemon) of another image and an open + O_DIRECT 4 KiB read
#    + close of it, sampled every 20 ms, each stay under 50 ms (the best of
#    up to three tries, the machine being shared);
#  - its progress shows in its stats while it runs ("zeroing: N% (X of
#    2 GiB)" in MNT/.stats/NAME, "zeroing": "running" and
#    zeroing_done_bytes / zeroing_total_bytes in NAME.json), and rises;
#  - data written to it while it zeroes reads back, the rest reads zeros,
#    and when it is done its map is full and flagged zeroed
#    (sectorfs-img info) and check is clean.
# Skips (77) when the store's filesystem zeroes 2 GiB in under a second,
# too fast for the zeroing to be watched; and when a latency is over the
# limit but at most twice what it is without the zeroing, with a plain
# writer doing the same I/O to a file beside the store, itself over the
# limit: then the machine is too busy for 50 ms to mean anything.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-zeroing.sh"
run_alone
requires_cmd python3 timeout cmp

LAT_MAX_MS=50

cat > "$T/sampler.py" <<'EOF'
# sampler.py IMAGE STOPFILE: every 20 ms, time statx(AT_STATX_FORCE_SYNC) of
# IMAGE and open(O_DIRECT) + 4 KiB pread + close of it, until STOPFILE
# exists; then print "stat N MAX_MS P99_MS" and "read N MAX_MS P99_MS".
import ctypes, mmap, os, random, sys, time
img, stop = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_STATX_FORCE_SYNC, STATX_BASIC_STATS = -100, 0x2000, 0x7ff
sbuf = ctypes.create_string_buffer(512)
buf = mmap.mmap(-1, 4096)
span = 4 * 1024 * 1024 // 4096
lat = {"stat": [], "read": []}
while not os.path.exists(stop):
    t0 = time.monotonic()
    if libc.statx(AT_FDCWD, img.encode(), AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, sbuf) != 0:
        sys.exit("statx %s: %s" % (img, os.strerror(ctypes.get_errno())))
    t1 = time.monotonic()
    fd = os.open(img, os.O_RDONLY | os.O_DIRECT)
    if os.preadv(fd, [buf], random.randrange(span) * 4096) != 4096:
        sys.exit("short read of %s" % img)
    os.close(fd)
    t2 = time.monotonic()
    lat["stat"].append((t1 - t0) * 1000)
    lat["read"].append((t2 - t1) * 1000)
    time.sleep(0.02)
for k in ("stat", "read"):
    v = sorted(lat[k]) or [0.0]
    print(k, len(lat[k]), "%.1f" % v[-1], "%.1f" % v[min(len(v) - 1, int(len(v) * 0.99))])
EOF

cat > "$T/writer.py" <<'EOF'
# writer.py FILE: what zeroing 2 GiB without offload does to the disk, without sectorfs:
# 1 MiB O_DIRECT writes of zeros into a reserved file, fdatasync every 256 MiB.
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
os.posix_fallocate(fd, 0, 2 << 30)
buf = mmap.mmap(-1, 1 << 20)
for i in range(2048):
    os.pwritev(fd, [buf], i << 20)
    if i % 256 == 255:
        os.fdatasync(fd)
os.close(fd)
os.unlink(sys.argv[1])
EOF

# other: an image with data, whose lookups and reads are timed
sidecar other 64M 4kn thin
start_daemon
dd if=/dev/urandom of="$MNT/other" bs=1M count=4 oflag=direct conv=notrunc status=none ||
	fail "writing other failed"

# ---- 1. declared while served ----
# zero_ez: declare ez (2 GiB), time its first lookup, follow its progress in
# the stats, write 1 MiB at three places while it zeroes, until it is done;
# meanwhile the sampler times stat and reads of other.  Sets lookup_ms,
# zero_ms, wrote; $T/progress, $T/lat.out.
zero_ez() {
	local i st
	rm -f "$T/stop"
	python3 "$T/sampler.py" "$MNT/other" "$T/stop" > "$T/lat.out" 2>&1 &
	SAMPLER=$!
	sleep 0.3
	printf '{ "size": "2G", "sector": "4kn", "provisioning": "eagerzeroedthick", "zero_offload": false }\n' \
		> "$STORE/ez.json"
	t0=$(ms)
	[ "$(stat -c %s "$MNT/ez")" = $((2 * G)) ] || fail "ez is not served with 2 GiB"
	lookup_ms=$(($(ms) - t0))
	: > "$T/progress"
	wrote=0
	for ((i = 0; i < 1200; i++)); do
		st=$(zstate ez)
		if [ "$st" = running ]; then
			grep -o 'zeroing: *[0-9]*% ([^)]*)' "$MNT/.stats/ez" >> "$T/progress"
			echo "json $(stats_key ez zeroing_done_bytes) $(stats_key ez zeroing_total_bytes)" >> "$T/progress"
		fi
		if [ $wrote = 0 ] && [ "$st" = running ]; then
			head -c $M /dev/urandom > "$T/data"
			for off in 0 $((1024 * M)) $((2047 * M)); do
				dd if="$T/data" of="$MNT/ez" bs=1M seek=$((off / M)) oflag=direct conv=notrunc status=none ||
					fail "write at $off to ez while it zeroes failed"
			done
			wrote=1
		fi
		[ "$st" = done ] && break
		# a daemon without the zeroing keys: done when every block is allocated
		[ -z "$st" ] && [ "$(stats_key ez allocated_blocks)" = "$(stats_key ez total_blocks)" ] && break
		sleep 0.05
	done
	zero_ms=$(($(ms) - t0))
	touch "$T/stop"
	wait $SAMPLER || fail "the sampler failed: $(cat "$T/lat.out")"
	SAMPLER=
	[ "$(stats_key ez allocated_blocks)" = "$(stats_key ez total_blocks)" ] ||
		fail "ez: zeroing not done after 60 s (stats say '$(zstate ez)')"
}
on_exit '[ -n "${SAMPLER:-}" ] && kill $SAMPLER'   # the sampler, if a failure left it running
# A latency limit on a machine shared with other work: up to three tries.
for attempt in 1 2 3; do
	zero_ez
	if [ $zero_ms -lt 1000 ] && [ $lookup_ms -lt 500 ]; then
		skip "the store's filesystem zeroed 2 GiB in $zero_ms ms, too fast (< 1 s) to watch the zeroing"
	fi
	echo "# try $attempt: ez: first lookup $lookup_ms ms, zeroing done after $zero_ms ms; latency of other meanwhile (samples, max ms, p99 ms): $(tr '\n' ';' < "$T/lat.out")"
	lat_ok=$(awk -v m=$LAT_MAX_MS '{ if ($3 >= m) bad = 1 } END { print bad ? 0 : 1 }' "$T/lat.out")
	[ "$lat_ok" = 1 ] || [ $attempt = 3 ] && break
	rm "$MNT/ez" || fail "rm $MNT/ez failed"
done
[ "$(zstate ez)" = done ] || not_ok "ez: NAME.json says zeroing '$(zstate ez)' once it is all allocated, not 'done'"
if [ $((lookup_ms * 4)) -lt $zero_ms ]; then
	pass "ez appears at once: first lookup $lookup_ms ms, zeroing $zero_ms ms"
else
	not_ok "the first lookup of ez took $lookup_ms ms, the zeroing $zero_ms ms: the lookup waited for it"
fi
read -r _ n_stat max_stat _ < <(grep '^stat' "$T/lat.out")
read -r _ n_read max_read _ < <(grep '^read' "$T/lat.out")
under() { awk -v v="$1" -v m=$LAT_MAX_MS 'BEGIN { exit !(v < m) }'; }
# as_busy V B: V (ms, during the zeroing) is no more than twice B (without it)
as_busy() { awk -v v="$1" -v b="$2" 'BEGIN { exit !(v <= 2 * b) }'; }
b_stat=0 b_read=0 NOISY=
if ! under "$max_stat" || ! under "$max_read"; then
	# the same I/O without sectorfs's zeroing: how busy is the machine?
	rm -f "$T/stop"
	python3 "$T/sampler.py" "$MNT/other" "$T/stop" > "$T/lat0.out" 2>&1 &
	SAMPLER=$!
	python3 "$T/writer.py" "$T/writer.dat" || fail "the baseline writer failed"
	touch "$T/stop"
	wait $SAMPLER || fail "the sampler failed: $(cat "$T/lat0.out")"
	SAMPLER=
	echo "# latency with a plain writer doing the same I/O instead (samples, max ms, p99 ms): $(tr '\n' ';' < "$T/lat0.out")"
	read -r _ _ b_stat _ < <(grep '^stat' "$T/lat0.out")
	read -r _ _ b_read _ < <(grep '^read' "$T/lat0.out")
fi
for k in stat read; do
	if [ $k = stat ]; then v=$max_stat b=$b_stat; else v=$max_read b=$b_read; fi
	if ! under "$v" && ! under "$b" && as_busy "$v" "$b"; then
		echo "# $k of another image during the zeroing: max $v ms, over $LAT_MAX_MS ms, but $b ms without it"
		NOISY="$NOISY $k: max $v ms during the zeroing, $b ms with a plain writer instead;"
	elif ! under "$v"; then
		not_ok "$k of another image during the zeroing: max $v ms (limit $LAT_MAX_MS ms; $b ms with a plain writer instead, 0 when not measured)"
	elif [ "${n_stat:-0}" -lt 10 ]; then
		not_ok "only ${n_stat:-0} latency samples in $zero_ms ms of zeroing: $(cat "$T/lat.out")"
	else
		pass "$k of another image during the zeroing: max $v ms (< $LAT_MAX_MS ms, $n_stat samples)"
	fi
done
if grep -q '^zeroing' "$T/progress"; then
	first=$(grep -m1 '^zeroing' "$T/progress" | grep -o '[0-9]*%' | tr -d %)
	last=$(grep '^zeroing' "$T/progress" | tail -n1 | grep -o '[0-9]*%' | tr -d %)
	grep -q '^zeroing: *[0-9]*% ([0-9.]* [KMG]iB of 2.0 GiB)' "$T/progress" ||
		not_ok "progress lines do not read 'zeroing: N% (X of 2 GiB)': $(sort -u "$T/progress" | head -n3)"
	read -r _ jdone jtotal < <(grep -m1 '^json' "$T/progress")
	[ "$jtotal" = $((2 * G)) ] && [ "$jdone" -gt 0 ] && [ "$jdone" -lt "$jtotal" ] ||
		not_ok "NAME.json while zeroing: zeroing_done_bytes '$jdone', zeroing_total_bytes '$jtotal'"
	[ "$last" -gt "$first" ] || not_ok "progress does not rise: $first% .. $last%"
	pass "progress in the stats: $(grep -m1 '^zeroing' "$T/progress") .. $(grep '^zeroing' "$T/progress" | tail -n1); NAME.json: zeroing \"running\", $jdone of $jtotal bytes"
else
	not_ok "no 'zeroing: N% (...)' line in .stats/ez while it zeroed"
fi
[ $wrote = 1 ] || fail "ez was never seen zeroing, so nothing was written to it meanwhile"
for off in 0 $((1024 * M)) $((2047 * M)); do
	cmp -s "$T/data" <(dd if="$MNT/ez" bs=1M skip=$((off / M)) count=1 iflag=direct status=none) ||
		fail "ez: the MiB written at $off while it zeroed does not read back"
done
cmp -s <(dd if="$MNT/ez" bs=1M skip=1 count=1023 iflag=direct status=none) <(head -c $((1023 * M)) /dev/zero) ||
	fail "ez: [1 MiB, 1 GiB) does not read as zeros"
stop_daemon
[ "$(info_key ez zeroed)" = true ] || fail "ez: map not flagged zeroed after the zeroing: $("$SECTORFS_IMG" info "$STORE/ez")"
[ "$(info_key ez allocated_blocks)" = "$(info_key ez total_blocks)" ] || fail "ez: map not full"
"$SECTORFS_IMG" check "$STORE/ez" > "$T/check.out" 2>&1 || fail "check ez: $(cat "$T/check.out")"
pass "writes during the zeroing read back, the rest reads zeros; the map is full, flagged zeroed, check clean"

fail_if_not_ok
[ -z "$NOISY" ] || skip "the rest passed, but the machine is too busy to judge the latencies:$NOISY"
