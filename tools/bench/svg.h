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

#define SVG_MAX_SERIES 4
#define SVG_MAX_CATS 32

struct svg_chart {
	const char *title, *subtitle, *ylabel;
	unsigned ncats, nseries;
	const char *series[SVG_MAX_SERIES];
	char cats[SVG_MAX_CATS][32];
	double v[SVG_MAX_CATS][SVG_MAX_SERIES];
	bool shown[SVG_MAX_CATS][SVG_MAX_SERIES];     /* false: no bar */
	char mark[SVG_MAX_CATS][SVG_MAX_SERIES][24];  /* drawn instead of a bar ("refused") */
	char label[SVG_MAX_CATS][SVG_MAX_SERIES][24]; /* drawn above the bar */
};

/* Empty c and give it its title, subtitle (may be NULL) and y-axis label, and the names of
 * its series, at most SVG_MAX_SERIES, ended by NULL. */
void svg_chart_init(struct svg_chart *c, const char *title, const char *subtitle,
		    const char *ylabel, ...) __attribute__((sentinel));

/* Write chart c to path (replaced); 0, or -1 with the problem printed. */
int svg_write(const struct svg_chart *c, const char *path);

#endif
