/* SPDX-License-Identifier: MIT */
/*
 * common.c - messages, STORE/NAME arguments, the served check and the
 * locked session that every changing command of sectorfs-img uses.
 *
 * A session is the store opened with sfs_store_open(): that takes the
 * store lock, so a daemon cannot start serving the store while a command
 * changes it, and a command cannot run while a daemon serves it.  The
 * core logs through a sink that keeps only what concerns the image being
 * worked on: warnings are shown, the last error is kept to explain why
 * the image could not be opened.  The store is opened lazily: only the
 * image asked for is loaded, the others are left as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "log.h"
#include "units.h"

/* ---- messages ---- */

void img_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_verror(IMG_PROG, fmt, ap);
	va_end(ap);
}

int img_usage_error(const struct tool_cmd *cmd, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = tool_vusage_error(IMG_PROG, cmd, rc, fmt, ap);
	va_end(ap);
	return rc;
}

int img_bad_option(const struct tool_cmd *cmd, int rc, int opt, char **argv)
{
	return tool_bad_option(IMG_PROG, cmd, rc, opt, argv);
}

int img_parse_size(const struct tool_cmd *cmd, const char *what, const char *s, uint64_t *out)
{
	int rc = sfs_parse_size(s, out);

	if (rc == -ERANGE) {
		fprintf(stderr, IMG_PROG " %s: size '%s' for %s is too large\n", cmd->name, s, what);
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr, IMG_PROG " %s: invalid size '%s' for %s: use a number of bytes, "
			"optionally followed by K, M, G or T (e.g. 8G)\n", cmd->name, s, what);
		return -1;
	}
	return 0;
}

