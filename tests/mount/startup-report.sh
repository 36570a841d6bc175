#!/bin/bash
# SPDX-License-Identifier: MIT
# startup-report.sh - what a start tells its user.  Started in the
# background (no -f), sectorfs has printed on stderr by the time it returns
# 0 one line for each image it refuses (a sidecar with a misspelt key
# names the file and the key; a bad sector format names it, once) and the
# summary "sectorfs: serving N images from STORE at MNT (K refused: see
# above)"; with nothing refused the summary has no parenthesis, and a
# foreground start prints it too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-start.sh"
requires_fuse
requires_cmd timeout

sidecar a 4M 512n thin 64K
sidecar b 8M 4kn thin
printf '{ "size": "1M", "sectr": "4kn" }\n' > "$STORE/typo.json"

bg_start "$T/start.err" "$STORE" "$MNT"
[ $RC -eq 0 ] || fail "background start with a misspelt sidecar exited $RC: $(cat "$T/start.err")"
mountpoint -q "$MNT" || fail "$MNT not mounted after sectorfs returned 0"
line=$(grep -F typo.json "$T/start.err")
[ "$(printf '%s\n' "$line" | grep -c sectr)" -eq 1 ] ||
	fail "expected one line naming typo.json and the key 'sectr' on stderr, got: $(cat "$T/start.err")"
want="sectorfs: serving 2 images from $STORE at $MNT (1 refused: see above)"
grep -qxF "$want" "$T/start.err" || fail "no summary '$want' on stderr, got: $(cat "$T/start.err")"
[ "$(grep -c '^sectorfs: serving' "$T/start.err")" -eq 1 ] || fail "the summary is printed more than once: $(cat "$T/start.err")"
[ "$(grep -n typo.json "$T/start.err" | head -n1 | cut -d: -f1)" -lt "$(grep -n '^sectorfs: serving' "$T/start.err" | cut -d: -f1)" ] ||
	fail "the summary comes before the line it points at: $(cat "$T/start.err")"
[ -e "$MNT/a" ] && [ -e "$MNT/b" ] && [ ! -e "$MNT/typo" ] || fail "served images are not a and b: $(ls "$MNT")"
stop_bg report
pass "background start, misspelt sidecar: exit 0; stderr: $(sed "s|$T|\$T|g" "$T/start.err" | tr '\n' '|')"

rm "$STORE/typo.json"
bg_start "$T/start.err" "$STORE" "$MNT"
[ $RC -eq 0 ] || fail "background start exited $RC: $(cat "$T/start.err")"
want="sectorfs: serving 2 images from $STORE at $MNT"
grep -qxF "$want" "$T/start.err" || fail "no summary '$want' on stderr, got: $(cat "$T/start.err")"
stop_bg report
pass "nothing refused: '$(sed "s|$T|\$T|g" "$T/start.err")'"

start_daemon
grep -qxF "sectorfs: serving 2 images from $STORE at $MNT" "$T/daemon.log" ||
	fail "foreground start: no summary in its log: $(cat "$T/daemon.log")"
stop_daemon
pass "foreground start prints the summary too"

# ---- a bad sidecar, started in the background: its error on stderr ----
echo '{"size": "1M", "sector": "512x"}' > "$STORE/bad.json"
start_logged "with a bad sidecar" "bad sidecar"
[ ! -e "$MNT/bad" ] || fail "image of the bad sidecar is served"
lines=$(grep -F bad.json "$T/start.err")
[ "$(printf '%s\n' "$lines" | grep -c 512x)" -eq 1 ] ||
	fail "expected one line about bad.json and 512x on stderr, got: $(cat "$T/start.err")"
stop_bg "bad sidecar"
pass "bad sidecar, background start: on stderr: $lines"
