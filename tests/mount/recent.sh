#!/bin/bash
# SPDX-License-Identifier: MIT
# recent.sh - each image's last refused I/Os and last read-modify-write
# writes, with the process that issued them, through a real mount.
#
# Proves:
#  - a misaligned O_DIRECT write, a write past the end, a misaligned
#    discard (fallocate -p) and zero-range (fallocate -z) and a misaligned
#    read on a 4kn disk are each listed in refused_recent, newest first,
#    with op, offset, length, error and reason, the pid of the process that
#    issued it and its command name (a copy of dd under a name of its own);
#  - 512-byte writes on a 512e disk are listed in rmw_recent, aligned
#    4 KiB writes are not, and nothing is refused there;
#  - 70 refusals from one process keep the newest 64, in order, each with
#    that process's pid;
#  - the text file shows the newest 5 of each list as a table; sectorfs-stat
#    --refused prints every entry (and --json the same lists); --refused
#    with -i is a usage error;
#  - the writes of cp that grow an image created in the mount (beyond its
#    capacity, which the store then grows) are neither counted nor listed
#    as refused;
#  - reset clears both lists;
#  - through a loop device (when there are loop devices) the requester is
#    a kernel worker (kworker/..., named after the loop device's queue
#    while it works for it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-loop.sh"
requires_fuse
requires_gnu_dd
requires_cmd python3 fallocate

requires_built "$SECTORFS_STAT"

sidecar d4k 8M 4kn thin 64K
sidecar d512e 8M 512e thin 64K
start_daemon

# A dd of its own name, so that the command name in the lists can only be this one.
cp "$(command -v dd)" "$T/sfsprobe-dd" || fail "cannot copy dd"
PROBE="$T/sfsprobe-dd"

# probe PIDFILE ARGS...: run the dd copy (exec: its pid is the one recorded), pid into PIDFILE.
probe() {
	local pf=$1
	shift
	bash -c 'echo $$ > "$0"; exec "$@"' "$pf" "$PROBE" "$@" status=none
}

# json_check PY: run python code against the parsed NAME.json files (d = {name: object}).
json_check() {
	python3 - "$MNT" "$@" <<'EOF' || fail "JSON check failed"
import json, sys
mnt, code = sys.argv[1], sys.argv[2]
d = {n: json.load(open("%s/.stats/%s.json" % (mnt, n))) for n in ("d4k", "d512e")}
def want(cond, what):
    if not cond:
        sys.exit("recent.sh: " + what)
exec(code)
EOF
}

# ---- refused I/Os on 4kn ----

probe "$T/p1" if=/dev/zero of="$MNT/d4k" bs=512 seek=3 count=1 oflag=direct conv=notrunc 2>/dev/null &&
	fail "a 512-byte O_DIRECT write to a 4kn disk succeeded"
probe "$T/p2" if=/dev/zero of="$MNT/d4k" bs=4096 seek=2048 count=1 oflag=direct conv=notrunc 2>/dev/null &&
	fail "a write past the end succeeded"
fallocate -p -o 512 -l 4096 "$MNT/d4k" 2>/dev/null && fail "a misaligned discard succeeded"
fallocate -z -o 4096 -l 1024 "$MNT/d4k" 2>/dev/null && fail "a misaligned zero-range succeeded"
probe "$T/p3" if="$MNT/d4k" of=/dev/null bs=2048 skip=1 count=1 iflag=direct 2>/dev/null &&
	fail "a 2 KiB O_DIRECT read from a 4kn disk succeeded"
p1=$(cat "$T/p1") p2=$(cat "$T/p2") p3=$(cat "$T/p3")

json_check "
r = d['d4k']['refused_recent']
want(len(r) == 5, 'd4k: 5 refused I/Os listed, got %d: %s' % (len(r), r))
exp = [('read', 2048, 2048, 'EINVAL', 'misaligned', $p3), ('write_zeroes', 4096, 1024, 'EINVAL', 'misaligned', None),
       ('discard', 512, 4096, 'EINVAL', 'misaligned', None), ('write', 2048 * 4096, 4096, 'ENOSPC', 'out_of_range', $p2),
       ('write', 1536, 512, 'EINVAL', 'misaligned', $p1)]
