#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-odd-names.sh - image names with a newline, an escape sequence, a
# tab, a space, a backslash, UTF-8, a byte that is not UTF-8, a C1 control
# and 200 bytes: the text stats file names each as ls -b does (compared
# with GNU ls -b itself), on one line, with no control byte; sectorfs-stat
# prints one row per image, the name as ls -b does, every row and the
# header the same width (the name column widens to the longest name), no
# control byte; in the C locale too (UTF-8 then escaped in octal, as ls -b
# does there); --json parses and names every image as NAME.json does.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3
requires_built "$SECTORFS_STAT"

L200=$(printf 'L%.0s' {1..200})
NL=$'nl\nx'
ESC=$'esc\033[31mred'
TAB=$'tab\tx'
SP='a b'
BS='back\slash'
UTF=$'caf\xc3\xa9'
BAD=$'bad\xe9x'
C1=$'c1\xc2\x9bx'
NAMES=(plain "$L200" "$NL" "$ESC" "$TAB" "$SP" "$BS" "$UTF" "$BAD" "$C1")
for n in "${NAMES[@]}"; do sidecar "$n" 1M 512n thin 64K; done
start_daemon

# The ls -b oracle: an empty file of each name in a directory of its own.
UTF8_LOCALE=$(locale -a 2>/dev/null | grep -i -m1 -E '^(C|en_US)\.utf-?8$' || true)
mkdir "$T/ls"
for n in "${NAMES[@]}"; do : > "$T/ls/$n"; done
# ls_b LOCALE NAME: the name as ls -b prints it in LOCALE.
ls_b() { (cd "$T/ls" && LC_ALL=$1 ls -bd -- "$2"); }

for n in "${NAMES[@]}"; do
	cat "$MNT/.stats/$n" > "$T/one.txt" || fail "cannot read the stats of $(ls_b C "$n")"
	if [ -n "$UTF8_LOCALE" ]; then
		expect_eq "$(head -n1 "$T/one.txt")" "sectorfs stats: $(ls_b "$UTF8_LOCALE" "$n")" \
			"the first line of the stats of $(ls_b C "$n")"
	fi
	expect_eq "$(wc -l < "$T/one.txt")" "$(cat "$MNT/.stats/plain" | wc -l)" \
		"lines of the stats of $(ls_b C "$n")"
	tr -d '\n' < "$T/one.txt" | LC_ALL=C grep -q '[[:cntrl:]]' &&
		fail "the stats of $(ls_b C "$n") hold a control byte"
done
[ -n "$UTF8_LOCALE" ] || pass "text stats names as ls -b prints them # SKIP no UTF-8 locale"
pass "text stats: each name as ls -b prints it, on one line, no control byte"

# check_table FILE NAMES_FILE: one row per name of NAMES_FILE (one per line,
# escaped), in the order given, every row and the header the same width.
check_table() {
	python3 - "$1" "$2" <<'PY'
import sys, unicodedata
out = open(sys.argv[1], "rb").read()
names = open(sys.argv[2], "rb").read().decode("utf-8").split("\n")[:-1]
for b in out:
    if b < 0x20 and b != 0x0a or b == 0x7f:
        sys.exit("a control byte 0x%02x in the output" % b)
text = out.decode("utf-8")
lines = text.split("\n")
head = [i for i, l in enumerate(lines) if l.startswith("image ")]
if len(head) != 1:
    sys.exit("%d header lines" % len(head))
rows = [l for l in lines[head[0] + 1:] if l]
if len(rows) != len(names):
    sys.exit("%d rows for %d images:\n%s" % (len(rows), len(names), "\n".join(rows)))
def width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
want = width(lines[head[0]])
for name, row in zip(names, rows):
    if not row.startswith(name + " "):
        sys.exit("row for %r: %r" % (name, row[:80]))
    if width(row) != want:
        sys.exit("row for %r is %d columns wide, the header %d" % (name, width(row), want))
    if len(row[len(name):].split()) != 11:
        sys.exit("row for %r: %d columns after the name" % (name, len(row[len(name):].split())))
PY
}

# The rows come sorted by the names' bytes (strcmp), as the C locale sorts.
for loc in ${UTF8_LOCALE:+"$UTF8_LOCALE"} C; do
	: > "$T/names"
	while read -r -d '' n; do
		ls_b "$loc" "$n" >> "$T/names"
	done < <(printf '%s\0' "${NAMES[@]}" | LC_ALL=C sort -z)
	LC_ALL=$loc "$SECTORFS_STAT" "$MNT" > "$T/table" 2>"$T/err" || fail "sectorfs-stat (LC_ALL=$loc) failed: $(cat "$T/err")"
	out=$(check_table "$T/table" "$T/names" 2>&1) || fail "sectorfs-stat, LC_ALL=$loc: $out"
done
grep -q "^$L200 " "$T/table" || fail "sectorfs-stat shortened the 200-byte name"
pass "sectorfs-stat: one row per image, names as ls -b prints them, every row as wide as the header"

"$SECTORFS_STAT" "$MNT" --json > "$T/out.json" 2>"$T/err" || fail "sectorfs-stat --json failed: $(cat "$T/err")"
for n in "${NAMES[@]}"; do cp "$MNT/.stats/$n.json" "$T/ls/$n.daemon.json"; done
python3 - "$T/out.json" "$T/ls" "${NAMES[@]}" <<'PY' || fail "sectorfs-stat --json: see above"
import json, os, sys
rep = json.loads(open(sys.argv[1], encoding="utf-8").read())
shown = sorted(r["image"] for r in rep["images"])
want = sorted(json.load(open(os.path.join(sys.argv[2].encode(), os.fsencode(n) + b".daemon.json")))["name"]
              for n in sys.argv[3:])
if shown != want:
    sys.exit("images %r, NAME.json says %r" % (shown, want))
PY
pass "sectorfs-stat --json: parses, one row per image, named as NAME.json names it"

stop_daemon
pass "daemon unmounted and exited 0"
