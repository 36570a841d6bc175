# SPDX-License-Identifier: MIT
# lib-power.sh - what the power-cut tests share: sidecars with failure
# keys, arming and awaiting a cut, a budget of rounds that skips on a slow
# machine instead of flaking, and one round of ext4 over a loop device.
# Source it after lib.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-power.sh"
#
# The python helpers it runs are in tests/mount/power/; the loop devices
# are lib-loop.sh's, which it sources.

. "$(dirname "${BASH_SOURCE[0]}")/lib-loop.sh"

POWER_PY="$top_srcdir/tests/mount/power"

# fail_sidecar NAME SIZE SECTOR 'JSON KEYS': a thin sidecar with more keys ("write_cache": ...).
fail_sidecar() {
	printf '{ "size": "%s", "sector": "%s", "provisioning": "thin", "block_size": "1M"%s }\n' \
		"$2" "$3" "${4:+, $4}" > "$STORE/$1.json"
}

# power_of IMG: what user.sectorfs.power says.
power_of() { getfattr --absolute-names --only-values -n user.sectorfs.power "$1" 2>/dev/null; }

# set_attr IMG KEY VALUE: set user.sectorfs.KEY, or fail saying so.
set_attr() {
	setfattr -n "user.sectorfs.$2" -v "$3" "$1" || fail "setfattr user.sectorfs.$2=$3 on $1 refused"
}

# arm_cut IMG TRIGGER SEED POLICY: the next cut's seed and policy, then its trigger (or "off").
arm_cut() {
	set_attr "$1" power_seed "$3"
	set_attr "$1" power_cut_policy "$4"
	set_attr "$1" power "$2"
}

# wait_power IMG STATE SECS: wait until the power is STATE; 1 when it is not after SECS.
wait_power() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		[ "$(power_of "$1")" = "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# last_cut NAME KEY: a key of the last cut's report in $MNT/.stats/NAME.json.
last_cut() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failures"]["last_cut"][sys.argv[2]])' \
		"$MNT/.stats/$1.json" "$2"
}

# rounds_begin BUDGET: start the clock of a test of rounds that may take BUDGET seconds.
# round_budget R: before round R (from 1): skip the test, saying so, when the rounds so far
# say that R and the ones left cannot finish within the budget (a slow or busy machine).
rounds_begin() { ROUNDS_T0=$SECONDS; ROUNDS_BUDGET=$1; }
round_budget() {
	local done=$(($1 - 1)) used=$((SECONDS - ROUNDS_T0))
	[ "$done" -gt 0 ] || return 0
	if [ $((used + used * (ROUNDS - done) / done)) -gt "$ROUNDS_BUDGET" ]; then
		skip "slow machine: $done rounds took ${used} s, $ROUNDS would take more than the ${ROUNDS_BUDGET} s budget (POWER_BUDGET)"
	fi
}

# round_seed R BASE: before round R: round_budget R, then seed=BASE+R, which also seeds $RANDOM
# (the round's trigger comes from it, so the seed reproduces the round), and policy: random:0.5
# in the odd rounds, lose-all in the even ones.
round_seed() {
	round_budget "$1"
	seed=$(($2 + $1))
	RANDOM=$seed
	if (($1 % 2)); then policy=random:0.5; else policy=lose-all; fi
}

# ext4_rounds_start [sqlite]: what a test of ext4_round rounds does before the first: FUSE, loop
# devices and the tools (python3's sqlite3 module too with "sqlite") or skip, ROUNDS
# (POWER_ROUNDS, 20), the disk d (256M, 4kn, a volatile cache) served, and rounds_begin with
# POWER_BUDGET (300) seconds.
ext4_rounds_start() {
	requires_fuse
	requires_loop
	requires_cmd python3 mkfs.ext4 e2fsck setfattr getfattr timeout
	if [ "${1:-}" = sqlite ]; then
		python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"
	fi
	ROUNDS=${POWER_ROUNDS:-20}
	fail_sidecar d 256M 4kn '"write_cache": "volatile"'
	start_daemon
	rounds_begin "${POWER_BUDGET:-300}"
}

