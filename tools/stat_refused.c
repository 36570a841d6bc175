/* SPDX-License-Identifier: MIT */
/*
 * stat_refused.c - sectorfs-stat --refused: per image, the daemon's lists
 * of the last refused I/Os and the last read-modify-write writes
 * (refused_recent and rmw_recent of NAME.json), newest first, with the
 * local time, the operation, offset, length, error and the requesting
 * process; or, with --json, one object of them all.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "escape.h"
#include "names.h"
#include "stat.h"

/* ---- --refused: the recent lists ---- */

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The image names that have a NAME.json in .stats (those of names if any), sorted; *n of them. */
static char **stats_names(char **names, int nnames, size_t *n)
{
	char path[PATH_MAX], name[NAME_MAX + 1], **v = NULL;
	size_t cap = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/.stats", stat_mnt);
	if (!(dir = opendir(path)))
		stat_die(1, "%s: %s", path, strerror(errno));
	for (*n = 0; (errno = 0, d = readdir(dir));) {
		if (!stat_wanted(d->d_name, name, names, nnames))
			continue;
		if (*n == cap && !(v = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v))))
			stat_die(1, "out of memory");
		if (!(v[(*n)++] = strdup(name)))
			stat_die(1, "out of memory");
	}
	if (errno)
		stat_die(1, "%s: %s", path, strerror(errno));
	closedir(dir);
	qsort(v, *n, sizeof(*v), by_str);
	return v;
}

/* MNT/.stats/NAME.json parsed (NULL if the image has vanished; other errors exit 1). */
static json_t *load_json(const char *name)
{
	char path[PATH_MAX];
	json_error_t err;
	const char *text;
	size_t len;
	json_t *o;

	if (!(text = stat_read_image(name, path, sizeof(path), &len)))
		return NULL;
	o = json_loadb(text, len, 0, &err);
	if (!o)
		stat_die(1, "%s: not valid JSON: %s", path, err.text);
	if (!json_is_array(json_object_get(o, "refused_recent")) || !json_is_array(json_object_get(o, "rmw_recent")))
		stat_die(1, "%s: no refused_recent and rmw_recent: the daemon is older than " PROG " " PACKAGE_VERSION, path);
	return o;
}

/* The integer o.key >= 0 into *out (0 when missing). */
static void get_u64(const json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	*out = json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* One recent list as a table: local time to the microsecond, op, offset, length, error, pid, command. */
static void print_recent(const char *title, json_t *a, bool refused)
{
	size_t i;
	json_t *e;

	if (json_array_size(a) == 0) {
		printf("  %s: none\n", title);
		return;
	}
	printf("  %s (%zu, newest first)\n", title, json_array_size(a));
	printf("    %-26s %-12s %14s %10s %-7s %8s  %s\n", "time", "op", "offset", "length",
	       refused ? "error" : "", "pid", "command");
	json_array_foreach(a, i, e) {
		uint64_t ns = 0, off = 0, len = 0, pid = 0;
		json_t *c = json_object_get(e, "comm"), *op = json_object_get(e, "op"), *er = json_object_get(e, "error");
		char when[40], frac[16], comm[SFS_ESCAPED_SIZE(64)], spid[24];
		time_t t;

		get_u64(e, "time_ns", &ns);
		get_u64(e, "offset", &off);
		get_u64(e, "length", &len);
		get_u64(e, "pid", &pid);
		t = (time_t)(ns / 1000000000u);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		snprintf(frac, sizeof(frac), ".%06u", (unsigned)(ns % 1000000000u / 1000u));
		strncat(when, frac, sizeof(when) - strlen(when) - 1);
		if (!json_is_string(c) || !*json_string_value(c) ||
		    sfs_escape_name(json_string_value(c), !stat_utf8, comm, sizeof(comm)) < 0)
			snprintf(comm, sizeof(comm), "-");
		if (pid)
			snprintf(spid, sizeof(spid), "%" PRIu64, pid);
		else
			snprintf(spid, sizeof(spid), "-");
		printf("    %-26s %-12s %14" PRIu64 " %10" PRIu64 " %-7s %8s  %s\n", when,
		       json_is_string(op) ? json_string_value(op) : "?", off, len,
		       refused && json_is_string(er) ? json_string_value(er) : "", spid, comm);
	}
}

/* sectorfs-stat --refused: each image's recent lists, or one JSON object of them all. */
int stat_refused(char **names, int nnames)
{
	size_t n;
	char **v = stats_names(names, nnames, &n);
	json_t *all = json_array(), *o;
	char shown[SFS_ESCAPED_SIZE(NAME_MAX)];

	for (int i = 0; i < nnames; i++)
		if (!bsearch(&names[i], v, n, sizeof(*v), by_str))
			stat_die(1, "%s: no image named '%s' (no %s/.stats/%s.json)", stat_mnt, names[i], stat_mnt, names[i]);
	for (size_t i = 0; i < n; i++) {
		if (!(o = load_json(v[i])))
			continue;        /* gone meanwhile */
		if (stat_json) {
			if (json_array_append_new(all, json_pack("{s:O, s:O, s:O}", "image", json_object_get(o, "name"),
								 "refused_recent", json_object_get(o, "refused_recent"),
								 "rmw_recent", json_object_get(o, "rmw_recent"))) < 0)
				stat_die(1, "cannot format the JSON report");
		} else {
			sfs_escape_name(v[i], !stat_utf8, shown, sizeof(shown));
			printf("%s%s\n", i ? "\n" : "", shown);
			print_recent("refused I/Os", json_object_get(o, "refused_recent"), true);
			print_recent("read-modify-write writes", json_object_get(o, "rmw_recent"), false);
		}
		json_decref(o);
		free(v[i]);
	}
	free(v);
	if (stat_json) {
		o = json_pack("{s:o}", "images", all);
		if (!o || json_dumpf(o, stdout, JSON_COMPACT) < 0)
			stat_die(1, "cannot format the JSON report");
		putchar('\n');
		json_decref(o);
	} else {
		json_decref(all);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		stat_die(1, "writing the report: %s", strerror(errno));
	return 0;
}
