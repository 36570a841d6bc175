#!/bin/bash
# SPDX-License-Identifier: MIT
# bench-powercut.sh - sectorfs-bench powercut, the seed case's table:
# 512-byte redo writes on a 512e drive without power-loss protection lose
# flushed blocks to damaged physical sectors; 4kn with 4096-byte writes,
# and 512e with rmw_power_safe or with 4096-byte writes, never do.
#
# Proves, over --rounds 20 a configuration, --repeat 2, --seed 9000 (a
# temporary store, its own daemon):
#  - 512e, rmw_power_safe false, 512 B: flushed blocks unreadable and
#    sectors damaged in some rounds, never a flushed block with other
#    data;
#  - 512e rmw_power_safe true, 4kn 4096 B and 512e 4096 B: 0 lost, 0
#    unreadable, 0 damaged in every repeat;
#  - every configuration ran its 20 rounds in each repeat;
#  - a second run with the same seed gives the same counts, round for
#    round (the outcome is drawn from the seed), and the text table shows
#    the four configurations.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-bench.sh"

run() {
	"$SECTORFS_BENCH" powercut --daemon "$SECTORFS" --rounds 20 --repeat 2 --seed 9000 "$@" 2> "$T/err" ||
		fail "powercut $* failed: $(cat "$T/err")"
}
run --json > "$T/a.json"
jcheck "$T/a.json" "powercut --seed 9000" '
c = {x["configuration"]: x for x in d["configurations"]}
def tot(name, key): return sum(r[key] for r in c[name]["repeats"])
u = "512e, rmw_power_safe false, 512 B"
if len(c) != 4 or len(c[u]["repeats"]) != 2: bad("configurations or repeats: %r" % sorted(c))
if tot(u, "flushed_unreadable") == 0: bad("512e unsafe: no flushed block unreadable")
if tot(u, "damaged_sectors") == 0: bad("512e unsafe: no sector damaged")
if tot(u, "flushed_lost") != 0: bad("512e unsafe: flushed blocks with other data")
for name in c:
    if name != u and any(r[k] for r in c[name]["repeats"] for k in ("flushed_lost", "flushed_unreadable", "damaged_sectors")):
        bad("%s: flushed blocks hurt: %r" % (name, c[name]["repeats"]))
    for r in c[name]["repeats"]:
        if r["rounds"] != 20: bad("%s: %d rounds" % (name, r["rounds"]))
'
pass "512e unsafe: $(jq_py "$T/a.json" 'd["configurations"][0]["median"]["flushed_unreadable"]') flushed blocks" \
	"unreadable (median of 2 x 20 rounds); the other three: none hurt"

run --json > "$T/b.json"
jq_py "$T/a.json" '[c["repeats"] for c in d["configurations"]]' > "$T/a.counts"
jq_py "$T/b.json" '[c["repeats"] for c in d["configurations"]]' > "$T/b.counts"
cmp -s "$T/a.counts" "$T/b.counts" || fail "the same seed gave other counts: $(diff "$T/a.counts" "$T/b.counts")"
pass "the same seed, the same counts"

run > "$T/table.txt"
for c in "512e, rmw_power_safe false, 512 B" "512e, rmw_power_safe true, 512 B" "4kn, 4096 B" \
	"512e, rmw_power_safe false, 4096 B"; do
	grep -q "^$c " "$T/table.txt" || fail "the table has no row '$c': $(cat "$T/table.txt")"
done
grep -q "flushed unreadable" "$T/table.txt" || fail "the table has no header: $(cat "$T/table.txt")"
pass "the text table: four configurations"