# ext4_round NAME MOUNT_OPTS SEED TRIGGER POLICY [WRITER CHECKER [ARG]]: one round over $MNT/NAME
# (4096-byte sectors): a new ext4 mounted with MOUNT_OPTS, WRITER (a script of power/,
# fsync_writer.py by default, given DIR LOG SEED [ARG]) writing until the cut TRIGGER (seed SEED,
# POLICY; "off@SECS": power off SECS seconds after the writer starts) takes the power, unmount,
# the writer killed as the power goes (the machine dies with it; its page cache is lost when the
# unmount cannot write it), power on, mount again (the journal replayed), CHECKER
# (fsync_check.py, given DIR LOG) run on
# what is left, unmount, e2fsck -fn.  Sets R_MOUNT (0: the ext4 mounted again), R_FSYNCED and
# R_LOST (what the writer logged as durable, of it missing or wrong), R_CHECK (the checker's
# third word, if any), R_FSCK (e2fsck's exit code), R_UNFLUSHED and R_LOSTW (unflushed writes at
# the cut, lost whole), and adds R_UNFLUSHED to ROUNDS_UNFLUSHED (the rounds' total).
ext4_round() {
	local img="$MNT/$1" wlog="$T/writer.$3.log" writer=${6:-fsync_writer.py} checker=${7:-fsync_check.py} wpid
	if [ -z "${FS:-}" ]; then
		FS="$T/fs"
		mkdir -p "$FS"
		on_exit "mountpoint -q $FS && { timeout 20 umount $FS || umount -l $FS; }"
	fi
	attach_loop "$img" 4096
	step "mkfs.ext4 (round seed $3)" mkfs.ext4 -q -F "$DEV"
	step "mount -o $2" mount -o "$2" "$DEV" "$FS"
	mkdir "$FS/w" && sync -f "$FS/w" || fail "cannot make the writer's directory"
	: > "$wlog"
	case $4 in
	off@*) arm_cut "$img" on "$3" "$5" ;;
	*) arm_cut "$img" "$4" "$3" "$5" ;;
	esac
	python3 "$POWER_PY/$writer" "$FS/w" "$wlog" "$3" ${8:+"$8"} &
	wpid=$!
	# the power goes for the whole machine: the writer dies with it, nothing it does after counts
	case $4 in off@*) sleep "${4#off@}"; { kill -9 "$wpid" && wait "$wpid"; } 2>/dev/null; set_attr "$img" power off ;; esac
	wait_power "$img" off 60 || fail "round seed $3: no cut within 60 s of $4"
	{ kill -9 "$wpid" && wait "$wpid"; } 2>/dev/null
	step "umount after the cut" umount "$FS"
	detach_loop "$DEV"
	set_attr "$img" power on
	R_UNFLUSHED=$(last_cut "$1" unflushed_writes)
	ROUNDS_UNFLUSHED=$((${ROUNDS_UNFLUSHED:-0} + R_UNFLUSHED))
	R_LOSTW=$(last_cut "$1" lost_writes)
	attach_loop "$img" 4096
	R_MOUNT=0 R_FSYNCED=0 R_LOST=0 R_CHECK=
	if timeout 60 mount "$DEV" "$FS" 2>"$T/mount.err"; then
		python3 "$POWER_PY/$checker" "$FS/w" "$wlog" > "$T/check.out"   # done before the umount
		read -r R_FSYNCED R_LOST R_CHECK < "$T/check.out"
		step "umount after the check" umount "$FS"
	else
		R_MOUNT=1
	fi
	R_FSCK=0
	timeout 120 e2fsck -fn "$DEV" > "$T/e2fsck.$3.out" 2>&1 || R_FSCK=$?
	detach_loop "$DEV"
}

# round_intact WHAT LOST: fail, naming the round by WHAT, when the last ext4_round's ext4 did not
# mount again, lost what its writer logged as durable ("R_LOST of R_FSYNCED LOST"), or left
# errors e2fsck -fn finds.
round_intact() {
	[ "$R_MOUNT" = 0 ] || fail "$1: ext4 does not mount after the cut: $(cat "$T/mount.err")"
	[ "$R_LOST" = 0 ] || fail "$1: $R_LOST of $R_FSYNCED $2"
	[ "$R_FSCK" = 0 ] || fail "$1: e2fsck -fn exit $R_FSCK: $(cat "$T/e2fsck.$seed.out")"
}

# sqlite_rounds SYNC BASE CUT CHECK: the rounds of a SQLite test, after ext4_rounds_start sqlite:
# round R seeded BASE+R (round_seed), its cut drawn from $RANDOM after that (so the seed
# reproduces the round): CUT "writes", after 20 to 619 writes; "time", 0.1 to 1.9 s after the
# writer starts; ext4_round of sqlite_writer.py committing with PRAGMA synchronous=SYNC, checked
# by sqlite_check.py; the round's row of the table; then CHECK, the test's function, given the
# round and its cut.  Sets ROWS: the committed rows of every round.
sqlite_rounds() {
	local r trig fmt head
	case $3 in
	writes) fmt='%-6s %-22s %-10s %9s %9s %5s %9s\n' head=trigger ;;
	time) fmt='%-6s %-10s %-10s %9s %9s %6s %9s\n' head=cut ;;
	esac
	ROWS=0
	# shellcheck disable=SC2059 # the format is one of the two above
	printf "$fmt" round "$head" policy unflushed committed lost integrity
	for ((r = 1; r <= ROUNDS; r++)); do
		round_seed "$r" "$2"
		case $3 in
		writes) trig="cut-after-writes:$((RANDOM % 600 + 20))" ;;
		time) trig="off@$((RANDOM % 2)).$((RANDOM % 9 + 1))" ;;
		esac
		ext4_round d "barrier=1" "$seed" "$trig" "$policy" sqlite_writer.py sqlite_check.py "$1"
		# shellcheck disable=SC2059
		printf "$fmt" "$r" "$trig" "$policy" "$R_UNFLUSHED" "$R_FSYNCED" "$R_LOST" "$R_CHECK"
		ROWS=$((ROWS + R_FSYNCED))
		"$4" "$r" "$trig"
	done
}

# rounds_tested: fail when no cut of the rounds found a write in the cache (ROUNDS_UNFLUSHED).
rounds_tested() {
	[ "${ROUNDS_UNFLUSHED:-0}" -gt 0 ] || fail "no cut found a write in the cache: the rounds tested nothing"
}
