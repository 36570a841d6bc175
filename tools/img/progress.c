/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the progress bar of long operations, and Ctrl-C.
 *
 *   zeroing   [##########..........]  50%   812.3 MB/s  ETA 0:04
 *
 * The bar is drawn on stdout only when stdout is a terminal (a script
 * piping our output gets the result lines and nothing else), redrawn at
 * most ten times a second, and closed with a final 100% line.  MB/s is
 * decimal megabytes per second since the start; the ETA divides what is
 * left by that rate.
 *
 * SIGINT, SIGTERM and SIGHUP only set tool_interrupted; the progress
 * callback returns 1 once it is set, so the core operation stops between
 * two chunks with -ECANCELED and the command cleans up.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define BAR_WIDTH 20
#define REDRAW_NS 100000000ull

void img_progress_start(struct img_progress *p, const char *label)
{
	memset(p, 0, sizeof(*p));
	p->label = label;
	p->tty = isatty(STDOUT_FILENO);
	p->t0 = tool_now_ns();
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

static void draw(struct img_progress *p, uint64_t now)
{
	double secs = (double)(now - p->t0) / 1e9, rate = secs > 0 ? (double)p->done / secs : 0;
	unsigned pct = p->total ? (unsigned)(p->done * 100 / p->total) : 100;
	unsigned fill = p->total ? (unsigned)(p->done * BAR_WIDTH / p->total) : BAR_WIDTH;
	char bar[BAR_WIDTH + 1], eta[32];

	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	if (p->done >= p->total)
		fmt_eta(secs, eta, sizeof(eta));
	else
		fmt_eta(rate > 0 ? (double)(p->total - p->done) / rate : -1, eta, sizeof(eta));
	printf("\r%-10s [%s] %3u%%  %8.1f MB/s  %s %-9s", p->label, bar, pct, rate / 1e6,
	       p->done >= p->total ? "took" : "ETA", eta);
	fflush(stdout);
	p->drawn = true;
	p->last = now;
}

int img_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct img_progress *p = ctx;
	uint64_t now;

	p->done = done;
	p->total = total;
	if (p->tty) {
		now = tool_now_ns();
		if (!p->drawn || now - p->last >= REDRAW_NS || done >= total)
			draw(p, now);
	}
	return tool_interrupted ? 1 : 0;
}

void img_progress_end(struct img_progress *p)
{
	if (p->tty && p->drawn) {
		if (!tool_interrupted && p->done >= p->total)
			draw(p, tool_now_ns());
		putchar('\n');
		fflush(stdout);
	}
}
