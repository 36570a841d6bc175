#!/bin/bash
# SPDX-License-Identifier: MIT
# recent-rmw.sh - 512-byte writes on a 512e disk are listed in the image's
# rmw_recent with the process that issued them, aligned 4 KiB writes are
# not, and nothing is refused there; through a loop device (when there
# are loop devices) the requester is a kernel worker (kworker/..., named
# after the loop device's queue while it works for it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-recent.sh"
. "$(dirname "$0")/lib-loop.sh"

recent_serve

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
