#!/bin/bash
# SPDX-License-Identifier: MIT
# eager-zeroing-resume.sh - an unmount during eager zeroing stops it: the
# daemon exits 0 with the map recording part of the image zeroed, not all
# of it (sectorfs-img check notes the unfinished zeroing); the next start
# comes up while that image, and one declared before the start, are still
# zeroing (its summary counts them), resumes from what the map recorded
# (not from 0) and finishes both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-zeroing.sh"
run_alone

# other: an image that is not zeroing, counted in the start-up summary
sidecar other 64M 4kn thin
printf '{ "size": "2G", "sector": "512e", "provisioning": "eagerzeroedthick", "zero_offload": false }\n' \
	> "$STORE/ez2.json"
start_daemon
stat "$MNT/ez2" > /dev/null || fail "ez2 is not served"
for ((i = 0; i < 400; i++)); do
	pct=$(grep -o 'zeroing: *[0-9]*%' "$MNT/.stats/ez2" | grep -o '[0-9]*')
	[ -n "$pct" ] && [ "$pct" -ge 15 ] && break
	[ "$(zstate ez2)" = done ] && fail "ez2 was zeroed before it could be interrupted"
	sleep 0.01
done
[ -n "$pct" ] || fail "ez2: no zeroing progress in its stats"
t0=$(ms)
fusermount3 -u "$MNT" || fail "fusermount3 -u during the zeroing failed"
wait_daemon "unmount during the zeroing"
stop_ms=$(($(ms) - t0))
zeroed=$(info_key ez2 zeroed)
alloc=$(info_key ez2 allocated_blocks)
total=$(info_key ez2 total_blocks)
[ "$zeroed" = false ] && [ "$alloc" -gt 0 ] && [ "$alloc" -lt "$total" ] ||
	fail "after an unmount at $pct% the map says zeroed=$zeroed, $alloc of $total blocks: the daemon did not stop the zeroing"
"$SECTORFS_IMG" check "$STORE/ez2" > "$T/check.out" 2>&1 || fail "check ez2 after the unmount: $(cat "$T/check.out")"
grep -q "note: eager zeroing not finished" "$T/check.out" || fail "check ez2 does not note the unfinished zeroing: $(cat "$T/check.out")"
pass "unmount at $pct%: the daemon exits 0 after $stop_ms ms; the map records $alloc of $total blocks zeroed; check: $(grep note "$T/check.out" | sed 's/.*note: //')"

# ---- 3. the next start: resumes it, and zeroes one declared meanwhile ----
printf '{ "size": "1G", "sector": "4kn", "provisioning": "eagerzeroedthick", "zero_offload": false }\n' \
	> "$STORE/ez3.json"
start_daemon
s2=$(zstate ez2)
s3=$(zstate ez3)
[ "$s2" = running ] && [ "$s3" = running ] ||
	fail "the mount came up with ez2 '$s2' and ez3 '$s3': it waited for their zeroing"
grep -qxF "sectorfs: serving 3 images from $STORE at $MNT (2 eager zeroing in the background)" "$T/daemon.log" ||
	fail "the start-up summary does not count the two images zeroing: $(grep 'serving' "$T/daemon.log" | tail -n1)"
done2=$(stats_key ez2 zeroing_done_bytes)
bs2=$(stat_val %o "$MNT/ez2")
[ "$done2" -ge $((alloc * 1024 * 1024)) ] || fail "ez2 resumed from $done2 bytes, the map recorded $alloc blocks"
wait_zeroed ez2 60
wait_zeroed ez3 60
stop_daemon
for img in ez2 ez3; do
	[ "$(info_key $img zeroed)" = true ] || fail "$img: not flagged zeroed after the restart"
done
pass "the next start serves while ez2 (from $((done2 / M)) MiB) and ez3 zero; both finish"
