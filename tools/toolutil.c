/* SPDX-License-Identifier: MIT */
/*
 * toolutil.c - the command dispatcher, the clock and the interruption flag
 * of the tools (toolutil.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "toolutil.h"

volatile sig_atomic_t tool_interrupted;

static void on_signal(int sig)
{
	tool_interrupted = sig;
}

void tool_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void tool_verror(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int tool_vusage_error(const char *prog, const struct tool_cmd *cmd, int rc, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s %s: ", prog, cmd->name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nusage: %s %s %s\nTry '%s %s --help' for more.\n",
		prog, cmd->name, cmd->usage, prog, cmd->name);
	return rc;
}

static int usage_error(const char *prog, const struct tool_cmd *cmd, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int usage_error(const char *prog, const struct tool_cmd *cmd, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = tool_vusage_error(prog, cmd, rc, fmt, ap);
	va_end(ap);
	return rc;
}

int tool_bad_option(const char *prog, const struct tool_cmd *cmd, int rc, int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return usage_error(prog, cmd, rc, "option '%s' needs an argument", arg);
	if (optopt && strncmp(arg, "--", 2) != 0)
		return usage_error(prog, cmd, rc, "unknown option '-%c'", optopt);
	return usage_error(prog, cmd, rc, "unknown option '%s'", arg);
}

uint64_t tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static void usage(const struct tool *t, FILE *f)
{
	int w = 0;

	for (size_t i = 0; i < t->ncmds; i++)
		if ((int)strlen(t->cmds[i]->name) > w)
			w = (int)strlen(t->cmds[i]->name);
	fprintf(f, "%s\ncommands:\n", t->intro);
	for (size_t i = 0; i < t->ncmds; i++)
		fprintf(f, "  %-*s  %s\n", w, t->cmds[i]->name, t->cmds[i]->summary);
	fprintf(f, "\noptions:\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n\n%s", t->outro);
}

int tool_main(const struct tool *t, int argc, char **argv)
{
	bool help = argc >= 2 && strcmp(argv[1], "help") == 0;
	const char *name = help ? argv[2] : argv[1];

	if (argc < 2) {
		usage(t, stderr);
		return 1;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || (help && argc < 3)) {
		usage(t, stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("%s %s\n", t->prog, PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < t->ncmds; i++) {
		if (strcmp(t->cmds[i]->name, name) != 0)
			continue;
		if (help) {
			char *args[] = { argv[2], (char *)"--help", NULL };

			return t->cmds[i]->exec(2, args);
		}
		return t->cmds[i]->exec(argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help' for the list of commands.\n",
		t->prog, name, t->prog);
	return 1;
}
