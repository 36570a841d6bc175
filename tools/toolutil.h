/* SPDX-License-Identifier: MIT */
/*
 * toolutil.h - what the command-line tools (sectorfs-img, sectorfs-bench,
 * and sectorfs-stat for the messages) share: the command table and the
 * dispatcher that does the work every command would otherwise do again,
 * the messages, sizes for people and for the command line, the progress
 * line, a monotonic clock and a Ctrl-C flag that long runs poll so they
 * can stop cleanly.
 *
 * A command is one table entry, as tmux's cmd_entry is one:
 *
 *   name, usage, summary, help     what --help and the usage errors print
 *   opts                           the option template: long name, short
 *                                  letter, type (flag, string, size,
 *                                  integer, seconds) and range
 *   shared                         templates several commands take (a
 *                                  tool's --json, its target's options),
 *                                  defined once, read after opts
 *   args                           the names of its positional arguments
 *   target                         what the tool opens before exec: an
 *                                  image, a locked store, a disk, a mount
 *   check                          optional: validate the parsed values
 *                                  together, before the target is opened
 *   exec(self, item)               the work; item holds the options, the
 *                                  arguments and the target
 *
 * tool_main() parses the options against the template (each value typed
 * and range-checked, with the same messages for every command), answers
 * --help and "help CMD", counts the arguments, calls check, asks the tool
 * to open the target, runs exec and closes the target, so that exec is
 * left with only the command's own job.
 */
#ifndef SFS_TOOLUTIL_H
#define SFS_TOOLUTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "util/clock.h"

#define TOOL_MAX_OPTS 16        /* options a command takes, --help not counted */
#define TOOL_MAX_SHARED 4       /* shared templates a command takes */
#define TOOL_MAX_ARGS 4         /* positional arguments a command takes */

/* ---- the command table ---- */

enum tool_opt_type {
	TOOL_FLAG,      /* no argument */
	TOOL_STRING,    /* the argument as given (arg) */
	TOOL_SIZE,      /* bytes or a number with K, M, G or T (n) */
	TOOL_UINT,      /* a decimal integer from min to max (n) */
	TOOL_SECONDS,   /* a finite number of seconds, more than 0, at most 10^6 (secs) */
};

/* One option of a command's template; a NULL name ends the template. */
struct tool_opt {
	const char *name;       /* the long option, without "--" */
	char letter;            /* the short option, or 0 for none */
	enum tool_opt_type type;
	unsigned long min, max; /* TOOL_UINT: the range; TOOL_SIZE: min 1 refuses 0 */
	const char *def;        /* the value when not given, as it would be given; or NULL */
};

/* What the command line gave an option (else its default, with set false). */
struct tool_value {
	bool set;
	const char *arg;        /* the argument as given (NULL for a flag) */
	uint64_t n;             /* TOOL_SIZE, TOOL_UINT */
	double secs;            /* TOOL_SECONDS */
};

struct tool_cmd;

/* One run of a command: what tool_main made of its command line. */
struct tool_item {
	const struct tool_cmd *cmd;
	struct tool_value opt[TOOL_MAX_OPTS];   /* by the option's index in cmd->opts, then
						 * in each of cmd->shared after them */
	char **args;                            /* the positional arguments, in order */
	int nargs;
	void *data;                             /* cmd->data_size bytes, zeroed: what check
						 * hands exec */
	void *target;                           /* what the tool's open_target made */
};

/* One command of a tool. */
struct tool_cmd {
	const char *name;
	const char *usage;                 /* arguments, after "PROG NAME " */
	const char *summary;               /* one line for the tool's help */
	const char *help;                  /* after the usage line of --help */
	const struct tool_opt *opts;       /* the option template (NULL: none but --help) */
	/* Templates shared with other commands, read as if opts went on with them (NULL: none;
	 * their values are found by name, tool_opt). */
	const struct tool_opt *shared[TOOL_MAX_SHARED];
	const char *args[TOOL_MAX_ARGS];   /* the names of the arguments, all required */
	int target;                        /* the tool's kind of target (0: none) */
	int usage_status;                  /* exit status of usage errors (0: 1) */
	size_t data_size;                  /* of item->data */
	/* Validate what was parsed before the target is opened: 0, or the exit status. */
	int (*check)(const struct tool_cmd *self, struct tool_item *item);
	/* The command's work: the exit status. */
	int (*exec)(const struct tool_cmd *self, struct tool_item *item);
};

/* Define the command VAR: its name, its usage and its summary (what the tool's --help
 * lists), then, as designated initializers, the fields it sets of the others. */
#define TOOL_CMD(var, name_, usage_, summary_, ...) \
	const struct tool_cmd var = { .name = (name_), .usage = (usage_), .summary = (summary_), \
				      __VA_ARGS__ }

/* A tool: its commands, the text around their list in --help, and its targets. */
struct tool {
	const char *prog;
	const char *intro;      /* before "commands:" */
	const char *outro;      /* after the list of commands and options, before the
				 * pointer to "PROG COMMAND --help" and PROG(1) */
	const char *size_example;   /* in the message for an invalid size: "8G" */
	const struct tool_cmd *const *cmds;     /* ended by NULL */
	size_t target_size;     /* of the struct item->target points to */
	/* Open item->cmd->target (not 0) into item->target, zeroed memory of target_size
	 * bytes: 0, or the exit status (printed). */
	int (*open_target)(struct tool_item *item);
	/* Close what open_target opened (also after it failed); the exit status, given rc,
	 * the command's so far (a close that fails is printed).  tool_main frees the memory. */
	int (*close_target)(struct tool_item *item, int rc);
};

