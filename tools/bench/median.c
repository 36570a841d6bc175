/* SPDX-License-Identifier: MIT */
/*
 * median.c - the median of a set of figures (median.h): sorted in place,
 * the middle value, or the mean of the two middle ones.
 */
#include <math.h>
#include <stdlib.h>

#include "median.h"

static int median_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(double *v, unsigned n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), median_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
