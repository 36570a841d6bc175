#!/bin/bash
# SPDX-License-Identifier: MIT
# profile-replay.sh - a profile measured by `sectorfs-bench sweep
# --profile-out` replays the drive it was measured on.
#
# Proves:
#  - from a plain file (O_DIRECT, outside any mount), --profile-out writes
#    a profile that the daemon takes: an image declared with it is served
#    under it;
#  - round trip: a source drive (an image under a slow profile: 5..10 ms
#    reads, 6..12 ms writes from 512 B to 1 MiB, 4 channels, 2 ms flush) is
#    swept with --profile-out; the profile written finds the 4 channels
#    and the flush; an image under that profile, swept the same way, is
#    checked with --compare against the source's sweep and --floor against
#    an image without a profile: every size agrees within 10%
#    (`sectorfs-bench sweep` exits 0), and a source faster than the
#    floor is said to be so, not compared.
# Runs in about 30 s.  The store is a tmpfs and the backing I/O buffered,
# so the host's disk (shared, busy) does not come into the figures.

. "$(dirname "$0")/lib.sh"
requires_fuse
run_alone
requires_cmd python3 mount
# AddressSanitizer's instrumentation slows the FUSE path outside the model's sleeps, and the
# channel count and size curve measured through it are the sanitizer's, not the profile's
if command -v ldd >/dev/null 2>&1 && ldd "$SECTORFS" 2>/dev/null | grep -q 'libasan'; then
	skip "the daemon is built with AddressSanitizer, whose instrumentation sets the timing"
fi
requires_built "$SECTORFS_BENCH"

mount -t tmpfs -o size=512m tmpfs "$STORE" || skip "cannot mount a tmpfs"
on_exit unmount_store

device_profile "$T/src.json" src 4 '512:5000 1M:10000' '512:6000 1M:12000' 2000
decl() { printf '{ "size": "32M", "sector": "512n", "provisioning": "eagerzeroedthick"%s }\n' \
	"${2:+, \"profile\": \"$2\"}" > "$STORE/$1.json"; }

# a profile from a plain file: quick, and it must load
dd if=/dev/zero of="$T/plain.img" bs=1M count=16 status=none
step "sweep --profile-out of a file" "$SECTORFS_BENCH" sweep "$T/plain.img" --max 64K --time 0.1 --profile-out "$T/fromfile.json"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["name"] == "fromfile" and len(p["read"]) + len(p["write"]) >= 10 and p["channels"] >= 1 and "Measured" in p["source"], p' \
	"$T/fromfile.json" || { cat "$T/step.out" >&2; fail "the profile of a file: $(tr -d ' \n' < "$T/fromfile.json")"; }
pass "--profile-out of a plain file writes a profile ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["channels"])' "$T/fromfile.json") channels)"

decl src "$T/src.json"
decl plain
decl file "$T/fromfile.json"
start_daemon -o buffered
# wait_zeroed NAME: the image's eager zeroing done, before it is swept: a write to a block
# still to be zeroed would pay the zeroing, at the profile's rate
wait_zeroed() {
	local i
	for ((i = 0; i < 100; i++)); do
		tr -d ' \n' < "$MNT/.stats/$1.json" | grep -q '"zeroing":"done"' && return
		sleep 0.1
	done
	fail "$1: eager zeroing not done after 10 s"
}
wait_zeroed src
wait_zeroed plain
grep -q '"profile":"fromfile"' <(tr -d ' \n' < "$MNT/.stats/file.json") || fail "the image under the file's profile is not served under it"
pass "the daemon serves an image under the measured profile"

sweep() { "$SECTORFS_BENCH" sweep "$MNT/$1" --max 1M --time 0.3 "${@:2}"; }
sweep src --json --profile-out "$T/measured.json" > "$T/src-sweep.json" 2>"$T/bench.err" ||
	{ cat "$T/bench.err" >&2; fail "sweep --profile-out of the source"; }
sweep plain --json > "$T/floor.json" || fail "sweep of the floor"
python3 - "$T/measured.json" <<'EOF' || fail "measured profile: $(cat "$T/measured.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["channels"] == 4, "channels %d, want 4" % p["channels"]
assert 1900 <= p["flush_us"] <= 2600, "flush %s us, want 2000" % p["flush_us"]
r = {x["size"]: x["us"] for x in p["read"]}
assert 5000 <= r["512"] <= 6500 and 10000 <= r["1M"] <= 12500, r   # a floor: the host adds, never takes
EOF
pass "the measured profile: 4 channels, the flush, the size curve"

decl rep "$T/measured.json"
sleep 1.1        # a new sidecar is seen at the next lookup after a second
[ -e "$MNT/rep" ] || fail "the replay image is not served"
wait_zeroed rep
if ! sweep rep --compare "$T/src-sweep.json" --floor "$T/floor.json" > "$T/compare.out" 2>&1; then
	cat "$T/compare.out" >&2
	fail "the replay does not agree with the source within 10%"
fi
grep -q '^24 compared: 24 within 10%, 0 off' "$T/compare.out" || { cat "$T/compare.out" >&2; fail "not every size compared"; }
pass "replay: $(tail -n1 "$T/compare.out")"

# a source faster than the floor is said to be so
python3 - "$T/src-sweep.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
for row in j["results"]:
    if row["size"] == 512:
        row["write"]["latency"]["p50_us"] = 1.0
json.dump(j, open(sys.argv[1], "w"))
EOF
sweep rep --compare "$T/src-sweep.json" --floor "$T/floor.json" --min 512 --max 512 > "$T/compare.out" 2>&1
grep -q 'write.*source faster than the floor' "$T/compare.out" || { cat "$T/compare.out" >&2; fail "a source below the floor not said"; }
pass "a source faster than the floor is not compared, and said so"
stop_daemon
