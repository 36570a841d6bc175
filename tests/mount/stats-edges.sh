#!/bin/bash
# SPDX-License-Identifier: MIT
# stats-edges.sh - the corners of the .stats files and of image names.
#
# Proves:
#  - "reset" is a command at any offset: `echo reset >>` (bash, and dash
#    when installed) and a second reset through the same descriptor work;
#    anything else written at an offset still fails with EINVAL;
#  - the errno a user expects: truncating a text stats file to 0 works
#    (echo reset > does it) and to any other size fails with EPERM, by
#    descriptor and by path; the JSON file gives EACCES; mkfifo and mknod
#    give EPERM; rmdir .stats gives EPERM and .stats stays; a name longer
#    than 200 bytes gives ENAMETOOLONG to lookup (stat), create (touch,
#    truncate), rename (mv) and in .stats (no stats of a shorter image by a
#    prefix of the name); a name of exactly 200 bytes works; statfs says
#    names have at most 200 bytes;
#  - image names with a newline, an escape sequence, a tab, a space, a
#    backslash, UTF-8, a byte that is not UTF-8, a C1 control and 200
#    bytes: the text stats file names each as ls -b does (compared with
#    GNU ls -b itself), on one line, with no control byte; sectorfs-stat
#    prints one row per image, the name as ls -b does, every row and the
#    header the same width (the name column widens to the longest name),
#    no control byte; in the C locale too (UTF-8 then escaped in octal, as
#    ls -b does there); --json parses and names every image as NAME.json
#    does.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd python3 truncate mkfifo

requires_built "$SECTORFS_STAT"


# wr IMG: one 4 KiB O_DIRECT write at 0.
wr() {
	dd if=/dev/zero of="$MNT/$1" bs=4096 count=1 oflag=direct conv=notrunc status=none ||
		fail "$1: a write failed"
}

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

# ---- reset at any offset ----

wr plain
wr plain
expect_eq "$(stats_key plain writes)" 2 "plain: writes"
echo reset >> "$MNT/.stats/plain" || fail "echo reset >> .stats/plain failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after echo reset >>"
if command -v dash >/dev/null 2>&1; then
	wr plain
	dash -c 'echo reset >> "$1"' _ "$MNT/.stats/plain" 2>"$T/err" ||
		fail "dash: echo reset >> .stats/plain failed: $(cat "$T/err")"
	expect_eq "$(stats_key plain writes)" 0 "plain: writes after dash's echo reset >>"
fi
exec 3>"$MNT/.stats/plain"
wr plain
echo reset >&3 || fail "a first reset through one descriptor failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after the first reset through fd 3"
wr plain
echo reset >&3 || fail "a second reset through the same descriptor failed"
expect_eq "$(stats_key plain writes)" 0 "plain: writes after the second reset through fd 3"
wr plain
expect_errno "Invalid argument" bash -c 'echo foo >&3' 3>>"$MNT/.stats/plain"
expect_errno "Invalid argument" bash -c 'echo resetx >> "$1"' _ "$MNT/.stats/plain"
exec 3>&-
expect_eq "$(stats_key plain writes)" 1 "plain: writes after refused commands"
pass "reset at any offset: echo reset >> and a second reset on one descriptor work; other text is EINVAL"

# ---- errno ----

expect_errno "Operation not permitted" truncate -s 100 "$MNT/.stats/plain"
truncate -s 0 "$MNT/.stats/plain" || fail "truncate -s 0 of the text stats file failed"
expect_eq "$(stats_key plain writes)" 1 "plain: writes after truncate -s 0 of its stats file"
echo reset > "$MNT/.stats/plain" || fail "echo reset > .stats/plain failed"
expect_errno "Permission denied" truncate -s 0 "$MNT/.stats/plain.json"
python3 - "$MNT/.stats/plain" "$MNT/.stats/plain.json" <<'PY' || fail "truncate by path: see above"
import errno, os, sys
text, js = sys.argv[1], sys.argv[2]
def err(path, size):
    try:
        os.truncate(path, size)
        return 0
    except OSError as e:
        return e.errno
got = (err(text, 0), err(text, 100), err(js, 0), err(js, 100))
want = (0, errno.EPERM, errno.EACCES, errno.EACCES)
if got != want:
    sys.exit("truncate(2) of text to 0 and 100, of JSON to 0 and 100: errno %s, want %s" % (got, want))
PY
pass "truncate: text stats file to 0 works, to 100 is EPERM; the JSON file is EACCES"

expect_errno "Operation not permitted" mkfifo "$MNT/fifo"
if [ "$(id -u)" -eq 0 ]; then
	expect_errno "Operation not permitted" mknod "$MNT/blk" b 7 0
	expect_errno "Operation not permitted" mknod "$MNT/chr" c 1 3
fi
[ -e "$MNT/fifo" ] && fail "mkfifo left a file"
expect_errno "Operation not permitted" rmdir "$MNT/.stats"
[ -d "$MNT/.stats" ] || fail ".stats is gone after rmdir"
pass "mkfifo and mknod give EPERM; rmdir .stats gives EPERM and .stats stays"

L201="${L200}x"
L300="$L200$(printf 'M%.0s' {1..100})"
for n in "$L201" "$L300"; do
	expect_errno "File name too long" stat "$MNT/$n"
	expect_errno "File name too long" touch "$MNT/$n"
	expect_errno "File name too long" truncate -s 1M "$MNT/$n"
	expect_errno "File name too long" mv "$MNT/plain" "$MNT/$n"
	expect_errno "File name too long" stat "$MNT/.stats/$n"
	expect_errno "File name too long" stat "$MNT/.stats/$n.json"
	expect_errno "File name too long" cat "$MNT/.stats/$n.json"
done
[ -e "$MNT/plain" ] || fail "plain is gone after a refused rename"
stat "$MNT/$L200" >/dev/null || fail "a name of 200 bytes does not stat"
head -n1 "$MNT/.stats/$L200" | grep -q "^sectorfs stats: $L200\$" || fail "the stats of the 200-byte name"
truncate -s 1M "$MNT/new$L200" 2>/dev/null && fail "a name of 203 bytes was created"
truncate -s 1M "$MNT/${L200:3}new" || fail "a new image with a name of 200 bytes could not be created"
rm "$MNT/${L200:3}new" || fail "cannot remove the new 200-byte image"
expect_eq "$(stat -f -c %l "$MNT")" 200 "statfs: the longest name"
pass "names over 200 bytes: ENAMETOOLONG for stat, touch, truncate, mv and in .stats; 200 bytes work; statfs says 200"

# ---- names in text output ----

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
