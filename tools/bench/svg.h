/* SPDX-License-Identifier: MIT */
/*
 * svg.h - grouped bar charts as standalone SVG files (svg.c), for the
 * --svg option of the sectorfs-bench experiments.
 *
 * A chart is a title, a y-axis label, categories along x (transfer sizes,
 * configurations, redo blocks) and up to SVG_MAX_SERIES bars in each,
 * one per series, with a legend.  A bar may carry a short label drawn
 * above it (an overhead, a wastage) or be marked instead of drawn (a size
 * the disk refused).  The y axis starts at 0 and ends at a round value
 * above the largest bar.
 */
#ifndef SFS_BENCH_SVG_H
#define SFS_BENCH_SVG_H

#include <stdbool.h>
#include <stdio.h>

#define SVG_MAX_SERIES 4
#define SVG_MAX_CATS 32

struct svg_chart {
	const char *title;
	char subtitle[256];                           /* "" for none */
	char ylabel[96];
	unsigned ncats, nseries;
	const char *series[SVG_MAX_SERIES];
	char cats[SVG_MAX_CATS][32];
	double v[SVG_MAX_CATS][SVG_MAX_SERIES];
	bool shown[SVG_MAX_CATS][SVG_MAX_SERIES];     /* false: no bar */
	char mark[SVG_MAX_CATS][SVG_MAX_SERIES][24];  /* drawn instead of a bar ("refused") */
	char label[SVG_MAX_CATS][SVG_MAX_SERIES][24]; /* drawn above the bar */
};

/* Empty c and give it its title and y-axis label (NULL: SVG_TEXT's), and the names of its
 * series, at most SVG_MAX_SERIES, ended by NULL. */
void svg_chart_init(struct svg_chart *c, const char *title, const char *ylabel, ...)
	__attribute__((sentinel));

/* Write what fmt makes into text, one of c's texts (c->subtitle, c->ylabel, a category). */
#define SVG_TEXT(text, ...) snprintf((text), sizeof(text), __VA_ARGS__)

/* Show the bar of series s in category cat at v, with the label fmt makes above it (NULL:
 * none). */
void svg_bar(struct svg_chart *c, unsigned cat, unsigned s, double v, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Write chart c to path (replaced); 0, or -1 with the problem printed. */
int svg_write(const struct svg_chart *c, const char *path);

#endif
