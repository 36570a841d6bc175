/* SPDX-License-Identifier: MIT */
/*
 * crashns.c - the driver of crash-namespace.sh; one command per phase of
 * a round, the model kept in STATE between them (crashns.h):
 *
 *   crashns init STATE SEED
 *   crashns run STATE MNT PID ROUND        the workload; kill -9 PID at a random moment
 *   crashns verify STATE MNT STORE IMGTOOL remounted: everything against the model
 *   crashns fail STATE KIND TEXT           a failure the script found (KIND: daemon, ...)
 *   crashns summary STATE                  failures by kind, "N rounds, F failures"
 *
 * Exit status: 0 nothing new went wrong, 1 failures (printed), 2 the test
 * itself could not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashns.h"

static int usage(void)
{
	fprintf(stderr, "usage: crashns init STATE SEED | run STATE MNT PID ROUND |\n"
		"       precheck STATE STORE IMGTOOL | verify STATE MNT STORE IMGTOOL |\n"
		"       fail STATE KIND TEXT | summary STATE\n");
	return 2;
}

static int summary(const struct state *s)
{
	uint32_t total = 0;

	for (int k = 0; k < K_N; k++)
		total += s->fails[k];
	if (total) {
		printf("# failures by kind (SEED=%llu), each lasting problem counted once:\n",
		       (unsigned long long)s->seed);
		for (int k = 0; k < K_N; k++)
			if (s->fails[k])
				printf("#   %4u  %-22s %s\n", s->fails[k], kind_id[k], kind_name[k]);
		printf("# %u of %u rounds had new failures\n", s->bad_rounds, s->rounds_checked);
	}
	printf("%u rounds, %u failures\n", s->rounds_checked, total);
	return total ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct state s;
	const char *cmd = argc > 1 ? argv[1] : "";
	int rc, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "init") == 0 && argc == 4) {
		state_init(&s, strtoull(argv[3], NULL, 0));
		return state_save(argv[2], &s) < 0 ? 2 : 0;
	}
	if (argc < 3 || state_load(argv[2], &s) < 0)
		return usage();
	if (strcmp(cmd, "run") == 0 && argc == 6)
		rc = cmd_run(&s, argv[3], atoi(argv[4]), (uint32_t)strtoul(argv[5], NULL, 10));
	else if (strcmp(cmd, "verify") == 0 && argc == 6)
		rc = cmd_verify(&s, argv[3], argv[4], argv[5]);
	else if (strcmp(cmd, "precheck") == 0 && argc == 5)
		rc = cmd_precheck(&s, argv[3], argv[4]);
	else if (strcmp(cmd, "summary") == 0 && argc == 3)
		return summary(&s);
	else if (strcmp(cmd, "fail") == 0 && argc == 5) {
		struct report r;

		for (k = 0; k < K_N && strcmp(kind_id[k], argv[3]) != 0; k++)
			;
		if (k == K_N)
			return usage();
		report_init(&r, &s, "found by the script", NULL, 0);
		problem(&r, (enum kind)k, NULL, "%s", argv[4]);
		report_finish(&r);
		rc = 1;
	} else
		return usage();
	if (rc < 2 && state_save(argv[2], &s) < 0)
		return 2;
	return rc;
}
