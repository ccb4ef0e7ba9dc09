/* sort.h - the ascending order of doubles and of sizes, for qsort. */
#ifndef DDT_SORT_H
#define DDT_SORT_H

#include <stddef.h>
#include <stdlib.h>

/* qsort's comparison of two doubles: -1, 0 or 1 as *a is below, equal to or
 * above *b (a NaN compares equal to everything: sort only numbers). */
static inline int sort_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) ascending, as qsort with sort_cmp_double would (stable
 * too): a short array (a nightly window) by insertion, with no call per
 * comparison; a long one by qsort. */
static inline void sort_doubles(double *v, size_t n)
{
	if (n > 64) {
		qsort(v, n, sizeof *v, sort_cmp_double);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		for (; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The same for size_t. */
static inline int sort_cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

#endif
