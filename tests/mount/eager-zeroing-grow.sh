#!/bin/bash
# SPDX-License-Identifier: MIT
# eager-zeroing-grow.sh - an eagerzeroedthick grow (truncate) returns
# while the new blocks are still being zeroed, in the background, and they
# are all zeroed in the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-zeroing.sh"
run_alone

sidecar g 64M 4kn eagerzeroedthick 1M false
start_daemon
wait_zeroed g 30
t0=$(ms)
truncate -s $((2 * G)) "$MNT/g" || fail "truncate of g to 2 GiB failed"
grow_ms=$(($(ms) - t0))
sg=$(zstate g)
[ "$(stat -c %s "$MNT/g")" = $((2 * G)) ] || fail "g is $(stat -c %s "$MNT/g") bytes after the grow"
[ "$sg" = running ] || not_ok "right after truncate returned ($grow_ms ms) g's zeroing is '$sg': the grow waited for it"
wait_zeroed g 60
[ "$(stats_key g allocated_blocks)" = 2048 ] || fail "g: $(stats_key g allocated_blocks) of 2048 blocks after the zeroing"
stop_daemon
[ "$(info_key g zeroed)" = true ] || fail "g: not flagged zeroed after the grow's zeroing"
pass "grow of g to 2 GiB: truncate returns in $grow_ms ms with the zeroing running; all 2048 blocks zeroed in the end"

