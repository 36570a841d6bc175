/* SPDX-License-Identifier: MIT */
/*
 * refused.c - sectorfs-stat --refused: per image, the daemon's lists
 * of the last refused I/Os and the last read-modify-write writes
 * (refused_recent and rmw_recent of NAME.json), newest first, with the
 * local time, the operation, offset, length, error and the requesting
 * process; or, with --json, one object of them all.  The lists are read
 * by core (sfs_stats_parse_recent_json) and, for --json, rendered again
 * by it as NAME.json holds them (sfs_stats_render_recent_json).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/escape.h"
#include "stat.h"
#include "stats/stats.h"

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One recent list as a table: local time to the microsecond, op, offset, length, error, pid, command. */
static void print_recent(const char *title, const struct sfs_recent_io *v, size_t n, bool refused)
{
	if (n == 0) {
		printf("  %s: none\n", title);
		return;
	}
	printf("  %s (%zu, newest first)\n", title, n);
	printf("    %-26s %-12s %14s %10s %-7s %8s  %s\n", "time", "op", "offset", "length",
	       refused ? "error" : "", "pid", "command");
	for (size_t i = 0; i < n; i++) {
		char when[40], frac[16], comm[SFS_ESCAPED_SIZE(SFS_COMM_LEN)], spid[24];
		time_t t = (time_t)(v[i].time_ns / 1000000000u);

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
		snprintf(frac, sizeof(frac), ".%06u", (unsigned)(v[i].time_ns % 1000000000u / 1000u));
		strncat(when, frac, sizeof(when) - strlen(when) - 1);
		if (!v[i].comm[0] || sfs_escape_name(v[i].comm, !stat_utf8, comm, sizeof(comm)) < 0)
			snprintf(comm, sizeof(comm), "-");
		if (v[i].pid > 0)
			snprintf(spid, sizeof(spid), "%" PRId32, v[i].pid);
		else
			snprintf(spid, sizeof(spid), "-");
		printf("    %-26s %-12s %14" PRIu64 " %10" PRIu64 " %-7s %8s  %s\n", when,
		       sfs_io_op_name(v[i].op), v[i].off, v[i].len,
		       refused ? sfs_stats_refusal_name(v[i].err) : "", spid, comm);
	}
}

int stat_refused(char **names, int nnames)
{
	static struct sfs_stats_parsed_recent p;    /* large: keep it off the stack */
	size_t n, jlen = 0, olen;
	char **v = stat_names(names, nnames, &n), *json = NULL, *obj, shown[SFS_ESCAPED_SIZE(NAME_MAX)];
	FILE *jf = NULL;
	bool first = true;

	for (int i = 0; i < nnames; i++)
		if (!bsearch(&names[i], v, n, sizeof(*v), by_str))
			stat_no_image(names[i]);
	/* --json: {"images": [one object per image]}, printed whole once every image is read */
	if (stat_json && (!(jf = open_memstream(&json, &jlen)) || fputs("{\"images\":[", jf) < 0))
		tool_die(1, "cannot format the JSON report");
	for (size_t i = 0; i < n; i++) {
		if (!stat_load(v[i], STAT_RECENT, &p)) {
			free(v[i]);
			continue;        /* gone meanwhile */
		}
		if (stat_json) {
			if (sfs_stats_render_recent_json(p.name, &p.recent, &obj, &olen) < 0)
				tool_die(1, "cannot format the JSON report");
			fprintf(jf, "%s%s", first ? "" : ",", obj);
			free(obj);
			first = false;
		} else {
			sfs_escape_name(v[i], !stat_utf8, shown, sizeof(shown));
			printf("%s%s\n", i ? "\n" : "", shown);
			print_recent("refused I/Os", p.recent.refused, p.recent.nrefused, true);
			print_recent("read-modify-write writes", p.recent.rmw, p.recent.nrmw, false);
		}
		free(v[i]);
	}
	free(v);
	if (stat_json) {
		fputs("]}\n", jf);
		if (ferror(jf) | fclose(jf))
			tool_die(1, "cannot format the JSON report");
		fputs(json, stdout);
		free(json);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		tool_die(1, "writing the report: %s", strerror(errno));
	return 0;
}
