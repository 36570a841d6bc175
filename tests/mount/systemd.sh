#!/bin/bash
# SPDX-License-Identifier: MIT
# systemd.sh - the unit template sectorfs@.service and its sample conf.
#
# Proves:
#  - systemd-analyze verify accepts the unit (as the build made it, and
#    instantiated, pointing at the daemon of this tree); skips with 77
#    without systemd-analyze;
#  - its ExecStart and ExecStop do what the unit promises, run as systemd
#    runs them (the conf's variables in the environment, %i the instance,
#    $OPTIONS split into words, $$ a literal $, MAINPID from PIDFile):
#    ExecStart returns 0 only with the PIDFile written, naming a live
#    sectorfs, and the mount serving the conf's STORE with its OPTIONS;
#    ExecStop returns only once that daemon has exited (0) and unmounted,
#    and what was written before is in the store;
#  - the sample conf sets STORE, MOUNTPOINT and OPTIONS and nothing else.
. "$(dirname "$0")/lib.sh"
requires_cmd systemd-analyze
UNIT_IN="$top_srcdir/systemd/sectorfs@.service.in"
UNIT="$top_builddir/systemd/sectorfs@.service"
CONF="$top_srcdir/systemd/example.conf"
[ -f "$UNIT" ] || fail "unit not built: $UNIT"

# The unit as installed, with ExecStart on this tree's daemon, as an instance.
INST=sfstest$$
mkdir -p "$T/units"
sed "s|^ExecStart=[^ ]*/sectorfs |ExecStart=$SECTORFS |" "$UNIT" > "$T/units/sectorfs@$INST.service"
grep -q "^ExecStart=$SECTORFS " "$T/units/sectorfs@$INST.service" || fail "no ExecStart in $UNIT"
# verify runs man(1) for each Documentation= page: give it this tree's pages
verify_opts=(--man=no)
if command -v man >/dev/null 2>&1; then
	mkdir -p "$T/man/man1" "$T/man/man5"
	ln -s "$top_builddir/man/sectorfs.1" "$T/man/man1/" && ln -s "$top_builddir/man/sectorfs.json.5" "$T/man/man5/" ||
		fail "man pages not built"
	verify_opts=()
fi
if ! MANPATH="$T/man:" systemd-analyze verify "${verify_opts[@]}" "$T/units/sectorfs@$INST.service" > "$T/verify.out" 2>&1; then
	cat "$T/verify.out" >&2
	fail "systemd-analyze verify failed"
fi
# verify complains about nothing of ours (it may about units of the host)
if grep -i "sectorfs@" "$T/verify.out"; then
	fail "systemd-analyze verify has something to say about the unit"
fi
pass "systemd-analyze verify: clean"

keys=$(grep -v '^#' "$CONF" | grep -v '^$' | cut -d= -f1 | sort | tr '\n' ' ')
[ "$keys" = "MOUNTPOINT OPTIONS STORE " ] || fail "example.conf sets: $keys"
pass "example.conf sets STORE, MOUNTPOINT and OPTIONS"

requires_fuse
requires_root

# directive KEY: the value of KEY= in the unit, with %i expanded
directive() { sed -n "s/^$1=//p" "$T/units/sectorfs@$INST.service" | sed "s/%i/$INST/g"; }

# the instance's conf, from the sample with this test's store and mount point
sed -e "s|^STORE=.*|STORE=$STORE|" -e "s|^MOUNTPOINT=.*|MOUNTPOINT=$MNT|" \
	-e 's|^OPTIONS=.*|OPTIONS="-o allow_other -o sector=4kn"|' "$CONF" > "$T/$INST.conf"
set -a
# shellcheck source=/dev/null
. "$T/$INST.conf"
set +a
RUNDIR=/run/$(directive RuntimeDirectory)
PIDFILE=$(directive PIDFile)
case $PIDFILE in "$RUNDIR"/*) ;; *) fail "PIDFile $PIDFILE is not in RuntimeDirectory $RUNDIR" ;; esac
[ "$(directive Type)" = forking ] || fail "Type is not forking"
mkdir -p "$RUNDIR"
on_exit "rm -rf '$RUNDIR'"

sidecar disk 8M 4kn thin 64K
# ExecStart: "$OPTIONS" as separate words, "${STORE}" and "${MOUNTPOINT}" as one word each
start=$(directive ExecStart)
start=${start//'${STORE}'/\"\$STORE\"}
start=${start//'${MOUNTPOINT}'/\"\$MOUNTPOINT\"}
eval "set -- $start"
"$@" 2>>"$T/daemon.log" || fail "ExecStart exited with $?: $*"
[ -s "$PIDFILE" ] || fail "ExecStart returned without the PIDFile $PIDFILE"
MAINPID=$(cat "$PIDFILE")
DPID=$MAINPID
[ "$(readlink "/proc/$MAINPID/exe")" = "$SECTORFS" ] || fail "PIDFile names $MAINPID, not a sectorfs"
mountpoint -q "$MNT" || fail "ExecStart returned before the mount serves"
grep -q "^sectorfs:$STORE $MNT fuse.sectorfs .*allow_other" /proc/mounts || fail "OPTIONS not applied"
head -c 8192 /dev/urandom > "$T/blk"
dd if="$T/blk" of="$MNT/disk" bs=4096 oflag=direct conv=notrunc status=none || fail "write"
pass "ExecStart: returns with the PIDFile written and the mount serving"

# ExecStop, as systemd runs it: /bin/sh -c '...' with $$ a literal $, MAINPID in the environment
stop=$(directive ExecStop)
stop=${stop//'$$'/'$'}
eval "set -- $stop"
export MAINPID
"$@" || fail "ExecStop exited with $?"
kill -0 "$MAINPID" 2>/dev/null && fail "ExecStop returned while the daemon still runs"
DPID=
mountpoint -q "$MNT" && fail "still mounted after ExecStop"
[ ! -e "$PIDFILE" ] || fail "the daemon left its PIDFile"
cmp -s "$T/blk" <(head -c 8192 "$STORE/disk") || fail "data written before the stop is not in the store"
pass "ExecStop: returns once the daemon has flushed and exited"
