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

void svg_chart_init(struct svg_chart *c, const char *title, const char *subtitle,
		    const char *ylabel, ...)
{
	const char *s;
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->title = title;
	c->subtitle = subtitle;
	c->ylabel = ylabel;
	va_start(ap, ylabel);
	while ((s = va_arg(ap, const char *)) && c->nseries < SVG_MAX_SERIES)
		c->series[c->nseries++] = s;
	va_end(ap);
}

int svg_write(const struct svg_chart *c, const char *path)
{
	double top = 0, pw = W - ML - MR, ph = H - MT - MB, gw, bw;
	FILE *f = fopen(path, "w");

	if (!f) {
		tool_error("%s: %s", path, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < c->ncats; i++)
		for (unsigned j = 0; j < c->nseries; j++)
			if (c->shown[i][j] && c->v[i][j] > top)
				top = c->v[i][j];
	top = nice_top(top * 1.08);
	gw = c->ncats ? pw / c->ncats : pw;
	bw = gw * 0.8 / (c->nseries ? c->nseries : 1);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H, W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", ML);
	put_text(f, c->title ? c->title : "");
	fputs("</text>\n", f);
	if (c->subtitle) {
		fprintf(f, "<text x=\"%d\" y=\"44\" fill=\"#555\">", ML);
		put_text(f, c->subtitle);
		fputs("</text>\n", f);
	}
	/* legend */
	for (unsigned j = 0; j < c->nseries; j++) {
		int x = W - MR - 150 * (int)(c->nseries - j);

		fprintf(f, "<rect x=\"%d\" y=\"50\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"60\">", x, colours[j], x + 16);
		put_text(f, c->series[j] ? c->series[j] : "");
		fputs("</text>\n", f);
	}
	/* y axis: 5 ticks with grid lines */
	for (int t = 0; t <= 5; t++) {
		double v = top * t / 5, y = MT + ph - ph * t / 5;

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.6g</text>\n",
			ML, y, W - MR, y, ML - 6, y + 4, v);
	}
	fprintf(f, "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">", MT + ph / 2);
	put_text(f, c->ylabel ? c->ylabel : "");
	fputs("</text>\n", f);
	/* bars */
	for (unsigned i = 0; i < c->ncats; i++) {
		double gx = ML + gw * i + gw * 0.1;

		for (unsigned j = 0; j < c->nseries; j++) {
			double x = gx + bw * j, h = c->shown[i][j] ? ph * c->v[i][j] / top : 0;

			if (c->mark[i][j][0]) {
				fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#a00\" "
					"transform=\"rotate(-90 %.1f %.1f)\">", x + bw / 2 + 3, MT + ph - 4,
					x + bw / 2 + 3, MT + ph - 4);
				put_text(f, c->mark[i][j]);
				fputs("</text>\n", f);
				continue;
			}
			if (!c->shown[i][j])
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
				x, MT + ph - h, bw * 0.92, h, colours[j]);
			if (c->label[i][j][0]) {
				fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">",
					x + bw * 0.46, MT + ph - h - 4);
				put_text(f, c->label[i][j]);
				fputs("</text>\n", f);
			}
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", ML + gw * i + gw / 2, MT + (int)ph + 18);
		put_text(f, c->cats[i]);
		fputs("</text>\n", f);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"black\"/>\n", ML, MT + ph, W - MR,
		MT + ph);
	fputs("</svg>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		tool_error("%s: cannot be written", path);
		return -1;
	}
	return 0;
}
