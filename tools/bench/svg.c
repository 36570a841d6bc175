/* SPDX-License-Identifier: MIT */
/*
 * svg.c - grouped bar charts as standalone SVG (svg.h).
 *
 *    title
 *    subtitle                                  [] series 0  [] series 1
 *  y |        _
 *    |   _   | |  _                  bars of one category side by side,
 *    |  | |  | | | |   refused       a label above each bar, a mark where
 *    +--+-+--+-+-+-+---------        a bar is not drawn
 *       cat 0   cat 1   cat 2
 *
 * Plain SVG 1.1: rect, line and text elements, no script, no external
 * resources, text escaped, so any renderer (rsvg-convert, a browser) draws
 * it the same.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "svg.h"

#define W 900
#define H 460
#define ML 80      /* margins: left, right, top, bottom */
#define MR 20
#define MT 70
#define MB 70

static const char *const colours[SVG_MAX_SERIES] = { "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1" };

/* Text with &, <, > and " escaped. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A round top for the y axis at or above v: 1, 2 or 5 times a power of ten. */
static double nice_top(double v)
{
	double p, m;

	if (!(v > 0) || !isfinite(v))
		return 1;
	p = pow(10, floor(log10(v)));
	m = v / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void svg_chart_init(struct svg_chart *c, const char *title, const char *ylabel, ...)
{
	const char *s;
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->title = title;
	if (ylabel)
		SVG_TEXT(c->ylabel, "%s", ylabel);
	va_start(ap, ylabel);
	while ((s = va_arg(ap, const char *)) && c->nseries < SVG_MAX_SERIES)
		c->series[c->nseries++] = s;
	va_end(ap);
}

void svg_bar(struct svg_chart *c, unsigned cat, unsigned s, double v, const char *fmt, ...)
{
	va_list ap;

	c->v[cat][s] = v;
	c->shown[cat][s] = true;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(c->label[cat][s], sizeof(c->label[0][0]), fmt, ap);
		va_end(ap);
	}
}

/* The text of an element opened by the caller, escaped, and its end tag. */
static void put_text_end(FILE *f, const char *s)
{
	put_text(f, s ? s : "");
	fputs("</text>\n", f);
}

/* Where the chart is drawn: the y axis's top value, the plot's size, a category's and a bar's
 * width. */
struct frame {
	double top, pw, ph, gw, bw;
};

static struct frame frame_of(const struct svg_chart *c)
{
	struct frame fr = { 0, W - ML - MR, H - MT - MB, 0, 0 };

	for (unsigned i = 0; i < c->ncats; i++)
		for (unsigned j = 0; j < c->nseries; j++)
			if (c->shown[i][j] && c->v[i][j] > fr.top)
				fr.top = c->v[i][j];
	fr.top = nice_top(fr.top * 1.08);
	fr.gw = c->ncats ? fr.pw / c->ncats : fr.pw;
	fr.bw = fr.gw * 0.8 / (c->nseries ? c->nseries : 1);
	return fr;
}

/* The document's start, the title and subtitle, and the legend. */
static void draw_head(FILE *f, const struct svg_chart *c)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H, W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", ML);
	put_text_end(f, c->title);
	if (c->subtitle[0]) {
		fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#555\">", ML);
		put_text_end(f, c->subtitle);
	}
	/* right-aligned, each entry as wide as its name (about 7 px a character at 12 px), at
	 * least 150 px */
	int x = W - MR;

	for (unsigned j = 0; j < c->nseries; j++) {
		int w = 16 + 7 * (int)strlen(c->series[j]) + 20;

		x -= w < 150 ? 150 : w;
	}
	for (unsigned j = 0; j < c->nseries; j++) {
		int w = 16 + 7 * (int)strlen(c->series[j]) + 20;

		fprintf(f, "<rect x=\"%d\" y=\"50\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"60\">", x, colours[j], x + 16);
		put_text_end(f, c->series[j]);
		x += w < 150 ? 150 : w;
	}
}

/* The y axis: 5 ticks with grid lines, and its label. */
static void draw_y_axis(FILE *f, const struct svg_chart *c, const struct frame *fr)
{
	for (int t = 0; t <= 5; t++) {
		double v = fr->top * t / 5, y = MT + fr->ph - fr->ph * t / 5;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n",
			ML, y, W - MR, y, ML - 6, y + 4, v);
	}
	fprintf(f, "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">", MT + fr->ph / 2);
	put_text_end(f, c->ylabel);
}

/* Bar j of category i, its label above it, or its mark instead. */
static void draw_bar(FILE *f, const struct svg_chart *c, const struct frame *fr, unsigned i, unsigned j)
{
	double x = ML + fr->gw * i + fr->gw * 0.1 + fr->bw * j;
	double h = c->shown[i][j] ? fr->ph * c->v[i][j] / fr->top : 0, base = MT + fr->ph;

	if (c->mark[i][j][0]) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#a00\" "
			"transform=\"rotate(-90 %.1f %.1f)\">", x + fr->bw / 2 + 3, base - 4,
			x + fr->bw / 2 + 3, base - 4);
		put_text_end(f, c->mark[i][j]);
		return;
	}
	if (!c->shown[i][j])
		return;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
		x, base - h, fr->bw * 0.92, h, colours[j]);
	if (c->label[i][j][0]) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">",
			x + fr->bw * 0.46, base - h - 4);
		put_text_end(f, c->label[i][j]);
	}
}

/* Each category's bars side by side and its name below them, then the x axis. */
static void draw_bars(FILE *f, const struct svg_chart *c, const struct frame *fr)
{
	for (unsigned i = 0; i < c->ncats; i++) {
		for (unsigned j = 0; j < c->nseries; j++)
			draw_bar(f, c, fr, i, j);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", ML + fr->gw * i + fr->gw / 2,
			MT + (int)fr->ph + 18);
		put_text_end(f, c->cats[i]);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, MT + fr->ph,
		W - MR, MT + fr->ph);
}

int svg_write(const struct svg_chart *c, const char *path)
{
	struct frame fr = frame_of(c);
	FILE *f = fopen(path, "w");

	if (!f) {
		tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	draw_head(f, c);
	draw_y_axis(f, c, &fr);
	draw_bars(f, c, &fr);
	fputs("</svg>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		tool_error("%s: cannot be written", path);
		return -1;
	}
	return 0;
}