for e, (op, off, ln, err, why, pid) in zip(r, exp):
    got = (e['op'], e['offset'], e['length'], e['error'], e['reason'])
    want(got == (op, off, ln, err, why), 'd4k: expected %s, got %s' % ((op, off, ln, err, why), got))
    if pid is not None:
        want(e['pid'] == pid and e['comm'] == 'sfsprobe-dd', 'd4k %s: requester %s %r, expected %d sfsprobe-dd' % (op, e['pid'], e['comm'], pid))
    else:
        want(e['pid'] > 0 and e['comm'] == 'fallocate', 'd4k %s: requester %s %r, expected fallocate' % (op, e['pid'], e['comm']))
times = [e['time_ns'] for e in r]
want(times == sorted(times, reverse=True), 'd4k: not newest first: %s' % times)
want(d['d4k']['rmw_recent'] == [], 'd4k: a 4kn disk does no read-modify-write')
want(d['d4k']['misaligned_rejected'] == 4 and d['d4k']['out_of_range'] == 1, 'd4k: counters')
"
pass "4kn: misaligned write, read, discard, zero-range and a write past the end listed with their process"

# ---- read-modify-write on 512e ----

probe "$T/p4" if=/dev/zero of="$MNT/d512e" bs=512 seek=9 count=2 oflag=direct conv=notrunc ||
	fail "512-byte writes to a 512e disk failed"
probe "$T/p5" if=/dev/zero of="$MNT/d512e" bs=4096 seek=4 count=1 oflag=direct conv=notrunc ||
	fail "a 4 KiB write to a 512e disk failed"
p4=$(cat "$T/p4")
json_check "
m = d['d512e']['rmw_recent']
want([(e['op'], e['offset'], e['length'], e['pid'], e['comm']) for e in m] ==
     [('write', 5120, 512, $p4, 'sfsprobe-dd'), ('write', 4608, 512, $p4, 'sfsprobe-dd')],
     'd512e: rmw_recent: %s' % m)
want('error' not in m[0], 'd512e: an rmw write carries no error')
want(d['d512e']['refused_recent'] == [], 'd512e: nothing refused')
want(d['d512e']['rmw_writes'] == 2, 'd512e: rmw_writes')
"
pass "512e: the two partial-physical-sector writes listed with their process, the whole 4 KiB one not"

# ---- 70 refusals: the newest 64, in order ----

python3 - "$MNT/d4k" > "$T/p6" <<'EOF' || fail "the python writer failed"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
print(os.getpid())
for i in range(70):
    try:
        os.pwrite(fd, buf[:512], 512 * (2 * i + 1))
        sys.exit("a misaligned write succeeded")
    except OSError as e:
        if e.errno != 22:
            raise
EOF
p6=$(cat "$T/p6")
json_check "
r = d['d4k']['refused_recent']
want(len(r) == 64, 'd4k: %d entries kept, expected 64' % len(r))
want([e['offset'] for e in r] == [512 * (2 * i + 1) for i in range(69, 5, -1)], 'd4k: not the newest 64 in order')
want(all(e['pid'] == $p6 and e['comm'] == 'python3' for e in r), 'd4k: not all from python3 $p6')
"
pass "70 refusals keep the newest 64, newest first, each with its pid"

# ---- an image created in the mount grows with its writes: none of them is refused ----

head -c $((3 << 20)) /dev/urandom > "$T/src"
cp "$T/src" "$MNT/copied" || fail "cp into the mount failed"
cmp -s "$T/src" "$MNT/copied" || fail "the copy differs"
json_check "
c = json.load(open(mnt + '/.stats/copied.json'))
want(c['writes'] > 0, 'copied: no writes counted')
want(c['out_of_range'] == 0 and c['refused_recent'] == [],
     'copied: writes that grew the image counted as refused: %d, %s' % (c['out_of_range'], c['refused_recent'][:2]))
"
pass "writes that grow an image created in the mount are not refused I/Os"

# ---- the text file and sectorfs-stat ----

