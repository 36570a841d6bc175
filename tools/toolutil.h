/* SPDX-License-Identifier: MIT */
/*
 * toolutil.h - what the command-line tools share: the command table and
 * its dispatcher (one file per command, as tmux does it), a monotonic
 * clock and a Ctrl-C flag that long runs poll so they can stop cleanly.
 */
#ifndef SFS_TOOLUTIL_H
#define SFS_TOOLUTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* One command of a tool. */
struct tool_cmd {
	const char *name;
	const char *usage;      /* arguments, after "PROG NAME " */
	const char *summary;    /* one line for the tool's help */
	int (*exec)(int argc, char **argv);   /* argv[0] is the command name */
};

/* A tool: its commands and the text around their list in --help. */
struct tool {
	const char *prog;
	const char *intro;      /* before "commands:" */
	const char *outro;      /* after the list of commands and options */
	const struct tool_cmd *const *cmds;
	size_t ncmds;
};

/* Run the command argv[1] names (also -h/--help, -V/--version, "help CMD"); the exit status. */
int tool_main(const struct tool *t, int argc, char **argv);

/* Set to the signal number by SIGINT, SIGTERM or SIGHUP once tool_catch_signals() ran. */
extern volatile sig_atomic_t tool_interrupted;

/* Catch SIGINT, SIGTERM and SIGHUP into tool_interrupted (system calls restart). */
void tool_catch_signals(void);

/* Print "PROG: MESSAGE" on stderr. */
void tool_verror(const char *prog, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Print "PROG CMD: MESSAGE", the command's usage line and a pointer to --help; returns rc. */
int tool_vusage_error(const char *prog, const struct tool_cmd *cmd, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Report getopt's ':' or '?' for the option last seen in argv as a usage error; returns rc. */
int tool_bad_option(const char *prog, const struct tool_cmd *cmd, int rc, int opt, char **argv);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t tool_now_ns(void);

#endif