/* Run the command argv[1] names (also -h/--help, -V/--version, "help CMD"); the exit status. */
int tool_main(const struct tool *t, int argc, char **argv);

/* Define the program's main(): tool_main of the tool whose fields follow, as designated
 * initializers. */
#define TOOL_MAIN(...) \
	static const struct tool tool_main_tool = { __VA_ARGS__ }; \
	int main(int argc, char **argv) \
	{ \
		return tool_main(&tool_main_tool, argc, argv); \
	}

/* What the command line gave the option of item's command with the long name name; NULL
 * when the command has no such option (a target's options are found by name, as tmux finds
 * a target by its flag). */
const struct tool_value *tool_opt(const struct tool_item *item, const char *name);

/* The argument the command line gave the option name, or NULL when it gave none (or the
 * command has no such option). */
const char *tool_opt_arg(const struct tool_item *item, const char *name);

/* Whether the command line gave the option name. */
bool tool_opt_set(const struct tool_item *item, const char *name);

/* ---- messages (the tool is the one tool_main runs, or the one tool_set_prog names) ---- */

/* Name the tool the messages come from, for a tool without commands that does not run
 * tool_main (sectorfs-stat). */
void tool_set_prog(const char *prog);

/* "PROG: MESSAGE" on stderr. */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "PROG: MESSAGE" on stderr, then exit with status rc: for a tool whose every error ends the
 * run (sectorfs-stat). */
void tool_die(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* "PROG CMD: MESSAGE" on stderr. */
void tool_cmd_error(const struct tool_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PROG CMD: MESSAGE", the usage line and a pointer to --help on stderr; returns the
 * command's usage status. */
int tool_usage_error(const struct tool_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The command's exit status for usage errors. */
int tool_usage_status(const struct tool_cmd *cmd);

/* ---- sizes ---- */

/* Parse s, a size given for what ("-s", "SIZE"), refusing 0 when nonzero.  0, or -1 with
 * "PROG CMD: invalid size ..." printed. */
int tool_parse_size(const struct tool_cmd *cmd, const char *what, const char *s, bool nonzero,
		    uint64_t *out);

enum tool_size_style {
	TOOL_SIZE_EXACT,    /* "8M (8388608 bytes)", "1000 bytes": the value to the byte
			     * (core's sfs_format_size, and the bytes) */
	TOOL_SIZE_IEC,      /* "512 B", "4 KiB", "8 MiB"; others as "1.5 KiB" (core's
			     * sfs_format_iec) */
};

/* bytes as text for people, in style, printed by core's units.h; returns buf ("" when it
 * does not fit in len). */
const char *tool_fmt_size(uint64_t bytes, enum tool_size_style style, char *buf, size_t len);

/* ---- output ---- */

/* Print o on stdout as json_dumps(o, flags) makes it, then a newline, and drop o; 0, or 1
 * (printed) when it cannot be made. */
int tool_print_json(json_t *o, size_t flags);

/* ---- the progress line ---- */

/*
 * One line redrawn in place on a terminal, at most ten times a second:
 * nothing is drawn when the stream is not a terminal (a script reading
 * our output gets the results and nothing else), nor before after_ns
 * since the start.  Two uses: a free-form status line
 * (tool_progress_draw), and a bar for the core's long operations
 * (tool_progress_bar_cb, an sfs_progress_fn):
 *
 *   zeroing   [##########..........]  50%   812.3 MB/s  ETA 0:04
 *
 * MB/s is decimal megabytes per second since the start; the ETA divides
 * what is left by that rate.  The bar ends with a last 100% line.
 */
struct tool_progress {
	FILE *f;
	bool tty;               /* f is a terminal */
	bool drawn;             /* a line is on screen */
	uint64_t t0, last;      /* ns: the start, the last redraw */
	uint64_t after_ns;      /* draw nothing before t0 + after_ns */
	const char *label;      /* the bar's */
	uint64_t done, total;   /* the bar's */
};

/* Start the clock of a line on f, drawn once after_ns have passed. */
void tool_progress_start(struct tool_progress *p, FILE *f, uint64_t after_ns);

/* Redraw the line, erased first, with the text of fmt if it is due. */
void tool_progress_draw(struct tool_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Erase the line, if one was drawn, before results are printed. */
void tool_progress_clear(struct tool_progress *p);

/* Start a bar labelled label on stdout. */
void tool_progress_bar_start(struct tool_progress *p, const char *label);

/* sfs_progress_fn for a bar: redraws it when due; returns 1 once interrupted. */
int tool_progress_bar_cb(void *ctx, uint64_t done, uint64_t total);

/* Finish the bar: its last line when it completed, then a newline (if one was drawn). */
void tool_progress_bar_end(struct tool_progress *p);

/* ---- time and signals ---- */

/* Set to the signal number by SIGINT, SIGTERM or SIGHUP once tool_catch_signals() ran. */
extern volatile sig_atomic_t tool_interrupted;

/* Catch SIGINT, SIGTERM and SIGHUP into tool_interrupted (system calls restart). */
void tool_catch_signals(void);


#endif
