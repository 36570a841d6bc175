/* SPDX-License-Identifier: MIT */
/*
 * target.c - what tool_main opens for a sectorfs-img command before its
 * exec runs, as the command's table entry says (common.h):
 *
 *   kind                  from the argument STORE/NAME      closed by
 *   IMG_TARGET_REF        parsed and checked                -
 *   IMG_TARGET_VIEW       + img_view_open, img_view_image   img_view_close
 *   IMG_TARGET_SESSION    + img_session_open(IMG_S_GET)     img_session_close
 *   IMG_TARGET_CHECK      a directory: the store; else REF  -
 *
 * A STORE/NAME that does not parse is a usage error (the command's usage
 * status); a target that cannot be opened exits 1.  Closing a session
 * flushes the store: when that fails a command that succeeded exits 1.
 */
#include <sys/stat.h>

#include "common.h"

int img_target_open(struct tool_item *item)
{
	const struct tool_cmd *cmd = item->cmd;
	const char *arg = item->args[0];
	struct img_target *t = item->target;
	struct stat st;

	if (cmd->target == IMG_TARGET_CHECK && stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		t->store_dir = arg;
		return 0;
	}
	if (img_ref_parse(arg, &t->ref) < 0)
		return tool_usage_status(cmd);
	switch (cmd->target) {
	case IMG_TARGET_VIEW:
		if (img_view_open(&t->view, &t->ref) < 0)
			return 1;
		t->view_open = true;
		return img_view_image(&t->view, &t->mi, &t->created) < 0 ? 1 : 0;
	case IMG_TARGET_SESSION:
		return img_session_open(&t->ss, &t->ref, cmd->name, IMG_S_GET) < 0 ? 1 : 0;
	default:
		return 0;
	}
}

int img_target_close(struct tool_item *item, int rc)
{
	struct img_target *t = item->target;

	if (t->view_open)
		img_view_close(&t->view);
	if (t->ss.ref && img_session_close(&t->ss) < 0 && rc == 0)
		rc = 1;
	return rc;
}
