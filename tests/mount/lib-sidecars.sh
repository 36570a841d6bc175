# SPDX-License-Identifier: MIT
# lib-sidecars.sh - what the tests of the sidecars a daemon finds in its
# store share: a store of good sidecars (the three provisionings, an
# explicit sector pair, a raw file to import) and one of bad ones, the
# check of the one log line each bad one gets, and sums of ranges.
# Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-sidecars.sh"
#
# It requires FUSE, sha256sum and du.

requires_fuse
requires_cmd sha256sum du
M=$((1024 * 1024))

# sum FILE OFF LEN: sha256 of LEN bytes at OFF (64 KiB reads).
sum() { dd if="$1" bs=64K skip=$(($2 / 65536)) count=$(($3 / 65536)) status=none | sha256sum | cut -d' ' -f1; }
zsum() { head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1; }


# expect_one_line FILE KEY REASON_RE: exactly one new log line names FILE;
# it must also name KEY (unless empty) and match REASON_RE.
expect_one_line() {
	local lines n
	lines=$(log_new | grep -F -- "$1")
	n=$(printf '%s' "$lines" | grep -c .)
	[ "$n" -eq 1 ] || fail "$1: expected one log line, got $n: $lines"
	[ -z "$2" ] || printf '%s' "$lines" | grep -qF -- "$2" || fail "$1: log line does not name key $2: $lines"
	printf '%s' "$lines" | grep -qiE -- "$3" || fail "$1: log line does not give the reason ($3): $lines"
}

# good_store: the good sidecars (GOOD), and the raw file gimport made
# elsewhere (data, a hole, data; 3 MiB in a 4 MiB disk), a copy of it in
# $T/gimport.orig.
GOOD="gexplicit gezt gimport gthin gzt"
good_store() {
	sidecar gthin 8M 512n thin
	sidecar gzt 8M 4kn zeroedthick 64K
	sidecar gezt 8M 512e eagerzeroedthick 64K
	printf '{ "size": "8M", "logical_sector_size": 2048, "physical_sector_size": 8192, "block_size": "64K" }\n' \
		> "$STORE/gexplicit.json"
	# A raw file made elsewhere: data, a hole, data; 3 MiB in a 4 MiB disk.
	dd if=/dev/urandom of="$STORE/gimport" bs=1M count=1 status=none
	dd if=/dev/urandom of="$STORE/gimport" bs=1M seek=2 count=1 conv=notrunc status=none
	cp --sparse=always "$STORE/gimport" "$T/gimport.orig"
	sidecar gimport 4M 512n thin 64K
}

# serve_good_store: good_store, served.
serve_good_store() {
	good_store
	start_daemon
}

# bad_store: sidecars that are each wrong in one way (BAD): invalid JSON,
# an unknown key, a size not a multiple of the sector, physical < logical,
# a symlink, a FIFO, a 1 MiB file.
BAD="badbig badfifo badjson badkey badlink badphys badsize"
bad_store() {
	printf '{ "size": "1M", \n' > "$STORE/badjson.json"
	printf '{ "size": "1M", "colour": "red" }\n' > "$STORE/badkey.json"
	printf '{ "size": 1000, "sector": "4kn" }\n' > "$STORE/badsize.json"
	printf '{ "size": "1M", "logical_sector_size": 4096, "physical_sector_size": 512 }\n' > "$STORE/badphys.json"
	printf '{ "size": "1M", "sector": "512n", "provisioning": "thin" }\n' > "$T/elsewhere.json"
	ln -s "$T/elsewhere.json" "$STORE/badlink.json"
	mkfifo "$STORE/badfifo.json"
	# valid JSON, only too big
	{ printf '{ "size": "1M" }'; head -c $M /dev/zero | tr '\0' ' '; echo; } > "$STORE/badbig.json"
}