const char *img_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	char s[32];

	sfs_format_size(bytes, s, sizeof(s));
	if (bytes >= 1024 && strspn(s, "0123456789") != strlen(s))
		snprintf(buf, len, "%s (%llu bytes)", s, (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

/* ---- STORE/NAME ---- */

int img_ref_parse(const char *arg, struct img_ref *ref)
{
	const char *slash = strrchr(arg, '/');
	const char *name = slash ? slash + 1 : arg;
	size_t slen = slash ? (size_t)(slash - arg) : 0;

	memset(ref, 0, sizeof(*ref));
	if (strlen(arg) >= sizeof(ref->path) || slen >= sizeof(ref->store)) {
		img_error("%.60s...: path too long", arg);
		return -1;
	}
	snprintf(ref->path, sizeof(ref->path), "%s", arg);
	if (!slash)
		snprintf(ref->store, sizeof(ref->store), ".");
	else if (slen == 0)
		snprintf(ref->store, sizeof(ref->store), "/");
	else
		snprintf(ref->store, sizeof(ref->store), "%.*s", (int)slen, arg);
	if (!*name) {
		img_error("%s: expected STORE/NAME, the image NAME in the store directory STORE", arg);
		return -1;
	}
	if (sfs_name_valid(name) < 0) {
		img_error("%s: invalid image name '%s': a name must not start with '.', end in "
			  "'.json' or be longer than %d characters", arg, name, SFS_NAME_MAX);
		return -1;
	}
	snprintf(ref->name, sizeof(ref->name), "%s", name);
	return 0;
}

bool img_parse_one_image(const struct tool_cmd *cmd, const char *help, const char *flag, int usage_rc,
			 int argc, char **argv, bool *flag_set, struct img_ref *ref, int *status)
{
	const struct option longopts[] = {
		{ flag ? flag : "help", no_argument, NULL, flag ? 'f' : 'h' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*flag_set = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == 'f') {
			*flag_set = true;
		} else if (c == 'h') {
			printf("usage: " IMG_PROG " %s %s\n\n%s", cmd->name, cmd->usage, help);
			*status = 0;
			return false;
		} else {
			*status = img_bad_option(cmd, usage_rc, c, argv);
			return false;
		}
	}
	if (optind != argc - 1) {
		*status = img_usage_error(cmd, usage_rc, optind == argc ? "missing STORE/NAME" : "too many arguments");
		return false;
	}
	if (img_ref_parse(argv[optind], ref) < 0) {
		*status = usage_rc;
		return false;
	}
	return true;
}

int img_store_exists(const char *store)
{
	struct stat st;

	if (stat(store, &st) < 0) {
		img_error("%s: cannot open store: %s", store, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		img_error("%s: cannot open store: not a directory", store);
		return -1;
	}
	return 0;
}

bool img_served(const char *store, char *holder, size_t len)
{
	return sfs_store_holder(store, holder, len) == 0;
}

int img_refuse_if_served(const struct img_ref *ref)
{
	char holder[512];

	if (!img_served(ref->store, holder, sizeof(holder)))
		return 0;
	img_error("%s: store is served by sectorfs (%s); unmount it first",
		  ref->store, holder[0] ? holder : "holder unknown");
	return -1;
}

/* ---- the session ---- */

/* Does msg talk about image name ("NAME: ...", "NAME.json: ...", "... NAME.map: ...")? */
static bool mentions(const char *msg, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(msg, name); p; p = strstr(p + 1, name)) {
		char before = p == msg ? ' ' : p[-1], after = p[n];

		if (strchr(" :/'\"", before) && strchr(":. '\"", after))
			return true;
	}
	return false;
}

static void session_log(void *ctx, int level, const char *msg)
{
	struct img_session *ss = ctx;
	const char *tail = " (image not served)";
	size_t n;

	if (!mentions(msg, ss->ref->name))
		return;
	if (level == SFS_LOG_WARN && !ss->quiet) {
		fprintf(stderr, IMG_PROG ": warning: %s\n", msg);
	} else if (level == SFS_LOG_ERR) {
		snprintf(ss->lasterr, sizeof(ss->lasterr), "%s", msg);
		n = strlen(ss->lasterr);
		if (n > strlen(tail) && strcmp(ss->lasterr + n - strlen(tail), tail) == 0)
			ss->lasterr[n - strlen(tail)] = '\0';
	}
}

struct sfs_log img_session_log(struct img_session *ss)
{
	struct sfs_log l = { session_log, ss };

	return l;
}

int img_session_open(struct img_session *ss, const struct img_ref *ref, const char *cmd,
		     unsigned flags)
{
	struct sfs_store_opts o = { .stats = false, .lazy = true };
	char err[1024], holder[128], scname[SFS_NAME_MAX + 8];
	struct stat st;
	int rc;

	memset(ss, 0, sizeof(*ss));
	ss->ref = ref;
	ss->store_fd = ss->state_fd = -1;
	ss->quiet = flags & IMG_S_QUIET;
	if (img_store_exists(ref->store) < 0)
		return -1;
	if (img_refuse_if_served(ref) < 0)
		return -1;
	sfs_sidecar_defaults(&o.defaults);
	o.log = img_session_log(ss);
	snprintf(holder, sizeof(holder), IMG_PROG " %s, pid %ld", cmd, (long)getpid());
	o.holder = holder;
	rc = sfs_store_open(ref->store, &o, &ss->store, err, sizeof(err));
	if (rc < 0) {
		img_error("%s", err);
		return -1;
	}
	ss->store_fd = sfs_store_fd(ss->store);
	ss->state_fd = openat(ss->store_fd, SFS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ss->state_fd < 0) {
		img_error("%s/%s: %s", ref->store, SFS_STATE_DIR, strerror(errno));
		img_session_close(ss);
		return -1;
	}
	if (!(flags & IMG_S_GET))
		return 0;
	rc = sfs_store_get(ss->store, ref->name, &ss->im);
	if (rc < 0) {
		snprintf(scname, sizeof(scname), "%s.json", ref->name);
		if (ss->lasterr[0])
			img_error("%s: cannot open image: %s (see '" IMG_PROG " check %s')", ref->path,
				  ss->lasterr, ref->path);
		else if (fstatat(ss->store_fd, scname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			img_error("%s: no such image (no sidecar %s in %s)", ref->path, scname, ref->store);
		else
			img_error("%s: cannot open image: %s", ref->path, strerror(-rc));
		ss->im = NULL;
		img_session_close(ss);
		return -1;
	}
	return 0;
}

int img_session_close(struct img_session *ss)
{
	int rc = 0;

	if (ss->im)
		sfs_store_put(ss->store, ss->im);
	ss->im = NULL;
	if (ss->store)
		rc = sfs_store_close(ss->store);
	ss->store = NULL;
	if (ss->state_fd >= 0)
		close(ss->state_fd);
	ss->state_fd = -1;
	if (rc < 0) {
		img_error("%s: flushing the store failed: %s", ss->ref->store, strerror(-rc));
		return -1;
	}
	return 0;
}

int img_save_sidecar(struct img_session *ss, const struct sfs_sidecar *sc)
{
	char scname[SFS_NAME_MAX + 8];
	int rc;

	snprintf(scname, sizeof(scname), "%s.json", ss->ref->name);
	rc = sfs_sidecar_save(ss->store_fd, scname, ss->state_fd, sc);
	if (rc < 0) {
		img_error("%s/%s: cannot write sidecar: %s", ss->ref->store, scname, strerror(-rc));
		return -1;
	}
	return 0;
}
