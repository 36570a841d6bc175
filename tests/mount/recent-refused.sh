#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-refused.sh - a misaligned O_DIRECT write, a write past the end,
# a misaligned discard (fallocate -p) and zero-range (fallocate -z) and a
# misaligned read on a 4kn disk are each listed in the image's
# refused_recent, newest first, with op, offset, length, error and
# reason, the pid of the process that issued it and its command name (a
# copy of dd under a name of its own); nothing in rmw_recent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"

recent_serve

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

stop_daemon
