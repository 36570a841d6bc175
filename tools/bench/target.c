/* SPDX-License-Identifier: MIT */
/*
 * target.c - what tool_main opens for a sectorfs-bench command before its
 * exec runs, as the command's table entry says (common.h):
 *
 *   BENCH_TARGET_DISK      IMAGE with O_DIRECT, O_RDWR, or O_RDONLY when
 *                          the command's --read-only is given
 *   BENCH_TARGET_TESTBED   the store of --store or --mount (or a temporary
 *                          one) served by --daemon (testbed_open); made
 *                          undone at the end, also after a failed open
 *
 * A target that cannot be opened exits 1, and so does a testbed that
 * cannot be undone, whatever the command's own status was.
 */
#include <fcntl.h>

#include "common.h"

int bench_target_open(struct tool_item *item)
{
	struct bench_target *t = item->target;

	t->disk.fd = -1;
	switch (item->cmd->target) {
	case BENCH_TARGET_DISK:
		return bench_disk_open(&t->disk, item->args[0],
				       tool_opt_set(item, "read-only") ? O_RDONLY : O_RDWR) < 0;
	case BENCH_TARGET_TESTBED:
		t->tb_open = true;
		return testbed_open(&t->tb, tool_opt_arg(item, "store"), tool_opt_arg(item, "mount"),
				    tool_opt_arg(item, "daemon"), tool_opt_arg(item, "profile") != NULL) < 0;
	default:
		return 0;
	}
}

int bench_target_close(struct tool_item *item, int rc)
{
	struct bench_target *t = item->target;

	bench_disk_close(&t->disk);
	if (t->tb_open && testbed_close(&t->tb) < 0)
		rc = 1;
	return rc;
}