txt=$(cat "$MNT/.stats/d4k")
grep -q '^refused I/Os (newest 5 of the 64 kept; all: NAME.json, sectorfs-stat --refused)$' <<< "$txt" ||
	fail "text: no header of the refused table: $txt"
rows=$(grep -c ' write  *[0-9]*  *512 EINVAL  *'"$p6"'  python3$' <<< "$txt")
[ "$rows" = 5 ] || fail "text: expected 5 rows of python3's refusals, got $rows: $txt"
first=$(grep -m1 " EINVAL  *$p6 " <<< "$txt" | awk '{print $3}')
[ "$first" = $((512 * 139)) ] || fail "text: the first row is not the newest refusal (offset $first)"
grep -q '^read-modify-write writes: none$' <<< "$txt" || fail "text: d4k should say no rmw writes"
grep -q "^read-modify-write writes (2, newest first)$" "$MNT/.stats/d512e" ||
	fail "text: d512e rmw table header: $(cat "$MNT/.stats/d512e")"
pass "the text file shows the newest 5 of each list"

"$SECTORFS_STAT" --refused "$MNT" d4k > "$T/r.txt" || fail "sectorfs-stat --refused failed"
[ "$(grep -c " EINVAL  *$p6  python3$" "$T/r.txt")" = 64 ] || fail "sectorfs-stat --refused: not 64 rows: $(cat "$T/r.txt")"
head -n1 "$T/r.txt" | grep -qx d4k || fail "sectorfs-stat --refused: no image name line"
grep -q "^  refused I/Os (64, newest first)$" "$T/r.txt" || fail "sectorfs-stat --refused: no count line"
"$SECTORFS_STAT" --refused --json "$MNT" > "$T/r.json" || fail "sectorfs-stat --refused --json failed"
python3 - "$T/r.json" "$MNT" <<'EOF' || fail "sectorfs-stat --refused --json is not the daemon's lists"
import json, sys
r = json.load(open(sys.argv[1]))
names = [i["image"] for i in r["images"]]
assert names == ["copied", "d4k", "d512e"], names
for i in r["images"]:
    d = json.load(open("%s/.stats/%s.json" % (sys.argv[2], i["image"])))
    assert i["refused_recent"] == d["refused_recent"] and i["rmw_recent"] == d["rmw_recent"], i["image"]
EOF
rc=0
"$SECTORFS_STAT" --refused -i 1 "$MNT" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "sectorfs-stat --refused -i 1: exit $rc, expected 2"
pass "sectorfs-stat --refused lists all 64, --json the daemon's lists"

# ---- reset ----

echo reset > "$MNT/.stats/d4k" || fail "reset d4k"
echo reset > "$MNT/.stats/d512e" || fail "reset d512e"
json_check "
for n in ('d4k', 'd512e'):
    want(d[n]['refused_recent'] == [] and d[n]['rmw_recent'] == [], n + ': reset left entries')
"
grep -q '^refused I/Os: none$' "$MNT/.stats/d4k" || fail "text after reset"
pass "reset clears both lists"

# ---- through a loop device: the loop worker asks ----

if [ "$(id -u)" -eq 0 ] && [ -e /dev/loop-control ] && command -v losetup >/dev/null; then
	attach_loop "$MNT/d512e" 512
	step "512-byte write through $DEV" dd if=/dev/zero of="$DEV" bs=512 seek=1 count=1 oflag=direct status=none
	detach_loop "$DEV"
	loopname=${DEV#/dev/}
	json_check "
m = d['d512e']['rmw_recent']
want(len(m) >= 1 and m[0]['offset'] == 512 and m[0]['length'] == 512, 'loop: rmw_recent %s' % m)
# a kworker's name says the workqueue it runs for at the moment /proc/PID/comm is read,
# which may already be another one's (kworker/u8:31-ext4-rsv-conversion)
want(m[0]['pid'] > 0 and ('$loopname' in m[0]['comm'] or m[0]['comm'].startswith('kworker/')),
     'loop: the requester is not a kernel worker of $loopname: %r' % m[0]['comm'])
"
	pass "through $DEV the requester is its kernel worker ($(python3 -c "import json;print(json.load(open('$MNT/.stats/d512e.json'))['rmw_recent'][0]['comm'])"))"
fi

stop_daemon
