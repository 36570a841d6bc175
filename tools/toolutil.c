/* SPDX-License-Identifier: MIT */
/*
 * toolutil.c - the dispatcher, the messages, sizes, the progress line,
 * the clock and the interruption flag of the tools (toolutil.h).
 *
 * tool_main() runs one command in this order, each step ending the run
 * with its exit status when it fails:
 *
 *   1. the options, read against the command's template (its own, then
 *      the shared ones, made one table) with getopt_long
 *      (opterr off: every message is ours); each value is typed and
 *      range-checked as it is read, so the first bad option is the one
 *      reported, and an option not given has the template's default;
 *      --help prints the command's help and ends the run;
 *   2. the number of positional arguments;
 *   3. the command's check of the values taken together;
 *   4. the target, opened by the tool in memory of ours;
 *   5. exec; then the target is closed, whatever happened.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toolutil.h"
#include "util/units.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* The tool tool_main runs, for its size example; and the name its messages begin with. */
static const struct tool *current;
static const char *progname = "sectorfs";

static const char *prog(void)
{
	return progname;
}

void tool_set_prog(const char *name)
{
	progname = name;
}

/* ---- messages ---- */

/* "PROG: " or "PROG CMD: " (cmd not NULL), then the message, on stderr. */
static void vsay(const struct tool_cmd *cmd, const char *fmt, va_list ap)
{
	if (cmd)
		fprintf(stderr, "%s %s: ", prog(), cmd->name);
	else
		fprintf(stderr, "%s: ", prog());
	vfprintf(stderr, fmt, ap);
}

void tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(NULL, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_cmd_error(const struct tool_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_die(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(NULL, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(rc);
}

int tool_usage_status(const struct tool_cmd *cmd)
{
	return cmd->usage_status ? cmd->usage_status : 1;
}

int tool_usage_error(const struct tool_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s %s %s\nTry '%s %s --help' for more.\n",
		prog(), cmd->name, cmd->usage, prog(), cmd->name);
	return tool_usage_status(cmd);
}

/* Report getopt's ':' or '?' for the option last seen in argv as a usage error. */
static int bad_option(const struct tool_cmd *cmd, int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return tool_usage_error(cmd, "option '%s' needs an argument", arg);
	if (optopt && strncmp(arg, "--", 2) != 0)
		return tool_usage_error(cmd, "unknown option '-%c'", optopt);
	return tool_usage_error(cmd, "unknown option '%s'", arg);
}

/* ---- sizes ---- */

int tool_parse_size(const struct tool_cmd *cmd, const char *what, const char *s, bool nonzero,
		    uint64_t *out)
{
	int rc = sfs_parse_size(s, out);

	if (rc == -ERANGE)
		tool_cmd_error(cmd, "size '%s' for %s is too large", s, what);
	else if (rc < 0)
		tool_cmd_error(cmd, "invalid size '%s' for %s: use a number of bytes, optionally followed "
			       "by K, M, G or T (e.g. %s)", s, what,
			       current && current->size_example ? current->size_example : "8G");
	else if (nonzero && *out == 0)
		tool_cmd_error(cmd, "%s must not be 0", what);
	return rc < 0 || (nonzero && *out == 0) ? -1 : 0;
}

const char *tool_fmt_size(uint64_t bytes, enum tool_size_style style, char *buf, size_t len)
{
	char s[32];

	if (style == TOOL_SIZE_EXACT) {
		sfs_format_size(bytes, s, sizeof(s));
		if (bytes >= 1024 && strspn(s, "0123456789") != strlen(s))
			snprintf(buf, len, "%s (%" PRIu64 " bytes)", s, bytes);
		else
			snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	} else if (sfs_format_iec(bytes, buf, len) < 0 && len) {
		buf[0] = '\0';
	}
	return buf;
}

/* ---- the command line ---- */

/* The option as the messages name it: "-s" when it has a letter, else "--size". */
static const char *opt_name(const struct tool_opt *o, char *buf, size_t len)
{
	if (o->letter)
		snprintf(buf, len, "-%c", o->letter);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

/* Read the argument of option o into v; 0, or -1 with the problem printed. */
static int parse_value(const struct tool_cmd *cmd, const struct tool_opt *o, const char *arg,
		       struct tool_value *v)
{
	char what[64], *end;

	v->set = true;
	v->arg = arg;
	opt_name(o, what, sizeof(what));
	switch (o->type) {
	case TOOL_SIZE:
		return tool_parse_size(cmd, what, arg, o->min > 0, &v->n);
	case TOOL_UINT:
		errno = 0;
		v->n = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-' || v->n < o->min || v->n > o->max) {
			tool_cmd_error(cmd, "invalid value '%s' for %s: give an integer from %lu to %lu",
				       arg, what, o->min, o->max);
			return -1;
		}
		return 0;
	case TOOL_SECONDS:
		errno = 0;
		v->secs = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(v->secs) || v->secs <= 0 || v->secs > 1e6) {
			tool_cmd_error(cmd, "invalid time '%s' for %s: give seconds, more than 0 "
				       "(e.g. 0.5 or 10)", arg, what);
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}

/* getopt_long's tables for cmd's template, with --help; the index of an option is its
 * val - 256 when it has no letter. */
static void make_getopt(const struct tool_cmd *cmd, struct option *lo, char *so)
{
	size_t n = 0, k = 0;

	so[k++] = ':';
	for (const struct tool_opt *o = cmd->opts; o && o->name; o++, n++) {
		lo[n] = (struct option){ o->name, o->type == TOOL_FLAG ? no_argument : required_argument,
					 NULL, o->letter ? o->letter : 256 + (int)n };
		if (o->letter) {
			so[k++] = o->letter;
			if (o->type != TOOL_FLAG)
				so[k++] = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	so[k++] = 'h';
	so[k] = '\0';
}

/* The template index of what getopt_long returned, or -1. */
static int opt_index(const struct tool_cmd *cmd, int c)
{
	int i = 0;

	for (const struct tool_opt *o = cmd->opts; o && o->name; o++, i++)
		if (o->letter ? c == o->letter : c == 256 + i)
			return i;
	return -1;
}

const struct tool_value *tool_opt(const struct tool_item *item, const char *name)
{
	int i = 0;

	for (const struct tool_opt *o = item->cmd->opts; o && o->name; o++, i++)
		if (strcmp(o->name, name) == 0)
			return &item->opt[i];
	return NULL;
}

const char *tool_opt_arg(const struct tool_item *item, const char *name)
{
	const struct tool_value *v = tool_opt(item, name);

	return v && v->set ? v->arg : NULL;
}

bool tool_opt_set(const struct tool_item *item, const char *name)
{
	const struct tool_value *v = tool_opt(item, name);

	return v && v->set;
}

static void print_cmd_help(const struct tool_cmd *cmd)
{
	printf("usage: %s %s %s\n\n%s", prog(), cmd->name, cmd->usage, cmd->help);
}

/* cmd as *flat, its template and its shared ones one table in opts (TOOL_MAX_OPTS + 1
 * entries); -1 (printed) when they are more than TOOL_MAX_OPTS options. */
static int flatten(const struct tool_cmd *cmd, struct tool_cmd *flat, struct tool_opt *opts)
{
	const struct tool_opt *tables[1 + TOOL_MAX_SHARED] = { cmd->opts };
	int n = 0;

	memcpy(tables + 1, cmd->shared, sizeof(cmd->shared));
	for (size_t k = 0; k < sizeof(tables) / sizeof(tables[0]); k++)
		for (const struct tool_opt *o = tables[k]; o && o->name; o++) {
			if (n == TOOL_MAX_OPTS) {
				tool_cmd_error(cmd, "more than %d options in the template", TOOL_MAX_OPTS);
				return -1;
			}
			opts[n++] = *o;
		}
	opts[n] = (struct tool_opt){ NULL };
	*flat = *cmd;
	flat->opts = opts;
	return 0;
}

/* The defaults of cmd's template into item, as if given but not set; -1 (printed) when a
 * default does not parse. */
static int set_defaults(const struct tool_cmd *cmd, struct tool_item *item)
{
	int i = 0;

	for (const struct tool_opt *o = cmd->opts; o && o->name; o++, i++) {
		if (o->def && parse_value(cmd, o, o->def, &item->opt[i]) < 0)
			return -1;
		item->opt[i].set = false;
	}
	return 0;
}

/* The options of cmd into item.  True to go on; false with *status the exit status (0 after
 * --help). */
static bool parse_options(const struct tool_cmd *cmd, int argc, char **argv, struct tool_item *item,
			  int *status)
{
	struct option lo[TOOL_MAX_OPTS + 2];
	char so[3 * TOOL_MAX_OPTS + 4];
	int c, i;

	make_getopt(cmd, lo, so);
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			print_cmd_help(cmd);
			*status = 0;
			return false;
		}
		if ((i = opt_index(cmd, c)) < 0) {
			*status = bad_option(cmd, c, argv);
			return false;
		}
		if (parse_value(cmd, &cmd->opts[i], optarg, &item->opt[i]) < 0) {
			*status = tool_usage_status(cmd);
			return false;
		}
	}
	return true;
}

/* The positional arguments, argv from optind, into item: 0, or the exit status of the usage
 * error (printed) when there are too few or too many. */
static int take_args(const struct tool_cmd *cmd, int argc, char **argv, struct tool_item *item)
{
	char names[256] = "";
	int want = 0;

	while (want < TOOL_MAX_ARGS && cmd->args[want])
		want++;
	item->args = argv + optind;
	item->nargs = argc - optind;
	if (item->nargs > want)
		return want ? tool_usage_error(cmd, "too many arguments") :
			tool_usage_error(cmd, "unexpected argument '%s'", item->args[0]);
	if (item->nargs == want)
		return 0;
	for (int a = item->nargs; a < want; a++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 a > item->nargs ? " and " : "", cmd->args[a]);
	return tool_usage_error(cmd, "missing %s", names);
}

/* Open the target of item's command (the tool allocates nothing: item->target is zeroed
 * memory of t->target_size bytes); 0 or the exit status. */
static int open_target(const struct tool *t, struct tool_item *item)
{
	if (!(item->target = calloc(1, t->target_size))) {
		tool_error("out of memory");
		return 1;
	}
	return t->open_target(item);
}

/* Steps 1 to 5 of the header comment, for the command whole with argv[0] its name. */
static int run(const struct tool *t, const struct tool_cmd *whole, int argc, char **argv)
{
	struct tool_opt opts[TOOL_MAX_OPTS + 1];
	struct tool_cmd flat;
	const struct tool_cmd *cmd = &flat;
	struct tool_item item = { .cmd = cmd };
	int rc = 0;

	if (flatten(whole, &flat, opts) < 0 || set_defaults(cmd, &item) < 0)
		return 1;
	if (!parse_options(cmd, argc, argv, &item, &rc) || (rc = take_args(cmd, argc, argv, &item)))
		return rc;
	if (cmd->data_size && !(item.data = calloc(1, cmd->data_size))) {
		tool_error("out of memory");
		return 1;
	}
	if (cmd->check)
		rc = cmd->check(cmd, &item);
	if (rc == 0 && cmd->target)
		rc = open_target(t, &item);
	if (rc == 0)
		rc = cmd->exec(cmd, &item);
	if (item.target)
		rc = t->close_target(&item, rc);
	free(item.target);
	free(item.data);
	return rc;
}

static void usage(const struct tool *t, FILE *f)
{
	int w = 0;

	for (size_t i = 0; t->cmds[i]; i++)
		if ((int)strlen(t->cmds[i]->name) > w)
			w = (int)strlen(t->cmds[i]->name);
	fprintf(f, "%s\ncommands:\n", t->intro);
	for (size_t i = 0; t->cmds[i]; i++)
		fprintf(f, "  %-*s  %s\n", w, t->cmds[i]->name, t->cmds[i]->summary);
	fprintf(f, "\noptions:\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n\n%s"
		"Run '%s COMMAND --help' for the options of a command; see %s(1).\n",
		t->outro, t->prog, t->prog);
}

int tool_main(const struct tool *t, int argc, char **argv)
{
	bool help = argc >= 2 && strcmp(argv[1], "help") == 0;
	const char *name = help ? argv[2] : argv[1];

	current = t;
	tool_set_prog(t->prog);
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
	for (size_t i = 0; t->cmds[i]; i++) {
		if (strcmp(t->cmds[i]->name, name) != 0)
			continue;
		if (help) {
			print_cmd_help(t->cmds[i]);
			return 0;
		}
		return run(t, t->cmds[i], argc - 1, argv + 1);
	}
	fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help' for the list of commands.\n",
		t->prog, name, t->prog);
	return 1;
}

/* ---- output ---- */

int tool_print_json(json_t *o, size_t flags)
{
	char *text = json_dumps(o, flags);

	json_decref(o);
	if (!text) {
		tool_error("out of memory");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}

/* ---- the progress line ---- */

#define REDRAW_NS 100000000ull
#define BAR_WIDTH 20

void tool_progress_start(struct tool_progress *p, FILE *f, uint64_t after_ns)
{
	memset(p, 0, sizeof(*p));
	p->f = f;
	p->tty = isatty(fileno(f));
	p->t0 = sfs_now_ns();
	p->after_ns = after_ns;
}

/* Is a redraw due at now (force: whatever the time since the last one)? */
static bool due(const struct tool_progress *p, uint64_t now, bool force)
{
	return p->tty && now - p->t0 >= p->after_ns && (force || !p->drawn || now - p->last >= REDRAW_NS);
}

/* Put text at the start of the line, after erase (the escape that clears it, or ""). */
static void put_line(struct tool_progress *p, uint64_t now, const char *erase, const char *text)
{
	fprintf(p->f, "\r%s%s", erase, text);
	fflush(p->f);
	p->drawn = true;
	p->last = now;
}

void tool_progress_draw(struct tool_progress *p, const char *fmt, ...)
{
	uint64_t now = sfs_now_ns();
	char text[512];
	va_list ap;

	if (!due(p, now, false))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	put_line(p, now, "\033[K", text);
}

void tool_progress_clear(struct tool_progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", p->f);
		fflush(p->f);
		p->drawn = false;
	}
}

void tool_progress_bar_start(struct tool_progress *p, const char *label)
{
	tool_progress_start(p, stdout, 0);
	p->label = label;
}

static void fmt_eta(double secs, char *buf, size_t len)
{
	unsigned long s = (unsigned long)(secs + 0.5);

	if (secs < 0 || secs > 360000)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%lu:%02lu", s / 60, s % 60);
}

/* The bar is as wide at every redraw: it needs no erasing. */
static void draw_bar(struct tool_progress *p, uint64_t now)
{
	double secs = (double)(now - p->t0) / 1e9, rate = secs > 0 ? (double)p->done / secs : 0;
	unsigned pct = p->total ? (unsigned)(p->done * 100 / p->total) : 100;
	unsigned fill = p->total ? (unsigned)(p->done * BAR_WIDTH / p->total) : BAR_WIDTH;
	char bar[BAR_WIDTH + 1], eta[32], text[128];

	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	if (p->done >= p->total)
		fmt_eta(secs, eta, sizeof(eta));
	else
		fmt_eta(rate > 0 ? (double)(p->total - p->done) / rate : -1, eta, sizeof(eta));
	snprintf(text, sizeof(text), "%-10s [%s] %3u%%  %8.1f MB/s  %s %-9s", p->label, bar, pct,
		 rate / 1e6, p->done >= p->total ? "took" : "ETA", eta);
	put_line(p, now, "", text);
}

int tool_progress_bar_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct tool_progress *p = ctx;
	uint64_t now;

	p->done = done;
	p->total = total;
	if (p->tty) {
		now = sfs_now_ns();
		if (due(p, now, done >= total))
			draw_bar(p, now);
	}
	return tool_interrupted ? 1 : 0;
}

void tool_progress_bar_end(struct tool_progress *p)
{
	if (p->tty && p->drawn) {
		if (!tool_interrupted && p->done >= p->total)
			draw_bar(p, sfs_now_ns());
		fputc('\n', p->f);
		fflush(p->f);
	}
}

/* ---- time and signals ---- */

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
