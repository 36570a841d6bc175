#!/bin/bash
# SPDX-License-Identifier: MIT
# rename-onto-foreign.sh - no operation through the mount loses a byte of
# the store's: rename onto a file the user put in the store, and onto an
# image the daemon refused (its data and its sidecar): EEXIST, both files
# intact; create onto them: EEXIST, and the log says why.
. "$(dirname "$0")/lib.sh"
requires_fuse
requires_cmd perl
M=$((1024 * 1024))

echo "my notes" > "$STORE/notes"
head -c $M /dev/urandom > "$STORE/bad"
printf '{ "size": "1M", "sector": "512x" }\n' > "$STORE/bad.json"
sidecar x 1M 4kn thin
sidecar y 1M 4kn thin
notes_sum=$(sha256sum < "$STORE/notes")
bad_sum=$(sha256sum < "$STORE/bad")
badjson_sum=$(sha256sum < "$STORE/bad.json")
start_daemon
# rename(2) itself (mv guesses at messages from what stat says after a failure)
prename() { perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\n"' "$@"; }
expect_errno "File exists" prename "$MNT/x" "$MNT/notes"
expect_errno "File exists" prename "$MNT/y" "$MNT/bad"
expect_errno "File exists" touch "$MNT/notes"
[ "$(sha256sum < "$STORE/notes")" = "$notes_sum" ] || fail "the user's file was changed"
[ "$(sha256sum < "$STORE/bad")" = "$bad_sum" ] || fail "the refused image's data was changed"
[ "$(sha256sum < "$STORE/bad.json")" = "$badjson_sum" ] || fail "the refused image's sidecar was changed"
[ ! -e "$STORE/notes.json" ] || fail "a sidecar was made for the user's file"
[ -e "$MNT/x" ] && [ -e "$MNT/y" ] || fail "the images that were to be renamed are gone"
grep -q "notes: cannot rename onto it: notes in the store is not a served image" "$T/daemon.log" ||
	fail "the log does not say why the rename was refused: $(cat "$T/daemon.log")"
grep -q "notes: cannot create it" "$T/daemon.log" || fail "the log does not say why create was refused"
pass "rename and create onto a user's file or a refused image: EEXIST, both intact, the log says why"
stop_daemon
